// The fault tier, agent half: a CPU/memory resize of a 4-pod CloneSet through Tailor's node agent
// (the test bed on the profile whose kubelet cannot resize, InPlacePodVerticalScaling=false, with
// the agent running as `make dev` deploys it), hit mid-resize by one fault per scenario:
//   f. containerd restarted (SIGKILL, then started again as it ran);
//   g. the agent's process killed (SIGKILL; the kubelet restarts its container).
// To hit the agent *in the middle* of the resize every time, containerd is held (SIGSTOP) from
// just before the CloneSet edit until the fault: the agent has taken the requests and sits in its
// CRI calls when the fault lands, instead of finishing 4 pods in milliseconds first.
// Each asserts nothing was lost — no pod recreated or restarted, every pod's container and pod
// cgroups at the new values, every pod's resize-status at the new revision, the status converged —
// and records its recovery time for the tier's table (test/support/fault/teardown.js).
// Owns: its namespaces and controller process; switches the shared test bed's feature-gate
// profile and restores it. Run only under /tmp/tailor-cluster.lock, like the rest of the tier.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Pod } from '../../src/api/wire.js';
import { KubeClient } from '../../src/runtime/kube-client.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  waitForCloneSet,
  waitForReady,
  type TestCloneSet,
} from '../support/fixtures/cloneset.js';
import { holdComponent, restartComponent, thawAll } from '../support/cluster/components.js';
import { ensureCrd } from '../support/cluster/crd.js';
import { killAllControllers, leaseHolder, startControllerProcess } from '../support/fault/controllers.js';
import { recordRecovery } from '../support/fault/rollout.js';
import { createTestNamespace, loadTestKubeConfig } from '../support/cluster/kube.js';
import { eventually, kubectl, podCgroupFile, sizedContainer } from '../support/cluster/testbed.js';

const REPLICAS = 4;
const APP = 'web';
const NODE = 'tailor-node';
const client = new KubeClient(loadTestKubeConfig());
const namespaces: string[] = [];

const profile = (script: string, gates: string): void => {
  execFileSync('bash', [script, ...(script.endsWith('cluster.sh') ? ['up', 'full'] : [])], {
    stdio: 'pipe',
    env: { ...process.env, FEATURE_GATES: gates, KUBECONFIG: process.env.TAILOR_KUBECONFIG },
  });
};

beforeAll(async () => {
  // `make dev` on the gate-off profile: the agent runs as its DaemonSet against the test bed's containerd.
  profile('hack/dev.sh', 'InPlacePodVerticalScaling=false');
  await ensureCrd(client);
}, 300_000);

