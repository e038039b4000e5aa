// The InPlaceStatefulSet's own status: apps/v1's currentReplicas counts the active pods at
// status.currentRevision (terminating and ended pods do not count, as in status.replicas), and the
// engine's fields are left as they were.
import { describe, expect, it } from '@jest/globals';
import { statefulStatus } from '../../../../src/inplacestatefulset/pure/status.js';
import type { CloneSetStatus } from '../../../../src/api/types.js';
import type { WireCloneSet } from '../../../../src/api/wire.js';
import type { PodSummary } from '../../../../src/workload/pure/pod-state.js';

const pod = (name: string, revision: string, extra: Partial<PodSummary> = {}): PodSummary => ({
  name,
  revision,
  nodeName: 'n1',
  phase: 'Running',
  ready: true,
  available: true,
  ...extra,
});

const set: WireCloneSet = { metadata: { name: 'web' }, spec: { replicas: 3, selector: {}, template: {} } };
const engine: CloneSetStatus = { replicas: 3, updatedReplicas: 1, currentRevision: 'web-1', updateRevision: 'web-2' };

describe('statefulStatus', () => {
  it.each([
    ['every pod at the current revision', [pod('a', 'web-1'), pod('b', 'web-1'), pod('c', 'web-1')], 3],
    ['one pod updated under a partition', [pod('a', 'web-2'), pod('b', 'web-1'), pod('c', 'web-1')], 2],
    ['a terminating pod does not count', [pod('a', 'web-1', { terminating: true }), pod('b', 'web-1')], 1],
    [
      'an ended pod does not count',
      [pod('a', 'web-1', { phase: 'Failed' }), pod('b', 'web-1', { phase: 'Succeeded' })],
      0,
    ],
    ['a pending, unready pod counts', [pod('a', 'web-1', { phase: 'Pending', ready: false, available: false })], 1],
    ['no pods', [], 0],
  ])('%s: currentReplicas %i', (_what, pods, currentReplicas) => {
    expect(statefulStatus(engine, pods, [], set)).toEqual({ ...engine, currentReplicas });
  });

  it('adds volumeClaims only when a claim template requests storage', () => {
    const withTemplate: WireCloneSet = {
      ...set,
      spec: {
        ...set.spec,
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '1Gi' } } } }],
      },
    };
    const claims = [{ metadata: { name: 'data-web-0' }, spec: { resources: { requests: { storage: '1Gi' } } } }];
    expect(statefulStatus(engine, [pod('web-0', 'web-1')], claims, withTemplate).volumeClaims).toEqual([
      { volumeClaimName: 'data', compatibleReplicas: 1, compatibleReadyReplicas: 0 },
    ]);
  });

  it('counts against the revision the engine promoted: once all are updated, the update revision is current', () => {
    const promoted = { ...engine, updatedReplicas: 2, currentRevision: 'web-2' };
    expect(statefulStatus(promoted, [pod('a', 'web-2'), pod('b', 'web-2')], [], set).currentReplicas).toBe(2);
  });
});
