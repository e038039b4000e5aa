// The kubelet's resize order as a plan: memory before cpu, pod cgroup first when growing and last
// when shrinking, shrinking containers before growing ones; pod values from the containers.
import { describe, expect, test } from '@jest/globals';
import {
  planResize,
  podCgroupValues,
  type PlanStep,
  type PodCgroupContainer,
  type PodCgroupSpec,
  type PodCgroupValues,
} from '../../../../src/agent/pure/order.js';
import type { ContainerResources } from '../../../../src/resize/agent-protocol.js';

const Mi = 1024n * 1024n;
const r = (cpu: string, memory: string, limits?: [string, string]): ContainerResources => ({
  requests: { cpu, memory },
  ...(limits ? { limits: { cpu: limits[0], memory: limits[1] } } : {}),
});

/** A pod spec with these regular containers. */
const spec = (containers: Record<string, ContainerResources>, extra: Partial<PodCgroupSpec> = {}): PodCgroupSpec => ({
  containers: Object.entries(containers).map(([name, resources]) => ({ name, resources })),
  ...extra,
});
const init = (name: string, resources: ContainerResources, sidecar = false): PodCgroupContainer => ({
  name,
  resources,
  ...(sidecar ? { restartPolicy: 'Always' } : {}),
});

describe('podCgroupValues', () => {
  test.each<[string, PodCgroupSpec, Partial<PodCgroupValues>]>([
    [
      'every container limited: sums',
      spec({ a: r('100m', '64Mi', ['200m', '128Mi']), b: r('100m', '64Mi', ['300m', '64Mi']) }),
      { cpuShares: 204n, cpuQuota: 50_000n, memoryLimitInBytes: 192n * Mi },
    ],
    [
      'one container without limits: unlimited',
      spec({ a: r('100m', '64Mi', ['200m', '128Mi']), b: r('100m', '64Mi') }),
      { cpuShares: 204n, cpuQuota: -1n, memoryLimitInBytes: -1n },
    ],
    [
      'cpu limit everywhere, memory not',
      spec({ a: { limits: { cpu: '1' } }, b: { limits: { cpu: '1' }, requests: { memory: '1Mi' } } }),
      { cpuShares: 2048n, cpuQuota: 200_000n, memoryLimitInBytes: -1n },
    ],
    ['best effort: minimum shares', spec({ a: {} }), { cpuShares: 2n, cpuQuota: -1n, memoryLimitInBytes: -1n }],
    [
      'limit only: the request defaults to it',
      spec({ a: { limits: { cpu: '500m', memory: '1Mi' } } }),
      { cpuShares: 512n, cpuQuota: 50_000n, memoryLimitInBytes: Mi },
    ],
    [
      'RuntimeClass overhead adds to the requests and to the limits',
      spec({ a: r('100m', '128Mi', ['200m', '128Mi']) }, { overhead: { cpu: '50m', memory: '128Mi' } }),
      { cpuShares: 153n, cpuQuota: 25_000n, memoryLimitInBytes: 256n * Mi },
    ],
    [
      'overhead adds no limit to a pod without one',
      spec(
        { a: r('100m', '64Mi'), b: r('100m', '64Mi', ['100m', '64Mi']) },
        { overhead: { cpu: '100m', memory: '128Mi' } },
      ),
      { cpuShares: 307n, cpuQuota: -1n, memoryLimitInBytes: -1n },
    ],
    [
      'best effort with overhead: still the minimum shares',
      spec({ a: {} }, { overhead: { cpu: '250m', memory: '120Mi' } }),
      { cpuShares: 2n, cpuQuota: -1n, memoryLimitInBytes: -1n },
    ],
    [
      'a plain init container larger than the app containers sets the pod values',
      spec(
        { a: r('100m', '64Mi', ['200m', '128Mi']) },
        { initContainers: [init('setup', r('500m', '512Mi', ['1', '1Gi']))] },
      ),
      { cpuShares: 512n, cpuQuota: 100_000n, memoryLimitInBytes: 1024n * Mi },
    ],
    [
      'a smaller plain init container changes nothing',
      spec(
        { a: r('100m', '64Mi', ['200m', '128Mi']) },
        { initContainers: [init('setup', r('10m', '8Mi', ['20m', '16Mi']))] },
      ),
      { cpuShares: 102n, cpuQuota: 20_000n, memoryLimitInBytes: 128n * Mi },
    ],
    [
      'a plain init container without limits makes the pod unlimited',
      spec({ a: r('100m', '64Mi', ['200m', '128Mi']) }, { initContainers: [init('setup', r('10m', '8Mi'))] }),
      { cpuShares: 102n, cpuQuota: -1n, memoryLimitInBytes: -1n },
    ],
    [
      'a sidecar adds up like a regular container',
      spec(
        { a: r('100m', '64Mi', ['200m', '128Mi']) },
        { initContainers: [init('proxy', r('100m', '32Mi', ['100m', '32Mi']), true)] },
      ),
      { cpuShares: 204n, cpuQuota: 30_000n, memoryLimitInBytes: 160n * Mi },
    ],
    [
      'a plain init container runs with the sidecars started before it',
      spec(
        { a: r('100m', '64Mi', ['100m', '64Mi']) },
        {
          initContainers: [
            init('proxy', r('100m', '64Mi', ['100m', '64Mi']), true),
            init('setup', r('300m', '128Mi', ['300m', '128Mi'])),
          ],
        },
      ),
      // sidecar 100m/64Mi + init 300m/128Mi = 400m/192Mi > app + sidecar 200m/128Mi
      { cpuShares: 409n, cpuQuota: 40_000n, memoryLimitInBytes: 192n * Mi },
    ],
    [
      "a plain init container without limits counts the earlier sidecar's limits, as the kubelet does",
      spec(
        { a: r('100m', '64Mi', ['100m', '64Mi']) },
        { initContainers: [init('proxy', r('100m', '64Mi', ['100m', '64Mi']), true), init('setup', r('10m', '8Mi'))] },
      ),
      { cpuShares: 204n, cpuQuota: 20_000n, memoryLimitInBytes: 128n * Mi },
    ],
    [
      "pod-level resources replace the containers' totals; overhead still adds",
      spec(
        { a: r('100m', '64Mi'), b: r('100m', '64Mi') },
        {
          resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '2Gi' } },
          overhead: { memory: '128Mi' },
        },
      ),
      { cpuShares: 1024n, cpuQuota: 200_000n, memoryLimitInBytes: 2048n * Mi + 128n * Mi },
    ],
  ])('%s', (_, podSpec, want) => {
    expect(podCgroupValues(podSpec)).toMatchObject({ ...want, cpuPeriod: 100_000n });
  });

  test('the resized resources replace the spec of the containers they name', () => {
    const podSpec = spec({ a: r('100m', '64Mi', ['200m', '128Mi']), b: r('100m', '64Mi', ['100m', '64Mi']) });
    expect(podCgroupValues(podSpec, { a: r('300m', '256Mi', ['400m', '256Mi']) })).toMatchObject({
      cpuShares: 409n,
      cpuQuota: 50_000n,
      memoryLimitInBytes: 320n * Mi,
    });
  });
});

