// AgentReconciler against fakes: a runtime whose "cgroup" follows UpdateContainerResources, a pod
// cgroup tree in a temporary directory, and a recording API client. Checks the kubelet order
// across pod and container, the status written (and not rewritten), the refusal, the restart
// re-apply, and that nothing happens where the kubelet resizes.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { AgentMetrics } from '../../../src/agent/metrics.js';
import { AgentReconciler } from '../../../src/agent/reconciler.js';
import { ANNOTATION_RESIZE_REQUEST, ANNOTATION_RESIZE_STATUS } from '../../../src/api/types.js';
import type { CgroupReading } from '../../../src/cgroup/container.js';
import type { LinuxContainerResources } from '../../../src/api/node.js';
import type { Container } from '../../../src/cri/types.js';
import { silentLogger } from '../../../src/runtime/logger.js';
import type { Node, Pod } from '../../../src/api/wire.js';
import { buildPod, cloneSetOwner, runningStatus } from '../../support/fixtures/pods.js';
import type { ResizeStatus } from '../../../src/resize/agent-protocol.js';
import type { ControllerRevision } from '../../../src/api/revision.js';

const Mi = 1024n * 1024n;
const POD_CG = '/kubepods/burstable/podu1';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tailor-agent-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface World {
  reconciler: AgentReconciler;
  events: string[];
  calls: string[];
  patches: ResizeStatus[];
  pods: Map<string, Pod>;
  cgroup: { memoryLimitInBytes: bigint; memoryUsageInBytes: bigint; cpuShares: bigint; cpuQuota: bigint };
  containerId: { value: string };
  metrics: AgentMetrics;
  podFile: (controller: string, file: string) => Promise<string>;
}

const OWNER = cloneSetOwner('web', 'cs1');
const revision = (
  name: string,
  resources: object,
): ControllerRevision & { metadata: { name: string; namespace: string } } => ({
  revision: Number(name.slice(1)),
  metadata: { name, namespace: 'ns', ownerReferences: [OWNER] },
  data: { template: { spec: { containers: [{ name: 'app', resources }] } } },
});
const REVISIONS = new Map([
  ['ns/r2', revision('r2', { requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '400m', memory: '256Mi' } })],
  ['ns/r3', revision('r3', { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } })],
]);

function makePod(status?: ResizeStatus, kubelet = false): Pod {
  return buildPod({
    uid: 'u1',
    labels: { 'controller-revision-hash': 'r2' },
    ownerReferences: [OWNER],
    annotations: {
      [ANNOTATION_RESIZE_REQUEST]: JSON.stringify({
        revision: 'r2',
        containers: { app: { requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '400m', memory: '256Mi' } } },
      }),
      ...(status ? { [ANNOTATION_RESIZE_STATUS]: JSON.stringify(status) } : {}),
    },
    node: 'n1',
    containers: [
      {
        name: 'app',
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
      },
    ],
    phase: 'Running',
    containerStatuses: [runningStatus('app', { image: 'x', ...(kubelet ? { resources: {} } : {}) })],
  });
}

