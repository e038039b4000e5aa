// An InPlaceStatefulSet's scaling, as the native StatefulSet controller scales (OrderedReady and
// Parallel), through the kind's view: which ordinal a round creates, at which revision, which pod
// it removes, and that an ended pod comes back under its own name.
import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../../../src/api/wire.js';
import type { PodSummary } from '../../../../src/workload/pure/pod-state.js';
import { planOrdinalScale } from '../../../../src/inplacestatefulset/pure/scale.js';
import { statefulView } from '../../../../src/inplacestatefulset/pure/view.js';

type State = 'serving' | 'starting' | 'terminating' | 'failed' | 'specified' | 'specified-down';

function set(replicas: number, extra: Record<string, unknown> = {}): ReturnType<typeof statefulView> {
  return statefulView({
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'InPlaceStatefulSet',
    metadata: { name: 'db', namespace: 'ns', uid: 'u' },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      ...extra,
    },
  });
}

function podsOf(states: Record<number, State>): { pods: Pod[]; summaries: PodSummary[] } {
  const entries = Object.entries(states).map(([ordinal, state]) => ({ name: `db-${ordinal}`, state }));
  return {
    pods: entries.map(({ name, state }) => ({
      metadata: { name, ...(state === 'terminating' ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
      status: { phase: state === 'failed' ? 'Failed' : state === 'starting' ? 'Pending' : 'Running' },
    })),
    summaries: entries.map(({ name, state }) => ({
      name,
      revision: 'r',
      nodeName: 'n',
      phase: state === 'failed' ? 'Failed' : state === 'starting' ? 'Pending' : 'Running',
      ready: state === 'serving' || state === 'specified',
      available: state === 'serving' || state === 'specified',
      ...(state === 'terminating' ? { terminating: true } : {}),
      ...(state.startsWith('specified') ? { specifiedDelete: true } : {}),
    })),
  };
}

interface Limits {
  partition?: number;
  maxUnavailable?: number;
  scaleMaxUnavailable?: number;
}
const plan = (replicas: number, states: Record<number, State>, extra?: Record<string, unknown>, limits: Limits = {}) =>
  planOrdinalScale({
    workload: set(replicas, extra),
    ...podsOf(states),
    limits: { partition: 0, maxUnavailable: 1, maxSurge: 0, scaleMaxUnavailable: 2147483647, ...limits },
    now: 0,
  });

const PARALLEL = { podManagementPolicy: 'Parallel' };

describe('InPlaceStatefulSet scaling', () => {
  it.each([
    { case: 'OrderedReady creates ordinal 0 first', replicas: 3, states: {}, extra: {}, creates: ['0'] },
    { case: 'OrderedReady waits for a starting pod', replicas: 3, states: { 0: 'starting' }, extra: {}, creates: [] },
    {
      case: 'OrderedReady creates the next once the lower serve',
      replicas: 3,
      states: { 0: 'serving' },
      extra: {},
      creates: ['1'],
    },
    { case: 'a gap is filled first', replicas: 3, states: { 0: 'serving', 2: 'serving' }, extra: {}, creates: ['1'] },
    {
      case: 'Parallel creates every missing ordinal',
      replicas: 3,
      states: { 1: 'starting' },
      extra: PARALLEL,
      creates: ['0', '2'],
    },
    {
      case: 'ordinals.start',
      replicas: 2,
      states: {},
      extra: { ...PARALLEL, ordinals: { start: 3 } },
      creates: ['3', '4'],
    },
    {
      case: 'reserveOrdinals',
      replicas: 2,
      states: {},
      extra: { ...PARALLEL, reserveOrdinals: [0] },
      creates: ['1', '2'],
    },
    {
      case: 'a terminating pod keeps its name taken',
      replicas: 1,
      states: { 0: 'terminating' },
      extra: PARALLEL,
      creates: [],
    },
  ])('$case', ({ replicas, states, extra, creates }) => {
    const p = plan(replicas, states as Record<number, State>, extra);
    expect(p.createIds).toEqual(creates);
    expect(p.create).toBe(creates.length);
  });

  it.each([
    {
      case: 'OrderedReady removes the highest ordinal, one at a time',
      states: { 0: 'serving', 1: 'serving', 2: 'serving', 3: 'serving' },
      extra: {},
      deletes: ['db-3'],
    },
    {
      case: 'OrderedReady waits while a pod terminates',
      states: { 0: 'serving', 1: 'serving', 2: 'terminating', 3: 'serving' },
      extra: {},
      deletes: [],
    },
    {
      case: 'OrderedReady waits while a wanted pod does not serve',
      states: { 0: 'starting', 1: 'serving', 2: 'serving' },
      extra: {},
      deletes: [],
    },
    {
      case: 'OrderedReady halts while a condemned pod below the highest does not serve',
      states: { 0: 'serving', 1: 'serving', 2: 'starting', 3: 'starting' },
      extra: {},
      deletes: [],
    },
    {
      case: 'OrderedReady removes the highest when it is the lowest that does not serve',
      states: { 0: 'serving', 1: 'serving', 2: 'serving', 3: 'starting' },
      extra: {},
      deletes: ['db-3'],
    },
    {
      case: 'Parallel removes every surplus pod',
      states: { 0: 'serving', 1: 'starting', 2: 'serving', 3: 'starting' },
      extra: PARALLEL,
      deletes: ['db-3', 'db-2'],
    },
  ])('$case (replicas 2)', ({ states, extra, deletes }) => {
    const p = plan(2, states as Record<number, State>, extra);
    expect(p.delete).toEqual(deletes);
    expect(p.create).toBe(0);
  });

  it('an ended pod is deleted so that its name comes back, before anything else', () => {
    const p = plan(3, { 0: 'serving', 1: 'failed' });
    expect(p.replace).toEqual([{ name: 'db-1', why: 'ended' }]);
    expect(p.create).toBe(0);
  });

  it('new pods below the partition take the current revision, the others the update revision', () => {
    const p = plan(4, {}, PARALLEL, { partition: 2 });
    expect(p.createIds).toEqual(['0', '1', '2', '3']);
    expect(p.createAtCurrentRevision).toBe(2);
  });

  it('Parallel creates no more than scaleStrategy.maxUnavailable leaves, counting pods out of service', () => {
    const states: Record<number, State> = { 0: 'serving', 1: 'serving', 2: 'serving' };
    expect(plan(10, states, PARALLEL, { scaleMaxUnavailable: 2 }).createIds).toEqual(['3', '4']);
    expect(plan(10, { ...states, 2: 'starting' }, PARALLEL, { scaleMaxUnavailable: 2 }).createIds).toEqual(['3']);
  });

  it.each([
    {
      case: 'a serving pod labelled for deletion goes, highest first, within maxUnavailable',
      states: { 0: 'specified', 1: 'serving', 2: 'specified' },
      maxUnavailable: 1,
      replaced: ['db-2'],
    },
    {
      case: 'two go when maxUnavailable is 2',
      states: { 0: 'specified', 1: 'serving', 2: 'specified' },
      maxUnavailable: 2,
      replaced: ['db-2', 'db-0'],
    },
    {
      case: 'one already out of service goes without taking the budget',
      states: { 0: 'specified', 1: 'specified-down', 2: 'serving' },
      maxUnavailable: 1,
      replaced: ['db-1'],
    },
  ])('$case', ({ states, maxUnavailable, replaced }) => {
    const p = plan(3, states as Record<number, State>, {}, { maxUnavailable });
    expect(p.replace).toEqual(replaced.map((name) => ({ name, why: 'specified' })));
  });
});
