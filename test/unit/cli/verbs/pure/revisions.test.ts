// Tables for the pure side of `kubectl tailor history` and `undo`: which revisions a CloneSet
// owns and in what order, the one-line summary of what a revision changed, the history table,
// the revision undo picks (or refuses), and the patches the write verbs send.
import type { ControllerRevision } from '../../../../../src/api/revision.js';
import { describe, expect, it } from '@jest/globals';
import type { WireCloneSet, PodTemplate } from '../../../../../src/api/wire.js';
import {
  formatResources,
  historyRows,
  ownedRevisions,
  pausePatch,
  renderHistory,
  restartedAtValue,
  restartPatch,
  summariseDiff,
  undoPatch,
  undoTarget,
  type RevisionRecord,
} from '../../../../../src/cli/verbs/pure/revisions.js';
import { diffTemplates } from '../../../../../src/inplace/pure/diff.js';

const UID = 'uid-web';

interface TemplateOptions {
  image?: string;
  cpu?: string;
  env?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const template = (o: TemplateOptions = {}): PodTemplate => ({
  metadata: { labels: { app: 'web', ...o.labels }, ...(o.annotations ? { annotations: o.annotations } : {}) },
  spec: {
    containers: [
      {
        name: 'main',
        image: o.image ?? 'busybox:v1',
        resources: {
          requests: { cpu: o.cpu ?? '50m', memory: '32Mi' },
          limits: { cpu: o.cpu ?? '50m', memory: '32Mi' },
        },
        ...(o.env ? { env: [{ name: 'MODE', value: o.env }] } : {}),
      },
    ],
  },
});

const wireRevision = (
  name: string,
  revision: number,
  t: PodTemplate,
  owner = UID,
  controller = true,
): ControllerRevision => ({
  metadata: {
    name,
    ownerReferences: [
      { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: 'web', uid: owner, controller },
    ],
  },
  revision,
  data: { template: t },
});

const record = (revision: number, t: PodTemplate): RevisionRecord => ({
  name: `web-r${revision}`,
  revision,
  template: t,
});

const cloneSet = (
  spec: PodTemplate,
  status: { currentRevision?: string; updateRevision?: string } = {},
): WireCloneSet => ({
  metadata: { name: 'web', uid: UID, generation: 4 },
  spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: spec },
  status: { replicas: 2, ...status },
});

describe('ownedRevisions', () => {
  it('keeps only the revisions the CloneSet controls, ordered by revision number', () => {
    const items = [
      wireRevision('web-c', 3, template()),
      wireRevision('web-a', 1, template()),
      wireRevision('other-x', 2, template(), 'uid-other'),
      wireRevision('web-adopted', 2, template(), UID, false),
      wireRevision('web-b', 2, template()),
    ];
    expect(ownedRevisions(items, UID).map((r) => `${r.revision}:${r.name}`)).toEqual(['1:web-a', '2:web-b', '3:web-c']);
  });
});

describe('summariseDiff', () => {
  const cases: [string, PodTemplate, PodTemplate, string][] = [
    ['an image', template(), template({ image: 'busybox:v2' }), 'image main=busybox:v2'],
    [
      'a resize with requests equal to limits',
      template(),
      template({ cpu: '100m' }),
      'resources main cpu=100m memory=32Mi',
    ],
    [
      'a rolling restart, named once rather than per container and as an annotation',
      template(),
      template({ annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-23T21:00:00Z' } }),
      'restart (restartedAt 2026-11-23T21:00:00Z)',
    ],
    [
      'the restart annotation removed (an undo past a restart)',
      template({ annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-23T21:00:00Z' } }),
      template(),
      'restart (kubectl.kubernetes.io/restartedAt removed)',
    ],
    [
      'labels added and removed',
      template({ labels: { tier: 'a' } }),
      template({ labels: { track: 'b' } }),
      'labels track=b, -tier',
    ],
    ['an annotation', template(), template({ annotations: { note: 'x' } }), 'annotations note=x'],
    ['a recreate-only field', template(), template({ env: 'fast' }), 'recreate: spec.containers[main].env'],
    [
      'several changes, in a fixed order',
      template(),
      template({ image: 'busybox:v2', cpu: '100m', labels: { v: '2' } }),
      'image main=busybox:v2; resources main cpu=100m memory=32Mi; labels v=2',
    ],
    ['nothing', template(), template(), 'no change'],
  ];
  it.each(cases)('summarises %s', (_, from, to, expected) => {
    expect(summariseDiff(diffTemplates(from, to))).toBe(expected);
  });

  it('names a container that restarts because its env reads a changed label', () => {
    const reads = (tier: string): PodTemplate => ({
      metadata: { labels: { app: 'web', tier } },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'busybox:v1',
            env: [{ name: 'TIER', valueFrom: { fieldRef: { fieldPath: "metadata.labels['tier']" } } }],
          },
        ],
      },
    });
    expect(summariseDiff(diffTemplates(reads('a'), reads('b')))).toBe(
      "restart main: env TIER reads metadata.labels['tier'], which changed; labels tier=b",
    );
  });
});

describe('formatResources', () => {
  it.each([
    [{ requests: { cpu: '1' }, limits: { cpu: '1' } }, 'cpu=1'],
    [
      { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } },
      'requests cpu=1 memory=1Gi, limits cpu=2 memory=1Gi',
    ],
    [{ requests: { cpu: '1' } }, 'requests cpu=1'],
  ])('formats %j as %s', (resources, expected) => {
    expect(formatResources(resources)).toBe(expected);
  });
});

