// What a round fetches and holds of its revisions' templates (decision 81), through RevisionStore
// and a KubeClient whose json() records each request (as test/chart/rbac.test.ts does), and what the
// planner does with a pod whose template the round does not hold: it waits, and the round asks for
// it; it is never recreated for want of it. The reviewer's cases of issue 47 item 3: 100 paused
// pods each on its own revision of a 1.37 MB template; pods that ended on their own revisions.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../../src/api/types.js';
import type { Pod, PodTemplate, WireCloneSet } from '../../../src/api/wire.js';
import type { PlanInput } from '../../../src/workload/pure/plan-input.js';
import { planReconcile } from '../../../src/workload/pure/planner.js';
import { RevisionStore, trimRevision } from '../../../src/workload/revision-store.js';
import type { ControllerRevision } from '../../../src/api/revision.js';
import {
  REVISIONS_IN_USE_CAP,
  ROUND_TEMPLATE_CHARS,
  UNKNOWN_TEMPLATE_CHARS,
} from '../../../src/workload/pure/round-templates.js';
import type { Informer } from '../../../src/runtime/informer.js';
import type { RequestOptions } from '../../../src/runtime/kube-client.js';
import { clientAnswering, storedRevision } from '../../support/fixtures/revisions.js';
import {
  NEW,
  NOW,
  OLD,
  TEMPLATES,
  cloneSet,
  intentsOf,
  pod,
  type CloneSetSpec,
} from '../../support/fixtures/planner-fixtures.js';
import { CLONESET } from '../../../src/cloneset/kind.js';

const NS = 'ns';
/** One env value of about 1.37 MB, shared by every template so the test holds it once. */
const BIG = 'x'.repeat(1_370_000);
const template = (i: number): PodTemplate => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image: `app:v${i}`, env: [{ name: 'BIG', value: BIG }] }] },
});
const revName = (i: number): string => `web-r${i}`;
const stored = (i: number): ControllerRevision => storedRevision(revName(i), i + 1, template(i), NS);
const podOn = (i: number, phase: 'Running' | 'Succeeded' | 'Failed' = 'Running'): Pod => ({
  metadata: { name: `web-${i}`, labels: { [LABEL_CONTROLLER_REVISION_HASH]: revName(i) } },
  status: { phase },
});
/** The CloneSet at the template of revision `update`, its status naming revision `current`. */
const cloneSetAt = (update: number, current: number): WireCloneSet => ({
  apiVersion: 'apps.tailor.dev/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: NS, uid: 'cs-uid', generation: 1 },
  spec: {
    replicas: 100,
    selector: { matchLabels: { app: 'web' } },
    template: template(update),
    updateStrategy: { paused: true },
  },
  status: { currentRevision: revName(current) },
});

/** A RevisionStore over these revisions (cached as the informer caches them) whose client records each GET. */
function recording(revisions: readonly ControllerRevision[], cached = revisions.map(trimRevision)) {
  const gets: string[] = [];
  const byName = new Map(revisions.map((r) => [r.metadata?.name ?? '', r]));
  const client = clientAnswering(<T>(method: string, path: string, _options: RequestOptions = {}): Promise<T> => {
    if (method !== 'GET') throw new Error(`unexpected ${method} ${path}`);
    const name = path.split('/').pop() ?? '';
    gets.push(name);
    return Promise.resolve(byName.get(name) as T);
  });
  const informer = { byIndex: () => cached } as unknown as Informer<ControllerRevision>;
  return { store: new RevisionStore(client, CLONESET, informer), gets };
}

const heldChars = (templates: ReadonlyMap<string, PodTemplate>, update: string): number =>
  [...templates].filter(([name]) => name !== update).reduce((sum, [, t]) => sum + JSON.stringify(t).length, 0);

describe('a round holds its templates within the bound, whatever the pods run', () => {
  const revisions = Array.from({ length: 101 }, (_, i) => stored(i));

  it("the reviewer's case: 100 paused pods on 100 revisions of 1.37 MB fetch the current template, once, not 137 MB each round", async () => {
    const { store, gets } = recording(revisions);
    const pods = Array.from({ length: 100 }, (_, i) => podOn(i));
    const cs = cloneSetAt(100, 0);
    const round = await store.sync(cs, pods);
    if (round === 'collision') throw new Error('collision');
    expect(gets).toEqual([revName(0)]);
    expect([...round.templates.keys()].sort()).toEqual([revName(0), revName(100)]);
    expect(heldChars(round.templates, revName(100))).toBeLessThanOrEqual(ROUND_TEMPLATE_CHARS);
    expect(round.inUse).toBe(99);
    expect(round.deferred.size).toBe(99);
    // The next round fetches nothing: what it holds is in the cache.
    await store.sync(cs, pods);
    expect(gets).toEqual([revName(0)]);
  });

  it('the pods the rollout moves next (what a first plan asked for) are fetched, within the cap, and kept for the next round', async () => {
    const { store, gets } = recording(revisions);
    const pods = Array.from({ length: 100 }, (_, i) => podOn(i));
    const cs = cloneSetAt(100, 0);
    const wanted = Array.from({ length: 15 }, (_, i) => revName(i + 40));
    const round = await store.templatesFor(
      cs,
      pods,
      { updateRevision: revName(100), currentRevision: revName(0) },
      wanted,
    );
    expect(gets).toEqual([revName(0), ...wanted.slice(0, 10)]);
    expect(heldChars(round.templates, revName(100))).toBeLessThanOrEqual(ROUND_TEMPLATE_CHARS);
    expect(round.deferred.has(revName(44))).toBe(false);
    expect(round.deferred.has(revName(54))).toBe(true);
    await store.templatesFor(cs, pods, { updateRevision: revName(100), currentRevision: revName(0) }, wanted);
    expect(gets).toHaveLength(11);
  });

  it("up to the cap, every live pod's template is held, once", async () => {
    const { store, gets } = recording(revisions);
    const pods = Array.from({ length: 10 }, (_, i) => podOn(i + 1));
    const round = await store.sync(cloneSetAt(100, 0), pods);
    if (round === 'collision') throw new Error('collision');
    expect(round.deferred.size).toBe(0);
    expect(new Set(gets)).toEqual(new Set(Array.from({ length: 11 }, (_, i) => revName(i))));
    expect(gets).toHaveLength(11);
  });

  it('pods that ended (Succeeded, Failed) leave their revisions: none of theirs is fetched or held', async () => {
    const { store, gets } = recording(revisions);
    const pods = [...Array.from({ length: 99 }, (_, i) => podOn(i + 1, i % 2 ? 'Succeeded' : 'Failed')), podOn(100)];
    const round = await store.sync(cloneSetAt(100, 0), pods);
    if (round === 'collision') throw new Error('collision');
    expect(gets).toEqual([revName(0)]);
    expect(round.inUse).toBe(0);
    expect(round.deferred.size).toBe(0);
  });
});

