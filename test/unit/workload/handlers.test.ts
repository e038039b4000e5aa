// Which CloneSet keys a cache change wakes, and what it tells the expectations (issue 26.2): a
// status-only write wakes nothing unless a round waits for it; a pod wakes only its own CloneSet's
// key (of its namespace and of our group), and its creation, termination and deletion reach the
// scale expectations.
import { describe, expect, it } from '@jest/globals';
import {
  cloneSetHandler,
  onlyStatusChanged,
  POD_EVENT_WINDOW_MAX_MS,
  orphanHandler,
  podEventWindowMs,
  podHandler,
} from '../../../src/workload/handlers.js';
import type { KubeObject, Pod, WireCloneSet } from '../../../src/api/wire.js';
import { buildPod, cloneSetOwner } from '../../support/fixtures/pods.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../../src/runtime/expectations.js';
import { CLONESET_OWNER } from '../../../src/api/owner.js';

const meta = (over: Record<string, unknown> = {}): KubeObject => ({
  metadata: {
    namespace: 'ns',
    name: 'web',
    uid: 'cs-uid',
    resourceVersion: '1',
    generation: 1,
    labels: { a: '1' },
    ...over,
  },
});

describe('onlyStatusChanged', () => {
  it.each([
    ['a new resourceVersion and nothing else (a status write)', meta({ resourceVersion: '2' }), true],
    ['the same resourceVersion (a resync)', meta(), false],
    ['a new generation (a spec change)', meta({ resourceVersion: '2', generation: 2 }), false],
    ['a label change', meta({ resourceVersion: '2', labels: { a: '2' } }), false],
    ['a deletion starting', meta({ resourceVersion: '2', deletionTimestamp: '2026-01-01T00:00:00Z' }), false],
  ])('%s: %s', (_, next, expected) => {
    expect(onlyStatusChanged(meta(), next)).toBe(expected);
  });
});

describe('cloneSetHandler', () => {
  it('wakes the key on a spec change, not on a status write, unless a round waits to see that write', () => {
    const keys: string[] = [];
    const rvs = new ResourceVersionExpectations();
    const handler = cloneSetHandler({ add: (k) => void keys.push(k) }, rvs);
    const cs = (rv: string, generation = 1) => meta({ resourceVersion: rv, generation }) as WireCloneSet;
    handler.onUpdate?.(cs('1'), cs('2'));
    expect(keys).toEqual([]);
    rvs.expectResourceVersion('cs-uid', '3');
    handler.onUpdate?.(cs('2'), cs('3'));
    expect(keys).toEqual(['ns/web']);
    handler.onUpdate?.(cs('3'), cs('4', 2));
    expect(keys).toEqual(['ns/web', 'ns/web']);
  });
});

describe('podHandler', () => {
  const pod = (
    name: string,
    owner: { apiVersion: string; name: string } | undefined,
    over: Record<string, unknown> = {},
  ): Pod =>
    buildPod({
      name,
      uid: `uid-${name}`,
      ownerReferences: owner ? [{ ...cloneSetOwner(owner.name, 'cs-uid'), apiVersion: owner.apiVersion }] : [],
      metadata: { resourceVersion: '1', ...over },
    });
  const ours = { apiVersion: 'apps.tailor.dev/v1alpha1', name: 'web' };
  const setup = () => {
    const keys: string[] = [];
    const scale = new ScaleExpectations();
    const handler = podHandler(
      { add: (k) => void keys.push(k) },
      scale,
      new ResourceVersionExpectations(),
      CLONESET_OWNER,
    );
    return { keys, scale, handler };
  };

  it.each([
    ['a pod of our CloneSet wakes it', pod('web-a', ours), ['ns/web']],
    [
      "a pod of OpenKruise's CloneSet of the same name wakes nothing",
      pod('web-a', { apiVersion: 'apps.kruise.io/v1alpha1', name: 'web' }),
      [],
    ],
    ['an orphan wakes nothing', pod('lonely', undefined), []],
  ])('%s', (_, subject, expected) => {
    const { keys, handler } = setup();
    handler.onAdd?.(subject);
    expect(keys).toEqual(expected);
  });

  it('tells the scale expectations of a creation, a pod starting to terminate, and a deletion', () => {
    const { handler, scale } = setup();
    scale.expectCreations('ns/web', ['web-a']);
    handler.onAdd?.(pod('web-a', ours));
    expect(scale.satisfied('ns/web')).toBe(true);
    scale.expectDeletions('ns/web', ['web-a']);
    handler.onUpdate?.(
      pod('web-a', ours),
      pod('web-a', ours, { resourceVersion: '2', deletionTimestamp: '2026-01-01T00:00:00Z' }),
    );
    expect(scale.satisfied('ns/web')).toBe(true);
    scale.expectDeletions('ns/web', ['web-b']);
    handler.onDelete?.(pod('web-b', ours));
    expect(scale.satisfied('ns/web')).toBe(true);
  });

  it('wakes the old owner and the new one when a pod is released or adopted', () => {
    const { keys, handler } = setup();
    handler.onUpdate?.(pod('p', ours), pod('p', { ...ours, name: 'api' }, { resourceVersion: '2' }));
    expect(keys.sort()).toEqual(['ns/api', 'ns/web']);
  });
});

describe("a pod change's window before its CloneSet's round", () => {
  it.each([
    [0, 0],
    [10, 0.5],
    [100, 5],
    [1000, POD_EVENT_WINDOW_MAX_MS],
    [100_000, POD_EVENT_WINDOW_MAX_MS],
  ])('%i pods: %f ms', (pods, ms) => {
    expect(podEventWindowMs(pods)).toBeCloseTo(ms, 9);
  });
});

describe('orphanHandler', () => {
  const woken = (pod: Pod, update = false): string[] => {
    const keys: string[] = [];
    const handler = orphanHandler({ add: (k) => keys.push(k) }, () => ['ns/web']);
    if (update) handler.onUpdate?.(pod, pod);
    else handler.onAdd?.(pod);
    return keys;
  };

  it.each([
    ['an orphan added', buildPod({ labels: { app: 'web' } }), false, ['ns/web']],
    ['an orphan changed (its labels put back)', buildPod({ labels: { app: 'web' } }), true, ['ns/web']],
    ['a pod a controller owns', buildPod({ ownerReferences: [cloneSetOwner()] }), false, []],
  ])('%s wakes %j', (_what, pod, update, keys) => {
    expect(woken(pod, update)).toEqual(keys);
  });
});