describe('history table', () => {
  const revisions = [
    record(1, template()),
    record(2, template({ image: 'busybox:v2' })),
    record(3, template({ image: 'busybox:v2', cpu: '100m' })),
  ];

  it('lists every revision with its role and what it changed from the one before', () => {
    const cs = cloneSet(revisions[2]!.template, { currentRevision: 'web-r2', updateRevision: 'web-r3' });
    expect(renderHistory('web', historyRows(cs, revisions))).toEqual([
      'REVISION   NAME     STATUS    CHANGE',
      '1          web-r1   -         -',
      '2          web-r2   current   image main=busybox:v2',
      '3          web-r3   update    resources main cpu=100m memory=32Mi',
    ]);
  });

  it('says "current, update" when one revision is both', () => {
    const cs = cloneSet(revisions[0]!.template, { currentRevision: 'web-r1', updateRevision: 'web-r1' });
    expect(historyRows(cs, revisions.slice(0, 1))).toEqual([
      { revision: 1, name: 'web-r1', role: 'current, update', change: '' },
    ]);
  });

  it('says so when there is no revision yet', () => {
    expect(renderHistory('web', [])).toEqual([
      'clone "web" has no revisions yet (the controller records the first one when it sees the CloneSet)',
    ]);
  });
});

describe('undoTarget', () => {
  const v1 = template();
  const v2 = template({ image: 'busybox:v2' });
  const v3 = template({ image: 'busybox:v3' });
  const history = [record(1, v1), record(2, v2), record(3, v3)];
  const cases: [string, PodTemplate, RevisionRecord[], number | undefined, string][] = [
    ['the previous revision by default', v3, history, undefined, 'rollback 2'],
    ['the previous revision for --to-revision 0', v3, history, 0, 'rollback 2'],
    ['the revision asked for', v3, history, 1, 'rollback 1'],
    [
      'the newest recorded revision when the spec holds a template not recorded yet',
      template({ image: 'busybox:v4' }),
      history,
      undefined,
      'rollback 3',
    ],
    ['nothing when the spec already holds the revision asked for', v3, history, 3, 'unchanged 3'],
    ['the revision before the one the spec holds, not before the newest', v2, history, undefined, 'rollback 1'],
    [
      'a refusal for a revision that does not exist',
      v3,
      history,
      7,
      'refused revision 7 not found (revisions: 1, 2, 3)',
    ],
    [
      'a refusal when no revision precedes the current one',
      v1,
      history.slice(0, 1),
      undefined,
      'refused no revision before revision 1 to roll back to',
    ],
    [
      'a refusal when there is no revision at all',
      v1,
      [],
      undefined,
      'refused it has no revisions yet (the controller records them)',
    ],
  ];
  it.each(cases)('picks %s', (_, spec, revisions, to, expected) => {
    const choice = undoTarget(spec, revisions, to);
    expect(choice.kind === 'refused' ? `refused ${choice.message}` : `${choice.kind} ${choice.target.revision}`).toBe(
      expected,
    );
  });
});

describe('patches', () => {
  it('undo replaces the template whole, only at the generation it read', () => {
    expect(undoPatch(4, template())).toEqual([
      { op: 'test', path: '/metadata/generation', value: 4 },
      { op: 'replace', path: '/spec/template', value: template() },
    ]);
  });

  it('pause and resume set spec.updateStrategy.paused', () => {
    expect(pausePatch(true)).toEqual({ spec: { updateStrategy: { paused: true } } });
    expect(pausePatch(false)).toEqual({ spec: { updateStrategy: { paused: false } } });
  });

  it('restart writes restartedAt in RFC 3339 to the second, UTC', () => {
    const at = restartedAtValue(new Date('2026-11-23T21:50:20.789Z'));
    expect(at).toBe('2026-11-23T21:50:20Z');
    expect(restartPatch(at)).toEqual({
      spec: {
        template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-23T21:50:20Z' } } },
      },
    });
  });
});