describe('RevisionStore, for any pods over any revisions (ended or not) and template sizes', () => {
  it('fetches within the cap and the bound, never for an ended pod, and nothing again the next round', async () => {
    const phase = fc.constantFrom<'Running' | 'Succeeded' | 'Failed'>('Running', 'Succeeded', 'Failed');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ revision: fc.nat(29), phase }), { maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: UNKNOWN_TEMPLATE_CHARS }), { minLength: 31, maxLength: 31 }),
        async (specs, sizes) => {
          // Small stored templates, cached with the sizes drawn: what a round decides on.
          const revisions = Array.from({ length: 31 }, (_, i) => ({ ...stored(i), data: { template: {} } }));
          const cached = revisions.map((r, i) => ({ ...trimRevision(r), templateChars: sizes[i]! }));
          const { store, gets } = recording(revisions, cached);
          const pods = specs.map((s) => podOn(s.revision, s.phase));
          // Every template is {} here: the CloneSet's equals the newest revision's, r30.
          const cs = { ...cloneSetAt(30, 0), spec: { ...cloneSetAt(30, 0).spec, template: {} } };
          await store.sync(cs, pods);
          const fetched = gets.map((name) => Number(name.slice('web-r'.length)));
          expect(fetched.reduce((sum, i) => sum + sizes[i]!, 0)).toBeLessThanOrEqual(ROUND_TEMPLATE_CHARS);
          expect(fetched.filter((i) => i !== 0).length).toBeLessThanOrEqual(REVISIONS_IN_USE_CAP);
          const live = new Set(specs.filter((s) => s.phase === 'Running').map((s) => s.revision));
          for (const i of fetched) expect(i === 0 || live.has(i)).toBe(true);
          const first = gets.length;
          await store.sync(cs, pods);
          expect(gets).toHaveLength(first);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('the planner and a pod whose template the round does not hold', () => {
  const plan = (spec: CloneSetSpec, pods: Pod[], deferred: string[], inUse = deferred.length) => {
    const input: PlanInput = {
      cloneSet: cloneSet(spec),
      pods,
      revisions: {
        updateRevision: NEW,
        currentRevision: OLD,
        templates: new Map([
          [OLD, TEMPLATES.old],
          [NEW, TEMPLATES.image],
        ]),
        deferred: new Set(deferred),
        inUse,
      },
      now: NOW,
      resizeBackend: 'kubelet',
      nodeEvidence: new Map(),
    };
    return planReconcile(input);
  };
  const onOther = (name: string): Pod => pod({ name, revision: 'web-other' });

  it('waits, never recreated for want of it; the round asks for its template and looks again', () => {
    const out = plan(
      { replicas: 2, maxUnavailable: 2, type: 'ReCreate' },
      [onOther('a'), pod({ name: 'b' })],
      ['web-other'],
    );
    expect(intentsOf(out, 'delete').map((i) => i.pod.metadata?.name)).toEqual(['b']);
    expect(out.templatesWanted).toEqual(['web-other']);
    expect(out.wakeAt).toBeDefined();
  });

  it('a picked pod never scheduled is replaced without its template, and asks for none', () => {
    const unscheduled = pod({ name: 'a', revision: 'web-other', scheduled: false });
    const out = plan({ replicas: 1, maxUnavailable: 1 }, [unscheduled], ['web-other']);
    expect(intentsOf(out, 'delete').map((i) => i.reason)).toEqual(['ReplaceUnscheduled']);
    expect(out.templatesWanted).toBeUndefined();
  });

  it('an unknown revision (no such ControllerRevision) is still recreated, as before', () => {
    const out = plan({ replicas: 1, maxUnavailable: 1 }, [onOther('a')], []);
    expect(intentsOf(out, 'delete').map((i) => i.message)).toEqual(["the pod's revision is unknown"]);
    expect(out.templatesWanted).toBeUndefined();
  });

  it('past the cap, the CloneSet says so and what to do; under it, the condition is gone', () => {
    const paused = { replicas: 1, paused: true };
    const condition = (p: ReturnType<typeof plan>) => p.status.conditions?.find((c) => c.type === 'RevisionsInUse');
    expect(condition(plan(paused, [onOther('a')], ['web-other'], 11))).toMatchObject({
      status: 'True',
      reason: 'TooManyRevisions',
    });
    expect(condition(plan(paused, [onOther('a')], [], 10))).toBeUndefined();
    // A paused CloneSet plans no wanted template: nothing moves.
    expect(plan(paused, [onOther('a')], ['web-other'], 11).templatesWanted).toBeUndefined();
  });
});
