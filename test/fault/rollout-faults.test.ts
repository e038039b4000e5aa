// The fault tier, rollout half: an in-place image rollout of a 4-pod CloneSet, driven by real
// `tailor controller` processes on the full test-bed cluster, hit mid-way by one fault per scenario:
//   a. the leader SIGKILLed;  h. the leader sent SIGTERM (Lease released, the other replica
//   continues within 2 s);  k. a pod deleted by hand mid update;  j. another writer patching the
//   same pods all along (a 409 storm);  i. every open connection of the controller going silent
//   (its watches stall; the watchdog relists);  b. the API server frozen (SIGSTOP) for longer than
//   the Lease;  c. the API server restarted;  d. etcd restarted;  e. the kubelet stopped for 45 s.
// Each asserts nothing was lost — no pod updated twice, none recreated (but the one deleted on
// purpose), no orphan, the rollout complete, the status converged — and records its recovery time
// for the tier's one table (test/support/fault/teardown.js). The agent's scenarios f and g are in
// agent-faults.test.ts.
// Owns: its namespaces, the controller processes and the proxy it starts. Scenarios b–e stop or
// freeze a shared component for seconds: run this tier only under /tmp/tailor-cluster.lock (make
// test runs tiers one after another); the component is always continued or started again.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { KubeClient } from '../../src/runtime/kube-client.js';
import type { Pod } from '../../src/api/wire.js';
import {
  freezeComponent,
  restartApiServer,
  restartComponent,
  waitForApiServerReady,
} from '../support/cluster/components.js';
import { activePods, cloneSetPath, waitForCloneSet, waitForReady } from '../support/fixtures/cloneset.js';
import { ensureCrd } from '../support/cluster/crd.js';
import {
  electedPair,
  killAllControllers,
  leaseHolder as sharedLeaseHolder,
  restartedOnFailure,
  startControllerProcess,
  writeKubeconfig,
  type ControllerProcess,
} from '../support/fault/controllers.js';

import { startFaultProxy, type FaultProxy } from '../support/fault/proxy.js';
import {
  IMAGE_V2,
  RolloutRecorder,
  expectNothingLost,
  recordRecovery,
  slowReadyCloneSet,
} from '../support/fault/rollout.js';
import { createTestNamespace, loadTestKubeConfig } from '../support/cluster/kube.js';
import { eventually } from '../support/cluster/testbed.js';
import { auditedSince } from '../support/cluster/audit-log.js';

const REPLICAS = 4;
const APP = 'web';
const client = new KubeClient(loadTestKubeConfig());
const namespaces: string[] = [];
const proxies: FaultProxy[] = [];
/** Every scenario's recorder, stopped after it even when it failed: a live watch keeps Jest from exiting. */
const recorders: RolloutRecorder[] = [];

