import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../../../src/api/wire.js';
import { trimPod } from '../../../../src/workload/pure/pod-cache.js';

const pod = (name: string, cpu: string, readySince: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'ns',
    ownerReferences: [
      { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'u1', controller: true },
    ],
  },
  spec: {
    containers: [{ name: 'app', image: 'busybox:1', resources: { requests: { cpu }, limits: { cpu } } }],
    readinessGates: [{ conditionType: 'apps.tailor.dev/InPlaceUpdateReady' }],
  },
  status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: readySince }] },
});

// A cached pod is JSON parsed from the wire: each one arrives with its own objects.
const received = (p: Pod): Pod => JSON.parse(JSON.stringify(p)) as Pod;

describe('trimPod keeps parts many pods repeat once', () => {
  it('pods with equal resources, gates, owners and conditions share one copy of each', () => {
    const a = trimPod(received(pod('a', '10m', '2026-01-01T00:00:00Z')));
    const b = trimPod(received(pod('b', '10m', '2026-01-01T00:00:00Z')));

    expect(b.spec?.containers[0]?.resources).toBe(a.spec?.containers[0]?.resources);
    expect(b.spec?.readinessGates).toBe(a.spec?.readinessGates);
    expect(b.metadata?.ownerReferences).toBe(a.metadata?.ownerReferences);
    expect(b.status?.conditions?.[0]).toBe(a.status?.conditions?.[0]);
  });

  it('parts that differ by any value stay apart, each equal to what was received', () => {
    const a = trimPod(received(pod('a', '10m', '2026-01-01T00:00:00Z')));
    const b = trimPod(received(pod('b', '20m', '2026-01-01T00:00:01Z')));

    expect(b.spec?.containers[0]?.resources).toEqual({ requests: { cpu: '20m' }, limits: { cpu: '20m' } });
    expect(a.spec?.containers[0]?.resources).toEqual({ requests: { cpu: '10m' }, limits: { cpu: '10m' } });
    expect(b.status?.conditions?.[0]?.lastTransitionTime).toBe('2026-01-01T00:00:01Z');
    expect(a.status?.conditions?.[0]?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
  });

  it('a shared part is frozen, so a write to a cached pod fails instead of changing other pods', () => {
    const a = trimPod(received(pod('a', '10m', '2026-01-01T00:00:00Z')));
    const limits = a.spec?.containers[0]?.resources?.limits as Record<string, string>;

    expect(() => {
      limits['cpu'] = '1';
    }).toThrow(TypeError);
    expect(trimPod(received(pod('b', '10m', '2026-01-01T00:00:00Z'))).spec?.containers[0]?.resources?.limits).toEqual({
      cpu: '10m',
    });
  });
});

// Issue 31.9: anyone who creates pods can set the instance-id label the informer selects by.
describe('trimPod keeps only the identity of a pod no CloneSet of ours controls', () => {
  const big = (owners: NonNullable<Pod['metadata']>['ownerReferences']): Pod => {
    const p = received(pod('x', '10m', '2026-01-01T00:00:00Z'));
    p.metadata = {
      ...p.metadata,
      uid: 'uid-x',
      resourceVersion: '7',
      ownerReferences: owners,
      labels: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`example.com/l${i}`, 'v'.repeat(63)])),
    };
    return p;
  };

  it.each<[string, NonNullable<Pod['metadata']>['ownerReferences']]>([
    ['no owner', undefined],
    [
      'owned by a Deployment',
      [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs1', controller: true }],
    ],
    [
      "owned by OpenKruise's CloneSet",
      [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'k1', controller: true }],
    ],
    [
      'a CloneSet of ours that is not its controller',
      [{ apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'u1' }],
    ],
  ])('%s: name, namespace, uid and resourceVersion only', (_name, owners) => {
    const trimmed = trimPod(big(owners));
    expect(trimmed).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'x', namespace: 'ns', uid: 'uid-x', resourceVersion: '7' },
    });
  });

  it('a pod a CloneSet of ours controls keeps its labels, spec and status', () => {
    const trimmed = trimPod(big(pod('x', '10m', '2026-01-01T00:00:00Z').metadata?.ownerReferences));
    expect(Object.keys(trimmed.metadata?.labels ?? {})).toHaveLength(2000);
    expect(trimmed.spec?.containers[0]?.name).toBe('app');
    expect(trimmed.status?.conditions).toHaveLength(1);
  });
});
