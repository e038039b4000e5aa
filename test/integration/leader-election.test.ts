// `tailor controller --leader-elect` as real processes (node dist/cli/main.js) against the real API
// server: two replicas elect exactly one leader on a coordination.k8s.io/v1 Lease; killing the
// leader hands the Lease to the other within 20 s; SIGTERM makes a controller exit on its own with
// code 0 within its grace period and release the Lease (so nothing was left holding the event
// loop); its /metrics and /readyz answer while it runs, and a health port it cannot bind ends it.
// Leadership does not depend on the CloneSet CRD: if it is missing, the replicas still elect (the
// informer keeps retrying its list).
// A leader cut off from the API server (a proxy that turns into a black hole) stops leading at
// its renew deadline — its in-flight reconcile is cancelled and its writes fenced — before the
// other replica may take the Lease; and releasing never erases a Lease a newer leader wrote.
// Owns: the processes it spawns, the proxies and the namespaces it creates. Must not: mock anything.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { API_GROUP, API_VERSION } from '../../src/api/types.js';
import { KubeClient, isNotFound } from '../../src/runtime/kube-client.js';
import { LeaderElector } from '../../src/runtime/leader-election.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { Manager } from '../../src/runtime/manager.js';
import {
  FAULT_LEASE,
  electedPair,
  freePort,
  killAllControllers,
  leaseHolder as sharedLeaseHolder,
  startControllerProcess,
  type ControllerProcess,
} from '../support/fault/controllers.js';
import { startFaultProxy } from '../support/fault/proxy.js';
import { kubeconfigPath, loadTestKubeConfig } from '../support/cluster/kube.js';
import { eventually } from '../support/cluster/testbed.js';

const cli = resolve(process.cwd(), 'dist/cli/main.js');
const LEASE = FAULT_LEASE;
const GRACE_MS = 10_000;
const kubeConfig = loadTestKubeConfig();
const client = new KubeClient(kubeConfig);
const namespaces: string[] = [];

type RunningController = ControllerProcess;