/** A compact view of a plan: "pod:memory", "c/app:cpu", … */
const shape = (steps: PlanStep[]): string[] =>
  steps.map((s) => (s.kind === 'pod' ? `pod:${s.resource}` : `c/${s.container}:${s.resource}`));

describe('planResize', () => {
  const small = { app: r('100m', '64Mi', ['200m', '128Mi']), side: r('100m', '64Mi', ['100m', '64Mi']) };
  const pod = (containers: Record<string, ContainerResources>): PodCgroupValues => podCgroupValues(spec(containers));

  test.each<[string, Record<string, ContainerResources>, Record<string, ContainerResources>, string[], string[]]>([
    [
      'grow both: pod first, memory before cpu',
      small,
      { ...small, app: r('200m', '128Mi', ['400m', '256Mi']) },
      ['app'],
      ['pod:memory', 'c/app:memory', 'pod:cpu', 'c/app:cpu'],
    ],
    [
      'shrink both: containers first, pod last',
      { ...small, app: r('200m', '128Mi', ['400m', '256Mi']) },
      small,
      ['app'],
      ['c/app:memory', 'pod:memory', 'c/app:cpu', 'pod:cpu'],
    ],
    [
      'memory grows, cpu shrinks',
      small,
      { ...small, app: r('50m', '128Mi', ['100m', '256Mi']) },
      ['app'],
      ['pod:memory', 'c/app:memory', 'c/app:cpu', 'pod:cpu'],
    ],
    [
      'cpu limit up, request down: raised values first, final ones last',
      small,
      { ...small, app: r('50m', '64Mi', ['400m', '128Mi']) },
      ['app'],
      ['c/app:memory', 'pod:cpu', 'c/app:cpu', 'pod:cpu'],
    ],
    [
      'one container shrinks, the other grows: the shrinking one first',
      small,
      { app: r('50m', '32Mi', ['100m', '64Mi']), side: r('200m', '128Mi', ['200m', '128Mi']) },
      ['app', 'side'],
      // pod memory limit stays 192Mi: no pod memory step
      ['c/app:memory', 'c/side:memory', 'pod:cpu', 'c/app:cpu', 'c/side:cpu'],
    ],
    [
      'nothing changes: container steps only (actuate skips them)',
      small,
      small,
      ['app'],
      ['c/app:memory', 'c/app:cpu'],
    ],
    [
      'unlimited pod (a container without limits): no pod limit steps for limits, shares still ordered',
      { app: r('100m', '64Mi'), side: r('100m', '64Mi', ['100m', '64Mi']) },
      { app: r('300m', '128Mi'), side: r('100m', '64Mi', ['100m', '64Mi']) },
      ['app'],
      ['c/app:memory', 'pod:cpu', 'c/app:cpu'],
    ],
  ])('%s', (_, current, desired, resize, want) => {
    expect(shape(planResize({ pod: spec(current), currentPod: pod(current), current, desired, resize }))).toEqual(want);
  });

  test('step values: pod raised then final, containers converted like the kubelet', () => {
    const desired = { ...small, app: r('50m', '64Mi', ['400m', '128Mi']) };
    const steps = planResize({ pod: spec(small), currentPod: pod(small), current: small, desired, resize: ['app'] });
    expect(steps[1]).toEqual({
      kind: 'pod',
      resource: 'cpu',
      values: { cpuShares: 204n, cpuQuota: 50_000n, cpuPeriod: 100_000n },
    });
    expect(steps[2]).toEqual({
      kind: 'container',
      resource: 'cpu',
      container: 'app',
      target: { cpuShares: 51n, cpuQuota: 40_000n, cpuPeriod: 100_000n },
    });
    expect(steps[3]).toEqual({
      kind: 'pod',
      resource: 'cpu',
      values: { cpuShares: 153n, cpuQuota: 50_000n, cpuPeriod: 100_000n },
    });
    expect(steps[0]).toEqual({
      kind: 'container',
      resource: 'memory',
      container: 'app',
      target: { memoryLimitInBytes: 128n * Mi, memorySwapLimitInBytes: 0n, unified: {} },
    });
  });

  test('the pod cgroup as read (not as computed) decides the direction', () => {
    const current = { ...small };
    const desired = { ...small, app: r('200m', '128Mi', ['400m', '256Mi']) };
    // A pod cgroup already above the target (e.g. set by a previous, larger resize): memory lowered last.
    const currentPod = { ...pod(current), memoryLimitInBytes: 1024n * Mi };
    expect(
      shape(planResize({ pod: spec(current), currentPod, current, desired, resize: ['app'] })).slice(0, 2),
    ).toEqual(['c/app:memory', 'pod:memory']);
  });

  test('swap on cgroup v1 is sent with the memory step', () => {
    const steps = planResize({
      pod: spec(small),
      currentPod: pod(small),
      current: small,
      desired: small,
      resize: ['app'],
      convert: { swapControllerAvailable: true },
    });
    expect(steps[0]).toMatchObject({ target: { memorySwapLimitInBytes: 128n * Mi } });
  });

  test('a cpu-only resize of a pod with RuntimeClass overhead leaves its pod memory limit alone', () => {
    const app = r('100m', '128Mi', ['200m', '128Mi']);
    const podSpec = spec({ app }, { overhead: { cpu: '50m', memory: '128Mi' } });
    const currentPod = podCgroupValues(podSpec);
    expect(currentPod.memoryLimitInBytes).toBe(256n * Mi);
    const desired = { app: r('200m', '128Mi', ['400m', '128Mi']) };
    const steps = planResize({ pod: podSpec, currentPod, current: { app }, desired, resize: ['app'] });
    expect(steps.filter((s) => s.kind === 'pod' && s.resource === 'memory')).toEqual([]);
    expect(steps.find((s) => s.kind === 'pod' && s.resource === 'cpu')).toEqual({
      kind: 'pod',
      resource: 'cpu',
      values: { cpuShares: 256n, cpuQuota: 45_000n, cpuPeriod: 100_000n },
    });
  });
});