async function world(pod: Pod, usage = 10n * Mi, allocatable = { cpu: '4', memory: '8Gi' }): Promise<World> {
  const cgRoot = await mkdtemp(join(root, 'cg-'));
  await mkdir(join(cgRoot, 'cpu', POD_CG), { recursive: true });
  await mkdir(join(cgRoot, 'memory', POD_CG), { recursive: true });
  const put = (c: string, f: string, v: string): Promise<void> => writeFile(join(cgRoot, c, POD_CG, f), `${v}\n`);
  await put('cpu', 'cpu.shares', '102');
  await put('cpu', 'cpu.cfs_quota_us', '20000');
  await put('cpu', 'cpu.cfs_period_us', '100000');
  await put('memory', 'memory.limit_in_bytes', String(128n * Mi));
  await put('memory', 'memory.usage_in_bytes', String(usage));

  const calls: string[] = [];
  const patches: ResizeStatus[] = [];
  const pods = new Map([['ns/p', pod]]);
  const cgroup = { memoryLimitInBytes: 128n * Mi, memoryUsageInBytes: usage, cpuShares: 102n, cpuQuota: 20_000n };
  const containerId = { value: 'c1' };
  const node: Node = { metadata: { name: 'n1' }, status: { allocatable } };
  const events: string[] = [];
  const metrics = new AgentMetrics(new Registry());
  const reading = (): CgroupReading => ({
    version: 1,
    path: `${POD_CG}/${containerId.value}`,
    cpuShares: cgroup.cpuShares,
    cpuWeight: undefined,
    cpuQuota: cgroup.cpuQuota,
    cpuPeriod: 100_000n,
    memoryLimitInBytes: cgroup.memoryLimitInBytes,
    memorySwapLimitInBytes: undefined,
    memoryUsageInBytes: cgroup.memoryUsageInBytes,
  });
  const reconciler = new AgentReconciler({
    nodeName: 'n1',
    pods: { get: (k: string) => pods.get(k), list: () => [...pods.values()] },
    nodes: { get: () => node },
    revisions: {
      revision: (namespace: string, name: string) =>
        Promise.resolve(REVISIONS.get(`${namespace}/${name}`) as ControllerRevision | undefined),
    },
    events: { event: (_o, type, reason, message) => events.push(`${type} ${reason}: ${message}`) },
    client: {
      patchMetadata: async (_path: string, body: unknown) => {
        const text =
          (body as { metadata: { annotations: Record<string, string> } }).metadata.annotations[
            ANNOTATION_RESIZE_STATUS
          ] ?? '';
        patches.push(JSON.parse(text) as ResizeStatus);
        return {};
      },
    },
    cri: {
      listContainers: async () => [{ id: containerId.value, createdAt: 1n } as unknown as Container],
      updateContainerResources: async (id: string, r: Partial<LinuxContainerResources>) => {
        if (r.memoryLimitInBytes !== undefined) {
          calls.push(`container:${id}:memory`);
          cgroup.memoryLimitInBytes = r.memoryLimitInBytes;
        }
        if (r.cpuShares !== undefined) {
          calls.push(`container:${id}:cpu`);
          cgroup.cpuShares = r.cpuShares;
          cgroup.cpuQuota = r.cpuQuota ?? cgroup.cpuQuota;
        }
      },
    },
    readContainer: async () => reading(),
    containerCgroupPath: async (id: string) => `${POD_CG}/${id}`,
    cgroup: { root: cgRoot, version: 1 },
    convert: {},
    metrics,
    logger: silentLogger(),
    now: () => new Date('2024-01-01T00:00:00Z'),
  });
  const podFile = (c: string, f: string): Promise<string> => readFile(join(cgRoot, c, POD_CG, f), 'utf8');
  return { reconciler, events, calls, patches, pods, cgroup, containerId, metrics, podFile };
}