beforeAll(() => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: build first with 'npx tsc -p tsconfig.build.json'`);
});

afterAll(async () => {
  await killAllControllers();
  for (const ns of namespaces) await client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  client.close();
});

async function freshNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  await client.create('/api/v1/namespaces', { metadata: { name } });
  namespaces.push(name);
  return name;
}

/** A replica with the CLI's default leader-election timings and metrics on. */
async function startController(identity: string, namespace: string): Promise<RunningController> {
  return startControllerProcess(identity, namespace, { timings: 'default', metrics: true, graceMs: GRACE_MS });
}

const leaseHolder = (namespace: string): Promise<string | undefined> => sharedLeaseHolder(client, namespace);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `promise`'s value, or undefined if it takes longer than `ms`; leaves no timer behind. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

async function cloneSetApiServed(): Promise<boolean> {
  try {
    const group = await client.get<{ resources?: { name: string }[] }>(`/apis/${API_GROUP}/${API_VERSION}`);
    return (group.resources ?? []).some((r) => r.name === 'clonesets');
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

describe('two tailor controllers with --leader-elect', () => {
  it('elect exactly one leader, and the other takes the Lease over within 20 s of the leader being killed', async () => {
    const ns = await freshNamespace('tailor-le-pair');
    const [leader, follower] = await electedPair(client, (identity) => startController(identity, ns), ns);
    // Two more renew rounds change nothing: one leader, and only one ever said so.
    await sleep(5_000);
    expect(await leaseHolder(ns)).toBe(leader.identity);
    expect(leader.messages).toContain('became leader');
    expect(follower.messages).not.toContain('became leader');

    leader.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect((await leader.exited).signal).toBe('SIGKILL');
    let handedOverAt = 0;
    while (Date.now() - killedAt < 30_000) {
      if ((await leaseHolder(ns)) === follower.identity) {
        handedOverAt = Date.now();
        break;
      }
      await sleep(100);
    }
    expect(handedOverAt).toBeGreaterThan(0);
    expect(handedOverAt - killedAt).toBeLessThan(20_000);
    await eventually(
      'the new leader to log it',
      async () => (follower.messages.includes('became leader') ? true : undefined),
      5_000,
    );
    expect(follower.exit).toBeUndefined();
  }, 90_000);
});

describe('a running tailor controller', () => {
  let ns = '';
  let controller: RunningController;

  beforeAll(async () => {
    ns = await freshNamespace('tailor-le-single');
    controller = await startController('single', ns);
    await eventually(
      'the controller to hold the Lease',
      async () => ((await leaseHolder(ns)) === 'single' ? true : undefined),
      30_000,
    );
  }, 60_000);

  it('serves controller-runtime metrics with values on /metrics', async () => {
    const renewal = /^rest_client_requests_total\{[^}]*method="PATCH"[^}]*\} [1-9]\d*$/m;
    const text = await eventually(
      'a lease renewal to be counted',
      async () => {
        const body = await (await fetch(`http://127.0.0.1:${controller.metricsPort}/metrics`)).text();
        return renewal.test(body) ? body : undefined;
      },
      30_000,
    );
    expect(text).toMatch(/^controller_runtime_reconcile_total\{controller="cloneset",result="success"\} \d+$/m);
    expect(text).toMatch(/^controller_runtime_reconcile_total\{controller="cloneset",result="error"\} \d+$/m);
    expect(text).toMatch(/^workqueue_depth\{name="cloneset"\} \d+$/m);
    expect(text).toMatch(/^rest_client_requests_total\{[^}]*method="GET"[^}]*code="200"[^}]*\} [1-9]\d*$/m);
    expect(text).toMatch(renewal);
  }, 60_000);

  it('answers /readyz with 200 once its caches have synced (503 while the CloneSet API is not served)', async () => {
    const readyz = async (): Promise<{ status: number; body: string }> => {
      const response = await fetch(`http://127.0.0.1:${controller.healthPort}/readyz`);
      return { status: response.status, body: await response.text() };
    };
    if (await cloneSetApiServed()) {
      const ready = await eventually(
        '/readyz to pass',
        async () => {
          const r = await readyz();
          return r.status === 200 ? r : undefined;
        },
        30_000,
      );
      expect(ready.body).toContain('[+]informers-synced ok');
      expect(controller.messages).toContain('caches synced');
    } else {
      // Without the CRD the CloneSet informer keeps retrying its list: alive, leading, not ready.
      const notReady = await readyz();
      expect(notReady.status).toBe(503);
      expect(notReady.body).toContain('[-]informers-synced failed');
    }
    expect((await fetch(`http://127.0.0.1:${controller.healthPort}/healthz`)).status).toBe(200);
  }, 60_000);

  it('exits on its own with code 0 within the grace period after SIGTERM and releases the Lease', async () => {
    expect(controller.exit).toBeUndefined();
    controller.child.kill('SIGTERM');
    const signalledAt = Date.now();
    const exit = await within(controller.exited, GRACE_MS + 5_000);
    const tookMs = Date.now() - signalledAt;

    expect(exit).toEqual({ code: 0, signal: null });
    expect(tookMs).toBeLessThan(GRACE_MS);
    expect(await leaseHolder(ns)).toBe('');
    expect(controller.messages).toEqual(expect.arrayContaining(['released the lease', 'stopped']));
  }, 60_000);
});