beforeAll(async () => {
  const cli = resolve(process.cwd(), 'dist/cli/main.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: build first with 'npx tsc -p tsconfig.build.json'`);
  await ensureCrd(client);
});

afterEach(async () => {
  for (const r of recorders.splice(0)) r.stop();
  await killAllControllers();
  for (const p of proxies.splice(0)) {
    p.thaw();
    await p.close();
  }
});

afterAll(async () => {
  for (const ns of namespaces) await client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  client.close();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function freshNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${Date.now().toString(36)}`;
  await createTestNamespace(client, name);
  namespaces.push(name);
  return name;
}

const leaseHolder = (ns: string): Promise<string | undefined> => sharedLeaseHolder(client, ns);

const atV2 = (pods: Pod[]): Pod[] => pods.filter((p) => p.spec?.containers?.[0]?.image === IMAGE_V2);
const podsAtV2 = async (ns: string): Promise<Pod[]> => atV2(await activePods(client, ns, APP));

/** Pods whose kubelet reports the new image running and the pod Ready. */
const podsRunningV2 = async (ns: string): Promise<Pod[]> =>
  (await podsAtV2(ns)).filter(
    (p) =>
      p.status?.containerStatuses?.[0]?.image?.endsWith('busybox:v2') === true &&
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
  );

/**
 * When a replica has asked for the new image on more pods than `updatedBefore` (read from the API),
 * after etcd's restart: the wait allows 240 s so that a slow recovery is printed in the recovery
 * column, not a lost run.
 */
const nextPodUpdated = (ns: string, updatedBefore: number): Promise<number> =>
  timeWhen('a replica to update another pod', async () => (await podsAtV2(ns)).length > updatedBefore, 240_000);

/**
 * The next pod's update after an API server restart, at most, from the latest of: the server being
 * ready, the pod watch of every kubelet that runs the rollout's pods coming back, and every pod
 * reported Ready (issue 47 item 6). The kubelets' part is theirs: a pod's gate turned False is not
 * reflected in its Ready condition, so the drain before its patch does not end, until its kubelet
 * sees the pod again, and client-go's reflector reopens a failed watch after a backoff of up to
 * about a minute. That was the 46–96 s seen before this was measured (decision 77's amendment).
 */
const NEXT_POD_AFTER_API_RESTART_MS = 15_000;

/**
 * When the last of `nodes`' kubelets opened the pod watch that served it, between `since` and
 * `until`: each one's latest before `until` (the bed's audit log keeps the kubelets' pod lists and
 * watches). A first watch the new server ends at once (its watch cache still filling) is followed
 * by another, which is the one that counts. Undefined while one of them has opened none.
 */
function kubeletPodWatchesBack(nodes: ReadonlySet<string>, since: number, until: number): number | undefined {
  const servingSince = new Map<string, number>();
  for (const e of auditedSince(new Date(since).toISOString())) {
    const node = e.user?.username?.replace(/^system:node:/, '') ?? '';
    const at = Date.parse(e.requestReceivedTimestamp ?? '');
    if (e.verb !== 'watch' || e.objectRef?.resource !== 'pods' || !nodes.has(node) || at > until) continue;
    servingSince.set(node, Math.max(at, servingSince.get(node) ?? at));
  }
  return servingSince.size < nodes.size ? undefined : Math.max(...servingSince.values());
}

/**
 * When each pod was last seen turning Ready, polling the API: after an API server restart the
 * kubelets report late (their own watches come back after client-go's backoff, up to 60 s), and
 * no next pod is due before they have.
 */
class ReadyTurns {
  private readonly turnedAt = new Map<string, number>();
  private ready: Set<string> | undefined;

  observe(pods: Pod[]): void {
    const ready = new Set(
      pods
        .filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true)
        .map((p) => p.metadata?.name ?? ''),
    );
    if (this.ready !== undefined)
      for (const name of ready) if (!this.ready.has(name)) this.turnedAt.set(name, Date.now());
    this.ready = ready;
  }

  /** The latest turn among `names`; 0 when none turned while observed. */
  latest(names: Iterable<string>): number {
    return Math.max(0, ...[...names].map((n) => this.turnedAt.get(n) ?? 0));
  }
}

/** Polls `probe` every 50 ms; resolves with the time it first held. */
async function timeWhen(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return Date.now();
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

interface Rollout {
  ns: string;
  recorder: RolloutRecorder;
  before: Set<string>;
  startedAt: number;
  /** Resolves once the rollout is complete and the status converged; the time it was seen. */
  completed(timeoutMs?: number): Promise<number>;
}

/** A converged 4-pod CloneSet at v1, then the image edit to v2; resolves once one pod is at v2. */
async function rolloutUnderWay(ns: string): Promise<Rollout> {
  await client.create(cloneSetPath(ns), slowReadyCloneSet(APP, REPLICAS));
  await waitForReady(client, ns, APP, REPLICAS, 120_000);
  const before = new Set((await activePods(client, ns, APP)).map((p) => p.metadata?.uid ?? ''));
  const recorder = await RolloutRecorder.start(client, ns, APP);
  recorders.push(recorder);
  const startedAt = Date.now();
  await client.patch(
    cloneSetPath(ns, APP),
    [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: IMAGE_V2 }],
    'json',
  );
  await timeWhen('the first pod to be updated', () => recorder.podsAt(IMAGE_V2).length >= 1, 60_000);
  return {
    ns,
    recorder,
    before,
    startedAt,
    completed: async (timeoutMs = 180_000) => {
      await waitForCloneSet(
        client,
        ns,
        APP,
        'the rollout to complete and the status to converge',
        (cs, pods) =>
          pods.length === REPLICAS &&
          pods.every((p) => p.spec?.containers?.[0]?.image === IMAGE_V2) &&
          cs.status?.updatedReadyReplicas === REPLICAS &&
          cs.status?.readyReplicas === REPLICAS &&
          cs.status?.currentRevision === cs.status?.updateRevision,
        timeoutMs,
      );
      return Date.now();
    },
  };
}

async function twoReplicas(ns: string): Promise<{ leader: ControllerProcess; follower: ControllerProcess }> {
  const [leader, follower] = await electedPair(client, (identity) => startControllerProcess(identity, ns), ns);
  return { leader, follower };
}

/** Ends a scenario: the rollout complete, its recovery recorded, nothing lost. */
async function finish(
  rollout: Rollout,
  row: { scenario: string; recoveryMs: number; measured: string },
  deletedOnPurpose = 0,
): Promise<void> {
  const doneAt = await rollout.completed();
  rollout.recorder.stop();
  recordRecovery({ ...row, rolloutMs: doneAt - rollout.startedAt });
  await expectNothingLost(client, rollout.ns, APP, rollout.recorder, {
    replicas: REPLICAS,
    before: rollout.before,
    deletedOnPurpose,
  });
}

describe('an in-place rollout under faults loses nothing', () => {
  it('a. survives its leader being SIGKILLed mid-rollout: the other replica takes over and finishes', async () => {
    const ns = await freshNamespace('fault-kill');
    const { leader, follower } = await twoReplicas(ns);
    const rollout = await rolloutUnderWay(ns);
    leader.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect((await leader.exited).signal).toBe('SIGKILL');
    const takenAt = await timeWhen(
      'the other replica to take the Lease',
      async () => (await leaseHolder(ns)) === follower.identity,
      30_000,
    );
    await finish(rollout, {
      scenario: 'a. leader SIGKILLed',
      recoveryMs: takenAt - killedAt,
      measured: 'the other replica holding the Lease',
    });
  }, 240_000);

  it('d. survives etcd being restarted mid-rollout', async () => {
    const ns = await freshNamespace('fault-etcd');
    await twoReplicas(ns);
    const rollout = await rolloutUnderWay(ns);
    let updatedBefore = 0;
    await restartComponent('etcd', {
      downMs: 3_000,
      whileDown: async () => void (updatedBefore = rollout.recorder.podsAt(IMAGE_V2).length),
    });
    await waitForApiServerReady();
    const servingAt = Date.now();
    const progressAt = await nextPodUpdated(ns, updatedBefore);
    await finish(rollout, {
      scenario: 'd. etcd restarted (down 3 s)',
      recoveryMs: progressAt - servingAt,
      measured: 'API ready → the next pod updated',
    });
  }, 420_000);

  it('e. survives the kubelet stopped for 45 s mid-rollout: the pods it had not restarted are updated once it is back', async () => {
    const ns = await freshNamespace('fault-kubelet');
    await twoReplicas(ns);
    const rollout = await rolloutUnderWay(ns);
    let runningBefore = 0;
    const { startedAt } = await restartComponent('kubelet', {
      downMs: 45_000,
      whileDown: async () => void (runningBefore = (await podsRunningV2(ns)).length),
    });
    // While the kubelet is away nothing can start the new image; what counts is how soon it does once back.
    const progressAt = await timeWhen(
      'the kubelet to run another pod at the new image',
      async () => (await podsRunningV2(ns)).length > runningBefore,
      180_000,
    );
    await finish(rollout, {
      scenario: 'e. kubelet stopped 45 s',
      recoveryMs: progressAt - startedAt,
      measured: 'kubelet started → the next pod Ready at v2',
    });
  }, 360_000);

  it('h. survives SIGTERM mid-rollout: in-flight work finishes, the Lease is released and the other replica continues within 2 s', async () => {
    const ns = await freshNamespace('fault-term');
    const { leader, follower } = await twoReplicas(ns);
    const rollout = await rolloutUnderWay(ns);
    leader.child.kill('SIGTERM');
    const exit = await leader.exited;
    const exitedAt = Date.now();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(leader.messages).toContain('released the lease');
    const takenAt = await timeWhen(
      'the other replica to take the Lease',
      async () => (await leaseHolder(ns)) === follower.identity,
      10_000,
    );
    expect(takenAt - exitedAt).toBeLessThan(2_000);
    await finish(rollout, {
      scenario: 'h. leader SIGTERMed',
      recoveryMs: takenAt - exitedAt,
      measured: 'the other replica holding the Lease',
    });
  }, 240_000);

  it('k. survives a pod deleted by hand mid in-place update: it is replaced at the new revision, the others updated once', async () => {
    const ns = await freshNamespace('fault-delete');
    await twoReplicas(ns);
    const rollout = await rolloutUnderWay(ns);
    const victim = rollout.recorder.podsAt(IMAGE_V2)[0]!;
    await client.delete(`/api/v1/namespaces/${ns}/pods/${victim}`);
    const deletedAt = Date.now();
    const replacedAt = await timeWhen(
      'a replacement pod to be Ready',
      async () => {
        const pods = await activePods(client, ns, APP);
        const fresh = pods.filter((p: Pod) => !rollout.before.has(p.metadata?.uid ?? ''));
        return fresh.some((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      },
      120_000,
    );
    await finish(
      rollout,
      { scenario: 'k. pod deleted mid-update', recoveryMs: replacedAt - deletedAt, measured: 'its replacement Ready' },
      1,
    );
  }, 240_000);

  it('j. survives another writer patching the same pods all along (a 409 storm)', async () => {
    const ns = await freshNamespace('fault-conflict');
    await twoReplicas(ns);
    const rollout = await rolloutUnderWay(ns);
    let writes = 0;
    let storming = true;
    const storm = (async (): Promise<void> => {
      while (storming) {
        const pods = await activePods(client, ns, APP);
        await Promise.all(
          pods.map((p) =>
            client
              .patch(
                `/api/v1/namespaces/${ns}/pods/${p.metadata?.name}`,
                { metadata: { annotations: { 'fault.tailor.dev/storm': String(writes++) } } },
                'merge',
              )
              .catch(() => undefined),
          ),
        );
        await sleep(50);
      }
    })();
    const stormAt = Date.now();
    let doneAt: number;
    try {
      doneAt = await rollout.completed();
    } finally {
      storming = false;
      await storm;
    }
    rollout.recorder.stop();
    expect(writes).toBeGreaterThan(50);
    recordRecovery({
      scenario: 'j. 409 storm',
      recoveryMs: doneAt - stormAt,
      measured: 'the rollout complete under the storm',
      rolloutMs: doneAt - rollout.startedAt,
    });
    await expectNothingLost(client, ns, APP, rollout.recorder, { replicas: REPLICAS, before: rollout.before });
  }, 240_000);

  it('i. survives its watches silently stopping: the watchdog relists and the rollout continues', async () => {
    const ns = await freshNamespace('fault-silent');
    const proxy = await startFaultProxy(loadTestKubeConfig());
    proxies.push(proxy);
    const only = await startControllerProcess('only-replica', ns, {
      kubeconfig: writeKubeconfig(proxy.kubeConfig),
      extraArgs: [
        '--lease-duration',
        '15s',
        '--renew-deadline',
        '10s',
        '--retry-period',
        '2s',
        '--request-timeout',
        '3s',
        '--watch-stall-timeout',
        '5s',
      ],
    });
    await eventually(
      'the replica to hold the Lease',
      async () => ((await leaseHolder(ns)) === only.identity ? true : undefined),
      30_000,
    );
    const rollout = await rolloutUnderWay(ns);
    const updatedBefore = rollout.recorder.podsAt(IMAGE_V2).length;
    proxy.freeze('open');
    const frozenAt = Date.now();
    const progressAt = await timeWhen(
      'the controller to update another pod',
      () => rollout.recorder.podsAt(IMAGE_V2).length > updatedBefore,
      90_000,
    );
    await finish(rollout, {
      scenario: 'i. watches go silent',
      recoveryMs: progressAt - frozenAt,
      measured: 'the next pod updated',
    });
    expect(only.messages).toContain('watch delivered nothing; relisting');
    expect(only.exit).toBeUndefined();
  }, 240_000);

  it('b. survives the API server frozen for longer than the Lease: the cut-off leader stops, a replica finishes', async () => {
    const ns = await freshNamespace('fault-freeze');
    const { leader } = await twoReplicas(ns);
    const rollout = await rolloutUnderWay(ns);
    const updatedBefore = rollout.recorder.podsAt(IMAGE_V2).length;
    const { continuedAt } = await freezeComponent('kube-apiserver', 8_000);
    // The leader could not renew within its renew deadline: it stopped acting and exited to be restarted.
    expect(await leader.exited).toEqual({ code: 1, signal: null });
    expect(leader.messages).toContain('lost the lease; stopping');
    const progressAt = await timeWhen(
      'a replica to update another pod',
      () => rollout.recorder.podsAt(IMAGE_V2).length > updatedBefore,
      90_000,
    );
    await finish(rollout, {
      scenario: 'b. API server frozen 8 s',
      recoveryMs: progressAt - continuedAt,
      measured: 'API back → the next pod updated',
    });
  }, 240_000);

  it('c. survives the API server being restarted mid-rollout', async () => {
    const ns = await freshNamespace('fault-apiserver');
    const { leader, follower } = await twoReplicas(ns);
    // Both replicas may lose the Lease while the server is down, or after, on a stalled renewal
    // (CI saw the new leader stop 23 s after the server was back); each then exits to be restarted,
    // as its Deployment's kubelet would. Without that, the rollout would wait for no one.
    let restartedReplicas = 0;
    // Not awaited: a replica that keeps the Lease never exits; afterEach kills what is left.
    for (const replica of [leader, follower])
      void restartedOnFailure(replica, (identity) => startControllerProcess(identity, ns)).then(
        (restarted) => void (restarted && (restartedReplicas += 1)),
        (err: unknown) => console.error(`fault: c. restarting ${replica.identity} failed: ${String(err)}`),
      );
    const rollout = await rolloutUnderWay(ns);
    const updatedBefore = rollout.recorder.podsAt(IMAGE_V2).length;
    let readyAt = 0;
    const restartedAt = Date.now();
    await restartApiServer({ onceReady: async () => void (readyAt = Date.now()) });
    // Issue 47 item 6: the next pod within 15 s of the API server serving again, or of the kubelets
    // seeing pods again and reporting every pod Ready, when those come later: the budget admits no
    // next pod before, and no drain ends before its kubelet sees the gate.
    const readiness = new ReadyTurns();
    let pods: Pod[] = [];
    const progressAt = await timeWhen(
      'a replica to update another pod',
      async () => {
        pods = await activePods(client, ns, APP);
        readiness.observe(pods);
        return atV2(pods).length > updatedBefore;
      },
      120_000,
    );
    const nodes = new Set(pods.map((p) => p.spec?.nodeName ?? ''));
    const watchesBackAt = kubeletPodWatchesBack(nodes, restartedAt, progressAt) ?? progressAt;
    const readyAgainAt = readiness.latest(pods.map((p) => p.metadata?.name ?? ''));
    const admittedAt = Math.max(readyAt, watchesBackAt, readyAgainAt);
    const after = (at: number): string => `+${(Math.max(0, at - readyAt) / 1000).toFixed(1)} s`;
    await finish(rollout, {
      scenario: 'c. API server restarted',
      recoveryMs: progressAt - admittedAt,
      measured: `API back, kubelets watch (${after(watchesBackAt)}), pods Ready (${after(readyAgainAt)}) → next pod`,
    });
    expect(progressAt - admittedAt).toBeLessThanOrEqual(NEXT_POD_AFTER_API_RESTART_MS);
    if (restartedReplicas > 0) console.log(`fault: c. replicas restarted after losing the Lease: ${restartedReplicas}`);
  }, 420_000);
});