afterEach(async () => {
  thawAll();
  await killAllControllers();
  // The node has 2 CPUs: a scenario's pods must be gone before the next one asks for room.
  for (const ns of namespaces.splice(0)) {
    await client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
    await eventually(
      "the scenario's pods to be gone",
      async () => ((await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`)).items.length === 0 ? true : undefined),
      90_000,
    );
  }
}, 120_000);

afterAll(async () => {
  client.close();
  profile('hack/cluster.sh', 'InPlacePodVerticalScaling=true');
}, 180_000);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The host pid of the node agent's process (the DaemonSet's container runs `main.js agent`). */
function agentPid(): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.some((a) => a.endsWith('/dist/cli/main.js')) && argv.includes('agent')) return Number(entry);
    } catch {
      // exited while listed
    }
  }
  throw new Error('no node agent process on this machine');
}

const resizeStatus = (p: Pod): { revision?: string; state?: string } =>
  JSON.parse(p.metadata?.annotations?.['apps.tailor.dev/resize-status'] ?? '{}') as {
    revision?: string;
    state?: string;
  };

/** The agent reports the pod's request applied (state '' at the requested revision). */
const resizeApplied = (p: Pod): boolean => {
  const request = JSON.parse(p.metadata?.annotations?.['apps.tailor.dev/resize-request'] ?? '{}') as {
    revision?: string;
  };
  const status = resizeStatus(p);
  return request.revision !== undefined && status.revision === request.revision && status.state === '';
};

interface Resize {
  ns: string;
  before: Pod[];
  editedAt: number;
  /** Resolves once every pod is resized at the new revision and the status converged. */
  settled(): Promise<TestCloneSet>;
}

/**
 * A converged CloneSet at 50m/64Mi and a controller for it; then, with containerd held, the edit
 * to 100m/128Mi. Resolves once the controller has asked the agent for every pod and the agent has
 * had time to take the requests, with containerd still held: `thaw` (or the fault) is the caller's.
 */
async function resizeUnderWay(prefix: string): Promise<Resize & { thaw(): void }> {
  const ns = `${prefix}-${Date.now().toString(36)}`;
  await createTestNamespace(client, ns);
  namespaces.push(ns);
  const replica = await startControllerProcess('only-replica', ns);
  await eventually(
    'the replica to hold the Lease',
    async () => ((await leaseHolder(client, ns)) === replica.identity ? true : undefined),
    30_000,
  );
  await client.create(
    cloneSetPath(ns),
    cloneSetManifest(
      APP,
      { replicas: REPLICAS, updateStrategy: { type: 'InPlaceIfPossible' } },
      { containers: [sizedContainer('50m', '64Mi')] },
    ),
  );
  await waitForReady(client, ns, APP, REPLICAS, 120_000);
  const before = await activePods(client, ns, APP);
  const held = holdComponent('containerd');
  const editedAt = Date.now();
  try {
    await client.patch(
      cloneSetPath(ns, APP),
      { spec: { template: { spec: { containers: [sizedContainer('100m', '128Mi')] } } } },
      'merge',
    );
    await eventually(
      'the controller to ask for every resize',
      async () => {
        const pods = await activePods(client, ns, APP);
        return pods.every((p) => p.metadata?.annotations?.['apps.tailor.dev/resize-request'] !== undefined)
          ? true
          : undefined;
      },
      30_000,
    );
    await sleep(2_000);
    // Nothing can have been applied yet: the agent cannot reach its runtime.
    expect((await activePods(client, ns, APP)).filter(resizeApplied).map((p) => p.metadata?.name)).toEqual([]);
  } catch (err) {
    held.thaw();
    throw err;
  }
  return {
    ns,
    before,
    editedAt,
    thaw: held.thaw,
    settled: () =>
      waitForCloneSet(
        client,
        ns,
        APP,
        'every pod resized and the status converged',
        (cs, pods) =>
          pods.length === REPLICAS &&
          cs.status?.updatedReplicas === REPLICAS &&
          cs.status?.readyReplicas === REPLICAS &&
          cs.status?.currentRevision === cs.status?.updateRevision &&
          (cs.status?.resize?.resizing ?? 0) === 0 &&
          pods.every((p) => resizeApplied(p) && resizeStatus(p).revision === cs.status?.updateRevision),
        120_000,
      ),
  };
}

/** Nothing lost: the same pods, no container restarted, the new values in every cgroup, nothing left pending. */
async function expectResizedInPlace(resize: Resize, cs: TestCloneSet): Promise<void> {
  const after = await activePods(client, resize.ns, APP);
  const restarts = (pods: Pod[]): Record<string, number> =>
    Object.fromEntries(pods.map((p) => [p.metadata?.uid ?? '', p.status?.containerStatuses?.[0]?.restartCount ?? -1]));
  expect(restarts(after)).toEqual(restarts(resize.before));
  expect(cs.status?.resize?.pods ?? []).toEqual([]);
  for (const pod of after) {
    for (const level of ['container', 'pod'] as const) {
      expect({ pod: pod.metadata?.name, level, shares: podCgroupFile('cpu', pod, 'cpu.shares', level) }).toEqual({
        pod: pod.metadata?.name,
        level,
        shares: '102',
      });
      expect(podCgroupFile('cpu', pod, 'cpu.cfs_quota_us', level)).toBe('10000');
      expect(podCgroupFile('memory', pod, 'memory.limit_in_bytes', level)).toBe(String(128 * 1024 * 1024));
    }
  }
}

/** Ends a scenario: every pod resized, the recovery since `faultAt` recorded, nothing lost. */
async function finishResize(
  resize: Resize,
  row: { scenario: string; faultAt: number; measured: string },
): Promise<void> {
  const cs = await resize.settled();
  const doneAt = Date.now();
  recordRecovery({
    scenario: row.scenario,
    measured: row.measured,
    recoveryMs: doneAt - row.faultAt,
    rolloutMs: doneAt - resize.editedAt,
  });
  await expectResizedInPlace(resize, cs);
}

describe('a resize through the node agent under faults loses nothing', () => {
  it('f. survives containerd restarted mid-resize: no pod restarted or recreated, every cgroup resized', async () => {
    const resize = await resizeUnderWay('fault-containerd');
    let startedAt: number;
    try {
      ({ startedAt } = await restartComponent('containerd', { signal: 'SIGKILL' }));
    } finally {
      resize.thaw();
    }
    await finishResize(resize, {
      scenario: 'f. containerd restarted mid-resize',
      faultAt: startedAt,
      measured: 'containerd started → every pod resized',
    });
  }, 300_000);

  it('g. survives the agent killed mid-resize: its restart finishes every resize, no pod restarted', async () => {
    // The agent of the test bed's real node (kwok nodes, when a bench left some, have their own).
    const agentRestarts = (): number =>
      Number(
        kubectl([
          '-n',
          'tailor-system',
          'get',
          'pods',
          '-l',
          'app.kubernetes.io/name=tailor,app.kubernetes.io/component=agent',
          '--field-selector',
          `spec.nodeName=${NODE}`,
          '-o',
          'jsonpath={.items[0].status.containerStatuses[0].restartCount}',
        ]),
      );
    const restartsBefore = agentRestarts();
    const resize = await resizeUnderWay('fault-agent');
    let killedAt: number;
    try {
      process.kill(agentPid(), 'SIGKILL');
      killedAt = Date.now();
    } finally {
      resize.thaw();
    }
    await finishResize(resize, {
      scenario: 'g. agent killed mid-resize',
      faultAt: killedAt,
      measured: 'agent killed → every pod resized',
    });
    expect(agentRestarts()).toBe(restartsBefore + 1);
  }, 300_000);
});