describe('a tailor controller whose health port is taken', () => {
  it('exits with code 1 naming the address, instead of living on with only its metrics served', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const healthPort = (taken.address() as AddressInfo).port;
    try {
      const child = spawn(
        process.execPath,
        [
          cli,
          'controller',
          '--kubeconfig',
          kubeconfigPath(),
          '--namespace',
          'no-such-namespace',
          '--metrics-bind-address',
          `127.0.0.1:${await freePort()}`,
          '--health-probe-bind-address',
          `127.0.0.1:${healthPort}`,
        ],
        { env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
      // 'close', not 'exit': stderr is read to its end by then.
      const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
      const code = await within(exited, 10_000);
      if (code === undefined) child.kill('SIGKILL');

      expect(code).toBe(1);
      expect(stderr).toContain(`EADDRINUSE: address already in use 127.0.0.1:${healthPort}`);
    } finally {
      taken.close();
    }
  }, 30_000);
});

describe('a replica whose cache cannot sync', () => {
  it('still campaigns and wins the Lease, but starts no controller and is not ready', async () => {
    const ns = await freshNamespace('tailor-le-nosync');
    const healthPort = await freePort();
    const manager = new Manager({
      kubeConfig,
      logger: silentLogger(),
      component: 'tailor-test',
      healthAddress: `127.0.0.1:${healthPort}`,
      leaderElection: { namespace: ns, name: LEASE, identity: 'no-crd' },
    });
    // Like a CloneSet informer before its CRD is installed: every list answers 404 and is retried.
    const informer = manager.informer({ name: 'missing', path: `/apis/missing.tailor.dev/v1/namespaces/${ns}/things` });
    const reconciled: string[] = [];
    const controller = manager.controller({
      name: 'probe',
      concurrency: 1,
      reconcile: async (key) => {
        reconciled.push(key);
      },
    });
    controller.queue.add('probe-key');
    const run = manager.run();
    try {
      await eventually(
        'the replica to hold the Lease',
        async () => ((await leaseHolder(ns)) === 'no-crd' ? true : undefined),
        30_000,
      );
      await sleep(3_000);
      expect(manager.isLeader()).toBe(true);
      expect(informer.hasSynced()).toBe(false);
      expect(reconciled).toEqual([]);
      expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(503);
    } finally {
      await manager.stop();
    }
    expect(await run).toBe('stopped');
    expect(await leaseHolder(ns)).toBe('');
  }, 60_000);
});

describe('a leader cut off from the API server', () => {
  const timings = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 };

  it('stops leading at its renew deadline, cancelling its reconcile and fencing its writes, before the other replica takes the Lease', async () => {
    const ns = await freshNamespace('tailor-le-partition');
    const proxy = await startFaultProxy(kubeConfig);
    const cutOff = new Manager({
      kubeConfig: proxy.kubeConfig,
      logger: silentLogger(),
      component: 'tailor-test',
      leaderElection: { namespace: ns, name: LEASE, identity: 'cut-off', ...timings },
    });
    let cancelledAt = 0;
    let cancelReason = '';
    const controller = cutOff.controller({
      name: 'long-running',
      concurrency: 1,
      reconcile: async (_key, { signal }) => {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        cancelledAt = Date.now();
        cancelReason = String((signal.reason as Error | undefined)?.message);
      },
    });
    controller.queue.add('ns/acting');
    const cutOffRun = cutOff.run();
    const other = new Manager({
      kubeConfig,
      logger: silentLogger(),
      component: 'tailor-test',
      leaderElection: { namespace: ns, name: LEASE, identity: 'other', ...timings },
    });
    try {
      await eventually(
        'the first replica to lead and reconcile',
        async () => ((await leaseHolder(ns)) === 'cut-off' && controller.inFlight.size === 1 ? true : undefined),
        30_000,
      );
      const otherRun = other.run();
      await sleep(2_000); // the other replica has observed the Lease being renewed
      proxy.freeze();
      const frozenAt = Date.now();
      expect(await within(cutOffRun, timings.renewDeadlineMs + 3_000)).toBe('lost-lease');
      const stoppedAt = Date.now();
      let takenAt = 0;
      await eventually(
        'the other replica to take the Lease',
        async () => {
          if ((await leaseHolder(ns)) !== 'other') return undefined;
          takenAt = Date.now();
          return true;
        },
        30_000,
      );

      expect(cancelledAt).toBeGreaterThan(0);
      expect(cancelReason).toContain('lost the lease');
      expect(cancelledAt - frozenAt).toBeLessThanOrEqual(timings.renewDeadlineMs + 500);
      expect(stoppedAt).toBeLessThan(takenAt);
      await expect(
        cutOff.client.create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'late' } }),
      ).rejects.toThrow('lost the lease');
      await other.stop();
      expect(await otherRun).toBe('stopped');
    } finally {
      proxy.thaw();
      await cutOff.stop();
      await other.stop();
      await proxy.close();
    }
  }, 90_000);

  it('never erases a Lease that a newer leader wrote when it releases', async () => {
    const ns = await freshNamespace('tailor-le-release');
    const elector = new LeaderElector({
      client,
      namespace: ns,
      name: LEASE,
      identity: 'old-leader',
      ...timings,
      logger: silentLogger(),
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    });
    elector.start();
    try {
      await eventually('the elector to lead', async () => (elector.isLeader() ? true : undefined), 20_000);
      // A newer leader took the Lease over (as after a partition), without asking the old one.
      await client.patch(
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${LEASE}`,
        { spec: { holderIdentity: 'newer-leader' } },
        'merge',
      );
    } finally {
      await elector.stop();
    }
    expect(await leaseHolder(ns)).toBe('newer-leader');
  }, 60_000);
});
