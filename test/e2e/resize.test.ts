// The story of docs/architecture.md §1 What Tailor does, for resources on a real kubelet (in-place resize on): editing a
// CloneSet's cpu/memory resizes its pods without a restart, the container cgroups take the
// kubelet-identical values, and status.resize shows every resize that outlasts the status writer's second and ends empty. A request
// the node can never fit is reported Infeasible and, with onInfeasible: Wait, blocks visibly.
import { describe, expect, it } from '@jest/globals';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import type { Pod } from '../../src/api/wire.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  patchTemplateAndWait,
  waitForCloneSet,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import {
  expectEveryResizeReported,
  NOTHING_RESIZING,
  resizeCounts,
  sampleResizesDuring,
} from '../support/cluster/resize-watch.js';
import { eventually, podCgroupFile, RESIZE_WITHOUT_RESTART, sizedContainer } from '../support/cluster/testbed.js';

const { client, ns } = controllerTestBed('resize-e2e');

const notRequired = { resizePolicy: RESIZE_WITHOUT_RESTART };
const container = (cpu: string, memory: string): Record<string, unknown> => sizedContainer(cpu, memory, notRequired);

describe('in-place resize through the kubelet', () => {
  it('resizes cpu 100m→200m and memory 64Mi→128Mi on 3 pods without a restart, cgroups included', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'web',
        { replicas: 3, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          containers: [container('100m', '64Mi')],
        },
      ),
    );
    await waitForReady(client, ns, 'web', 3, 120_000);
    const before = new Map((await activePods(client, ns, 'web')).map((p) => [p.metadata?.uid ?? '', p]));

    // Record status.resize as the user would watch it, beside the pods' own resizes.
    const samples = await sampleResizesDuring(
      async () => ({
        resize: (await readCloneSet(client, ns, 'web')).status?.resize,
        pods: await activePods(client, ns, 'web'),
      }),
      async () =>
        void (await patchTemplateAndWait(client, ns, 'web', {
          template: { spec: { containers: [container('200m', '128Mi')] } },
          what: 'resized and settled',
          until: (cs, pods) =>
            cs.status?.updatedReadyReplicas === 3 &&
            (cs.status?.resize?.resizing ?? 1) === 0 &&
            pods.every((p) => p.status?.containerStatuses?.[0]?.resources?.limits?.['memory'] === '128Mi'),
          timeoutMs: 120_000,
        })),
    );

    const after = await activePods(client, ns, 'web');
    expect(new Set(after.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    for (const pod of after) {
      expect(pod.status?.containerStatuses?.[0]?.restartCount).toBe(
        before.get(pod.metadata?.uid ?? '')?.status?.containerStatuses?.[0]?.restartCount,
      );
      // The kubelet's conversion: shares = 200m * 1024 / 1000, quota = 200m * 100000 / 1000.
      expect(podCgroupFile('cpu', pod, 'cpu.shares')).toBe('204');
      expect(podCgroupFile('cpu', pod, 'cpu.cfs_quota_us')).toBe('20000');
      expect(podCgroupFile('memory', pod, 'memory.limit_in_bytes')).toBe(String(128 * 1024 * 1024));
    }
    expectEveryResizeReported('resize', samples);
    // The user's last sight is what the API says now, not a poll answered before the settled write.
    expect(resizeCounts((await readCloneSet(client, ns, 'web')).status?.resize)).toBe(NOTHING_RESIZING);
    expect((await readCloneSet(client, ns, 'web')).status?.resize?.pods ?? []).toEqual([]);
  });

  it('reports a resize above node allocatable as Infeasible and, with onInfeasible Wait, names the pod in ResizeBlocked', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'big',
        {
          replicas: 1,
          updateStrategy: { type: 'InPlaceIfPossible', resizeStrategy: { onInfeasible: 'Wait' } },
        },
        { containers: [container('50m', '32Mi')] },
      ),
    );
    await waitForReady(client, ns, 'big', 1, 120_000);
    const [pod] = await activePods(client, ns, 'big');
    const cs = await patchTemplateAndWait(client, ns, 'big', {
      template: { spec: { containers: [container('500', '32Mi')] } },
      what: 'Infeasible reported',
      until: (c) =>
        c.status?.resize?.infeasible === 1 &&
        (c.status.conditions ?? []).some((x) => x.type === 'ResizeBlocked' && x.status === 'True'),
      timeoutMs: 60_000,
    });
    expect(cs.status?.resize?.pods?.[0]).toMatchObject({ name: pod?.metadata?.name, state: 'Infeasible' });
    expect(cs.status?.conditions?.find((c) => c.type === 'ResizeBlocked')?.message).toContain(
      pod?.metadata?.name ?? '?',
    );
    const [still] = await activePods(client, ns, 'big');
    expect(still?.metadata?.uid).toBe(pod?.metadata?.uid);
  });

  it('reports Deferred while another pod holds the node, and completes once it is gone', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'deferred',
        { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' } },
        { containers: [container('100m', '32Mi')] },
      ),
    );
    await waitForReady(client, ns, 'deferred', 1, 120_000);
    // Free the node of this file's earlier CloneSets so the arithmetic below has room to work with.
    for (const name of ['web', 'big']) await client.delete(cloneSetPath(ns, name)).catch(() => undefined);
    await eventually(
      'earlier pods gone',
      async () => ((await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`)).items.length === 1 ? true : undefined),
      120_000,
    );
    const node = await client.get<{ status?: { allocatable?: Record<string, string> } }>('/api/v1/nodes/tailor-node');
    const allocatableMilli = parseInt(node.status?.allocatable?.['cpu'] ?? '2', 10) * 1000;
    const requested = (await client.list<Pod>('/api/v1/pods', { fieldSelector: 'spec.nodeName=tailor-node' })).items
      .filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
      .flatMap((p) => p.spec?.containers ?? [])
      .reduce((sum, c) => sum + milli(c.resources?.requests?.['cpu']), 0);
    // Leave room for less than the resize: it fits the node in theory, not now.
    const filler = allocatableMilli - requested - 300;
    if (filler <= 0)
      throw new Error(`node too busy for this test: ${requested}m of ${allocatableMilli}m cpu requested`);
    await client.create(`/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: 'filler' },
      spec: { terminationGracePeriodSeconds: 0, containers: [{ ...container(`${filler}m`, '16Mi'), name: 'filler' }] },
    });
    await eventually('filler running', async () =>
      (await client.get<Pod>(`/api/v1/namespaces/${ns}/pods/filler`)).status?.phase === 'Running' ? true : undefined,
    );
    await patchTemplateAndWait(client, ns, 'deferred', {
      template: { spec: { containers: [container('600m', '32Mi')] } },
      what: 'Deferred reported',
      until: (c) => c.status?.resize?.deferred === 1,
      timeoutMs: 60_000,
    });
    await client.delete(`/api/v1/namespaces/${ns}/pods/filler`, { gracePeriodSeconds: 0 });
    const done = await waitForCloneSet(
      client,
      ns,
      'deferred',
      'resize completed',
      (c, pods) =>
        (c.status?.resize?.resizing ?? 1) === 0 &&
        pods[0]?.status?.containerStatuses?.[0]?.resources?.requests?.['cpu'] === '600m',
      120_000,
    );
    expect(done.status?.resize?.deferred).toBe(0);
  });

  it('drains first and restarts the container for a memory resize whose policy is RestartContainer', async () => {
    const restarting = (memory: string): Record<string, unknown> => ({
      ...container('100m', memory),
      resizePolicy: [
        { resourceName: 'cpu', restartPolicy: 'NotRequired' },
        { resourceName: 'memory', restartPolicy: 'RestartContainer' },
      ],
    });
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'restart',
        { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' } },
        { containers: [restarting('64Mi')] },
      ),
    );
    await waitForReady(client, ns, 'restart', 1, 120_000);
    const [pod] = await activePods(client, ns, 'restart');
    await patchTemplateAndWait(client, ns, 'restart', {
      template: { spec: { containers: [restarting('128Mi')] } },
      what: 'resized and ready',
      until: (c, pods) =>
        c.status?.readyReplicas === 1 &&
        (c.status?.resize?.resizing ?? 1) === 0 &&
        pods[0]?.status?.containerStatuses?.[0]?.resources?.limits?.['memory'] === '128Mi',
      timeoutMs: 120_000,
    });
    const [after] = await activePods(client, ns, 'restart');
    expect(after?.metadata?.uid).toBe(pod?.metadata?.uid);
    expect(after?.status?.containerStatuses?.[0]?.restartCount).toBe(
      (pod?.status?.containerStatuses?.[0]?.restartCount ?? 0) + 1,
    );
    // Completion is only reported for a pod that was drained (InPlaceUpdateReady False) first.
    const events = await client.list<{ reason?: string; message?: string; involvedObject?: { name?: string } }>(
      `/api/v1/namespaces/${ns}/events`,
    );
    expect(
      events.items.some(
        (e) =>
          e.involvedObject?.name === 'restart' &&
          e.reason === 'InPlaceUpdateCompleted' &&
          e.message?.includes(pod?.metadata?.name ?? '?'),
      ),
    ).toBe(true);
  });

  it('recreates a pod whose resize is Infeasible under the default InPlaceIfPossible outcome', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'recreate',
        { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' } },
        { containers: [container('50m', '32Mi')] },
      ),
    );
    await waitForReady(client, ns, 'recreate', 1, 120_000);
    const [pod] = await activePods(client, ns, 'recreate');
    await client.patch(
      cloneSetPath(ns, 'recreate'),
      { spec: { template: { spec: { containers: [container('500', '32Mi')] } } } },
      'merge',
    );
    const replacement = await eventually(
      'an unschedulable replacement',
      async () => {
        const pods = await activePods(client, ns, 'recreate');
        const fresh = pods.find((p) => p.metadata?.uid !== pod?.metadata?.uid);
        const unschedulable = fresh?.status?.conditions?.some(
          (c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable',
        );
        return pods.length === 1 && unschedulable ? fresh : undefined;
      },
      90_000,
    );
    expect(replacement.spec?.containers?.[0]?.resources?.requests?.['cpu']).toBe('500');
    const events = await client.list<{ reason?: string; message?: string; involvedObject?: { name?: string } }>(
      `/api/v1/namespaces/${ns}/events`,
    );
    expect(events.items.some((e) => e.involvedObject?.name === 'recreate' && e.reason === 'ResizeRecreate')).toBe(true);
    expect(events.items.some((e) => e.involvedObject?.name === 'recreate' && e.reason === 'PodUnschedulable')).toBe(
      true,
    );
  });
});

function milli(q: string | undefined): number {
  if (!q) return 0;
  return q.endsWith('m') ? parseInt(q, 10) : Math.round(parseFloat(q) * 1000);
}