describe('AgentReconciler', () => {
  let w: World;
  beforeEach(async () => {
    w = await world(makePod());
  });

  test('grows: containers updated memory then cpu, status records what was applied', async () => {
    await w.reconciler.reconcile('ns/p');
    expect(w.calls).toEqual(['container:c1:memory', 'container:c1:cpu']);
    expect(w.cgroup.memoryLimitInBytes).toBe(256n * Mi);
    expect(w.patches).toEqual([
      {
        revision: 'r2',
        state: '',
        since: '2024-01-01T00:00:00.000Z',
        applied: {
          app: {
            containerID: 'c1',
            requests: { cpu: '200m', memory: '128Mi' },
            limits: { cpu: '400m', memory: '256Mi' },
          },
        },
      },
    ]);
    expect((await w.metrics.resizesTotal.get()).values).toEqual([
      expect.objectContaining({ labels: { result: 'applied' }, value: 1 }),
    ]);
  });

  test('the pod cgroup is raised (the kubelet would have)', async () => {
    await w.reconciler.reconcile('ns/p');
    const file = w.podFile;
    expect((await file('memory', 'memory.limit_in_bytes')).trim()).toBe(String(256n * Mi));
    expect((await file('cpu', 'cpu.cfs_quota_us')).trim()).toBe('40000');
    expect((await file('cpu', 'cpu.shares')).trim()).toBe('204');
  });

  test('applied and the same container: nothing is done or written again', async () => {
    await w.reconciler.reconcile('ns/p');
    w.pods.set('ns/p', makePod(w.patches[0]));
    w.calls.length = 0;
    await w.reconciler.reconcile('ns/p');
    expect(w.calls).toEqual([]);
    expect(w.patches).toHaveLength(1);
  });

  test('a restarted container (new ID, spec resources) is resized again', async () => {
    await w.reconciler.reconcile('ns/p');
    w.pods.set('ns/p', makePod(w.patches[0]));
    w.containerId.value = 'c2';
    Object.assign(w.cgroup, { memoryLimitInBytes: 128n * Mi, cpuShares: 102n, cpuQuota: 20_000n });
    w.calls.length = 0;
    await w.reconciler.reconcile('ns/p');
    expect(w.calls).toEqual(['container:c2:memory', 'container:c2:cpu']);
    expect(w.patches.at(-1)?.applied?.['app']?.containerID).toBe('c2');
  });

  test('a memory limit below usage is refused and reported, not applied', async () => {
    w = await world(makePod(), 300n * Mi);
    // shrink request: 64Mi limit while 300Mi are in use
    const pod = makePod();
    pod.metadata!.labels!['controller-revision-hash'] = 'r3';
    pod.metadata!.annotations![ANNOTATION_RESIZE_REQUEST] = JSON.stringify({
      revision: 'r3',
      containers: { app: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } } },
    });
    w.pods.set('ns/p', pod);
    const result = await w.reconciler.reconcile('ns/p');
    expect(w.calls).toEqual([]);
    expect(w.patches).toEqual([
      expect.objectContaining({ revision: 'r3', state: 'InProgress', reason: 'MemoryLimitBelowUsage' }),
    ]);
    expect(result).toEqual({ requeueAfterMs: 10_000 });
  });

  test('where the kubelet resizes, the agent resizes nothing and answers KubeletResizes', async () => {
    w = await world(makePod(undefined, true));
    await w.reconciler.reconcile('ns/p');
    expect(w.calls).toEqual([]);
    expect(w.patches).toEqual([
      expect.objectContaining({ revision: 'r2', state: 'Infeasible', reason: 'KubeletResizes' }),
    ]);
  });

  test('a forged status with empty applied values does not skip admission: a request beyond allocatable is Infeasible, nothing is written to cgroups', async () => {
    w = await world(makePod({ revision: 'r2', state: '', since: '2024-01-01T00:00:00Z', applied: {} }), 10n * Mi, {
      cpu: '150m',
      memory: '8Gi',
    });
    await w.reconciler.reconcile('ns/p');
    expect(w.calls).toEqual([]);
    expect((await w.podFile('cpu', 'cpu.shares')).trim()).toBe('102');
    expect(w.patches).toEqual([
      expect.objectContaining({ revision: 'r2', state: 'Infeasible', reason: 'ExceedsAllocatable' }),
    ]);
  });

  test('a pod without a CloneSet controller owner is ignored: no cgroup write, no answer', async () => {
    const pod = makePod();
    pod.metadata!.ownerReferences = [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs1', controller: true },
    ];
    w.pods.set('ns/p', pod);
    await w.reconciler.reconcile('ns/p');
    expect(w.calls).toEqual([]);
    expect(w.patches).toEqual([]);
  });

  test("a request that differs from its revision's template is refused with a reason and a Warning event", async () => {
    const pod = makePod();
    pod.metadata!.annotations![ANNOTATION_RESIZE_REQUEST] = JSON.stringify({
      revision: 'r2',
      containers: { app: { requests: { cpu: '3', memory: '128Mi' }, limits: { cpu: '4', memory: '256Mi' } } },
    });
    w.pods.set('ns/p', pod);
    await w.reconciler.reconcile('ns/p');
    expect(w.calls).toEqual([]);
    expect(w.patches).toEqual([
      expect.objectContaining({
        state: 'Infeasible',
        reason: 'NotInRevision',
        message: expect.stringMatching(/cpu request 3, the revision asks for 200m/),
      }),
    ]);
    expect(w.events).toEqual([expect.stringMatching(/^Warning ResizeNotInRevision: /)]);
  });

  test('after an agent restart, a resize the cgroups already hold is recognised from the node, not re-applied', async () => {
    Object.assign(w.cgroup, { memoryLimitInBytes: 256n * Mi, cpuShares: 204n, cpuQuota: 40_000n });
    await w.reconciler.reconcile('ns/p');
    expect(w.calls).toEqual([]);
    expect(w.reconciler.appliedTo('u1')).toEqual({
      revision: 'r2',
      containers: { app: expect.objectContaining({ containerID: 'c1' }) },
    });
  });

  test('a pod of another node is left alone', async () => {
    const pod = makePod();
    pod.spec!.nodeName = 'n2';
    w.pods.set('ns/p', pod);
    await w.reconciler.reconcile('ns/p');
    expect(w.calls).toEqual([]);
    expect(w.patches).toEqual([]);
  });
});
