// The node agent's restart in place (decision 15): which containers a pod's restart request asks
// it to stop. Stopping twice would restart twice, so only the container still running with the
// named ID is stopped, only for a CloneSet pod, and only for the pod's own revision. And how the
// actuator stops them: the preStop hook first, then StopContainer with the grace period left, in
// the background (reconcile returns at once; one slow stop does not hold another), as many at once
// as the slots of the pod, its namespace and the node allow (decision 78), retried when the stop
// fails, aborted when the agent stops.
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { trimPodForAgent } from '../../../src/agent/pure/cache.js';
import { PRESTOP_HOOKS_MAX_CHARS } from '../../../src/agent/pure/prestop-plan.js';
import { containersToStop, RestartActuator, SETTLE_MS, WAIT_FOR_SLOT_MS } from '../../../src/agent/restart.js';
import type { SlotLimits } from '../../../src/agent/pure/restart-slots.js';
import type { Pod } from '../../../src/api/wire.js';
import type { CallOptions, ExecSyncResult } from '../../../src/cri/types.js';
import { silentLogger } from '../../../src/runtime/logger.js';
import { buildPod, cloneSetOwner, runningStatus, waitingStatus, type Container } from '../../support/fixtures/pods.js';

function pod(opts: {
  request?: unknown;
  revision?: string;
  owned?: boolean;
  appId?: string;
  appRunning?: boolean;
}): Pod {
  return buildPod({
    name: 'web-a',
    labels: { 'controller-revision-hash': opts.revision ?? 'web-2' },
    annotations: opts.request === undefined ? {} : { 'apps.tailor.dev/restart-request': JSON.stringify(opts.request) },
    ownerReferences: opts.owned === false ? [] : [cloneSetOwner()],
    containers: [{ name: 'app', image: 'a' }],
    initContainers: [{ name: 'mesh', image: 'm', restartPolicy: 'Always' }],
    containerStatuses: [
      opts.appRunning === false
        ? waitingStatus('app', 'CrashLoopBackOff', {
            containerID: opts.appId ?? 'containerd://aaa',
            image: 'a',
            imageID: 'x',
            ready: true,
          })
        : runningStatus('app', { containerID: opts.appId ?? 'containerd://aaa', image: 'a', imageID: 'x' }),
    ],
    status: {
      initContainerStatuses: [runningStatus('mesh', { containerID: 'containerd://mmm', image: 'm', imageID: 'y' })],
    },
  });
}
const both = { revision: 'web-2', containers: { app: 'containerd://aaa', mesh: 'containerd://mmm' } };

describe('containersToStop', () => {
  it.each([
    [
      'the named containers running with the named IDs, sidecar included',
      pod({ request: both }),
      ['app:aaa', 'mesh:mmm'],
    ],
    ['a container already restarted (new ID)', pod({ request: both, appId: 'containerd://bbb' }), ['mesh:mmm']],
    ['a container not running', pod({ request: both, appRunning: false }), ['mesh:mmm']],
    ['a request of another revision', pod({ request: both, revision: 'web-3' }), []],
    ['a pod no CloneSet controls', pod({ request: both, owned: false }), []],
    ['no request', pod({}), []],
    ['a request that does not parse', pod({ request: { revision: 'web-2', containers: {} } }), []],
    // The pod GC fails the pods of a node out of service and leaves their statuses (decision 74).
    [
      'a Failed pod whose status still says running',
      { ...pod({ request: both }), status: { ...pod({ request: both }).status, phase: 'Failed' } },
      [],
    ],
  ])('%s', (_, subject, expected) => {
    expect(containersToStop(subject).map((c) => `${c.name}:${c.containerId}`)).toEqual(expected);
  });
});

// ------------------------------------------------------------------------------------ the actuator

type AskOptions = { preStop?: NonNullable<Container['lifecycle']>['preStop']; grace?: number; namespace?: string };

/** A CloneSet pod whose restart request names its one container `app` running as `id`. */
function asked(name: string, id: string, opts: AskOptions = {}): Pod {
  return askedAll(name, { app: id }, opts);
}

/** A CloneSet pod whose restart request names each of its containers (name → the ID it runs as). */
function askedAll(name: string, ids: Readonly<Record<string, string>>, opts: AskOptions = {}): Pod {
  const names = Object.keys(ids);
  return buildPod({
    name,
    ...(opts.namespace === undefined ? {} : { namespace: opts.namespace }),
    labels: { 'controller-revision-hash': 'web-2' },
    annotations: {
      'apps.tailor.dev/restart-request': JSON.stringify({
        revision: 'web-2',
        containers: Object.fromEntries(names.map((n) => [n, `containerd://${ids[n]}`])),
      }),
    },
    ownerReferences: [cloneSetOwner()],
    containers: names.map((n) => ({
      name: n,
      image: 'a',
      ...(opts.preStop ? { lifecycle: { preStop: opts.preStop } } : {}),
    })),
    containerStatuses: names.map((n) => runningStatus(n, { containerID: `containerd://${ids[n]}` })),
    ...(opts.grace === undefined ? {} : { spec: { terminationGracePeriodSeconds: opts.grace } }),
  });
}

/** `count` containers c0… running as `<prefix>0`…. */
const containers = (prefix: string, count: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`c${i}`, `${prefix}${i}`]));

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Settles when the signal aborts, as a cancelled CRI call does. */
const untilAborted = (options?: CallOptions): Promise<never> =>
  new Promise((_, reject) =>
    options?.signal?.addEventListener('abort', () => reject(new Error('Canceled')), { once: true }),
  );

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function harness(pods: Pod[], opts: { slots?: SlotLimits; settleMs?: number } = {}) {
  const byKey = new Map(pods.map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, p]));
  const calls: string[] = [];
  const retries: Array<[string, number]> = [];
  const events: string[] = [];
  let clock = 0;
  const cri = {
    exec: (_id: string, _cmd: readonly string[], _timeout: number, _o?: CallOptions): Promise<ExecSyncResult> =>
      Promise.resolve({ stdout: new Uint8Array(), stderr: new Uint8Array(), exitCode: 0 }),
    stop: (_id: string, _grace: number, _o?: CallOptions): Promise<void> => Promise.resolve(),
  };
  const actuator = new RestartActuator({
    pods: { get: (key) => byKey.get(key), list: () => [...byKey.values()] },
    cri: {
      execSync: (id, cmd, timeout, o) => {
        calls.push(`exec ${id} ${cmd.join(' ')} within ${timeout}s`);
        return cri.exec(id, cmd, timeout, o);
      },
      stopContainer: (id, grace = 0, o) => {
        calls.push(`stop ${id} grace ${grace}s`);
        return cri.stop(id, grace, o);
      },
    },
    retry: (key, delayMs) => retries.push([key, delayMs]),
    events: { event: (_pod, type, reason) => events.push(`${type} ${reason}`) },
    logger: silentLogger(),
    registry: new Registry(),
    now: () => clock,
    settleMs: opts.settleMs ?? 0,
    ...(opts.slots === undefined ? {} : { slots: opts.slots }),
  });
  return { actuator, cri, calls, retries, events, advance: (ms: number) => (clock += ms) };
}

const drain = { exec: { command: ['/bin/sh', '-c', 'drain'] } };

describe('RestartActuator', () => {
  it('returns before the stop ends; the stop runs the exec hook, then StopContainer with the whole seconds of grace left', async () => {
    const h = harness([asked('a', 'aaa', { preStop: drain, grace: 30 })]);
    const hook = deferred<ExecSyncResult>();
    h.cri.exec = () => hook.promise;
    expect(await h.actuator.reconcile('ns/a')).toBeUndefined();
    expect([h.calls, h.actuator.inFlightCount()]).toEqual([['exec aaa /bin/sh -c drain within 30s'], 1]);
    h.advance(12_700);
    hook.resolve({ stdout: new Uint8Array(), stderr: new Uint8Array(), exitCode: 0 });
    await flush();
    expect(h.calls).toEqual(['exec aaa /bin/sh -c drain within 30s', 'stop aaa grace 18s']);
    expect(h.actuator.inFlightCount()).toBe(0);
  });

  it('a container without a hook is stopped with the pod grace period, and a grace period of 0 with the 2 s minimum', async () => {
    const h = harness([asked('a', 'aaa', { grace: 45 }), asked('b', 'bbb', { preStop: drain, grace: 0 })]);
    await h.actuator.reconcile('ns/a');
    await h.actuator.reconcile('ns/b');
    await flush();
    expect(h.calls).toEqual(['stop aaa grace 45s', 'stop bbb grace 2s']);
  });

  it('a request settles before its stop, so the kubelet starts the container from the pod with its new metadata', async () => {
    const h = harness([asked('a', 'aaa')], { settleMs: SETTLE_MS });
    expect(await h.actuator.reconcile('ns/a')).toEqual({ requeueAfterMs: SETTLE_MS });
    h.advance(SETTLE_MS - 500);
    expect(await h.actuator.reconcile('ns/a')).toEqual({ requeueAfterMs: 500 });
    await flush();
    expect(h.calls).toEqual([]);
    h.advance(500);
    expect(await h.actuator.reconcile('ns/a')).toBeUndefined();
    await flush();
    expect(h.calls).toEqual(['stop aaa grace 30s']);
  });

  it('never stops a container twice: not while its stop runs, not after it stopped', async () => {
    const h = harness([asked('a', 'aaa')]);
    const stop = deferred<void>();
    h.cri.stop = () => stop.promise;
    await h.actuator.reconcile('ns/a');
    await h.actuator.reconcile('ns/a');
    stop.resolve();
    await flush();
    await h.actuator.reconcile('ns/a');
    await flush();
    expect(h.calls).toEqual(['stop aaa grace 30s']);
  });

  it('a hook that fails (exit code 1) is recorded as a FailedPreStopHook event and the container is stopped anyway', async () => {
    const h = harness([asked('a', 'aaa', { preStop: drain, grace: 20 })]);
    h.cri.exec = () => Promise.resolve({ stdout: new Uint8Array(), stderr: Buffer.from('no'), exitCode: 1 });
    await h.actuator.reconcile('ns/a');
    await flush();
    expect(h.calls).toEqual(['exec aaa /bin/sh -c drain within 20s', 'stop aaa grace 20s']);
    expect(h.events).toEqual(['Warning FailedPreStopHook']);
  });

  it("a hook past what the agent keeps of the pod's hooks: the container is not stopped, and that is said once", async () => {
    const command = ['/bin/sh', '-c', 'z'.repeat(PRESTOP_HOOKS_MAX_CHARS)];
    const h = harness([trimPodForAgent(asked('a', 'aaa', { preStop: { exec: { command } }, grace: 30 }))]);
    expect(await h.actuator.reconcile('ns/a')).toBeUndefined();
    expect(await h.actuator.reconcile('ns/a')).toBeUndefined();
    await flush();
    expect(h.calls).toEqual([]);
    expect(h.events).toEqual(['Warning PreStopHookNotKept']);
    expect(h.actuator.inFlightCount()).toBe(0);
  });

  it('a hook that outlives the grace period is cut at its end and the stop gets the 2 s minimum', async () => {
    const h = harness([asked('a', 'aaa', { preStop: drain, grace: 1 })]);
    h.cri.exec = (_id, _cmd, _t, o) => untilAborted(o);
    const started = Date.now();
    await h.actuator.reconcile('ns/a');
    h.advance(1_000);
    while (h.actuator.inFlightCount() > 0) await new Promise((r) => setTimeout(r, 20));
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(h.calls).toEqual(['exec aaa /bin/sh -c drain within 1s', 'stop aaa grace 2s']);
    expect(h.events).toEqual([]);
  });

  it("one slow stop does not hold another pod's: the other is stopped while the first hook still runs", async () => {
    const h = harness([asked('slow', 'sss', { preStop: drain, grace: 600 }), asked('fast', 'fff')]);
    h.cri.exec = (_id, _cmd, _t, o) => untilAborted(o);
    await h.actuator.reconcile('ns/slow');
    await h.actuator.reconcile('ns/fast');
    await flush();
    expect(h.calls).toEqual(['exec sss /bin/sh -c drain within 600s', 'stop fff grace 30s']);
    expect(h.actuator.inFlightCount()).toBe(1);
    await h.actuator.stop();
  });

  it('beyond the stops allowed at once, a request waits for a later reconcile', async () => {
    const h = harness([asked('a', 'aaa'), asked('b', 'bbb')], { slots: { node: 1, pod: 4 } });
    const stop = deferred<void>();
    h.cri.stop = () => stop.promise;
    expect(await h.actuator.reconcile('ns/a')).toBeUndefined();
    expect(await h.actuator.reconcile('ns/b')).toEqual({ requeueAfterMs: WAIT_FOR_SLOT_MS });
    stop.resolve();
    await flush();
    h.cri.stop = () => Promise.resolve();
    expect(await h.actuator.reconcile('ns/b')).toBeUndefined();
    await flush();
    expect(h.calls).toEqual(['stop aaa grace 30s', 'stop bbb grace 30s']);
  });

  it("the review's case: one pod's 64 hanging preStop hooks hold 4 slots, and another tenant's pod is stopped meanwhile", async () => {
    const hanging = askedAll('hang', containers('h', 64), { preStop: drain, grace: 3_600, namespace: 'tenant-a' });
    const h = harness([hanging, asked('web', 'www', { namespace: 'tenant-b' })]);
    h.cri.exec = (_id, _cmd, _t, o) => untilAborted(o);
    expect(await h.actuator.reconcile('tenant-a/hang')).toEqual({ requeueAfterMs: WAIT_FOR_SLOT_MS });
    expect(await h.actuator.reconcile('tenant-b/web')).toBeUndefined();
    await flush();
    expect(h.calls).toEqual([
      'exec h0 /bin/sh -c drain within 3600s',
      'exec h1 /bin/sh -c drain within 3600s',
      'exec h2 /bin/sh -c drain within 3600s',
      'exec h3 /bin/sh -c drain within 3600s',
      'stop www grace 30s',
    ]);
    expect(h.actuator.inFlightCount()).toBe(4);
    await h.actuator.stop();
  });

  it("a pod past its 4 slots waits, and its next container is stopped once one of the first four's stop ended", async () => {
    const h = harness([askedAll('big', containers('b', 5))]);
    const first = deferred<void>();
    h.cri.stop = (id, _g, o) => (id === 'b0' ? first.promise : untilAborted(o));
    expect(await h.actuator.reconcile('ns/big')).toEqual({ requeueAfterMs: WAIT_FOR_SLOT_MS });
    expect(await h.actuator.reconcile('ns/big')).toEqual({ requeueAfterMs: WAIT_FOR_SLOT_MS });
    first.resolve();
    await flush();
    expect(await h.actuator.reconcile('ns/big')).toBeUndefined();
    expect(h.calls).toEqual([
      'stop b0 grace 30s',
      'stop b1 grace 30s',
      'stop b2 grace 30s',
      'stop b3 grace 30s',
      'stop b4 grace 30s',
    ]);
    expect(h.retries).toEqual([]);
    await h.actuator.stop();
  });

  it("a namespace that asked counts in the shares before its pods are reconciled: the first one's second pod waits, the newcomer's starts", async () => {
    const hook = { preStop: drain, grace: 600 };
    const h = harness(
      [
        askedAll('a1', containers('x', 4), { ...hook, namespace: 'a' }),
        askedAll('a2', containers('y', 4), { ...hook, namespace: 'a' }),
        askedAll('b1', containers('z', 4), { ...hook, namespace: 'b' }),
      ],
      { slots: { node: 12, pod: 4 } },
    );
    h.cri.exec = (_id, _cmd, _t, o) => untilAborted(o);
    expect(await h.actuator.reconcile('a/a1')).toBeUndefined();
    expect(await h.actuator.reconcile('a/a2')).toEqual({ requeueAfterMs: WAIT_FOR_SLOT_MS });
    expect(await h.actuator.reconcile('b/b1')).toBeUndefined();
    const started = h.calls.map((c) => c.split(' ')[1]?.[0]);
    expect(started).toEqual(['x', 'x', 'x', 'x', 'z', 'z', 'z', 'z']);
    await h.actuator.stop();
  });

  it('a failed stop is retried after a growing delay, without running the hook again, with the grace left since the hook began', async () => {
    const h = harness([asked('a', 'aaa', { preStop: drain, grace: 30 })]);
    h.cri.stop = () => Promise.reject(new Error('Unavailable'));
    await h.actuator.reconcile('ns/a');
    await flush();
    await h.actuator.reconcile('ns/a');
    await flush();
    expect(h.retries).toEqual([
      ['ns/a', 1_000],
      ['ns/a', 2_000],
    ]);
    h.cri.stop = () => Promise.resolve();
    h.advance(5_000);
    await h.actuator.reconcile('ns/a');
    await flush();
    expect(h.calls).toEqual([
      'exec aaa /bin/sh -c drain within 30s',
      'stop aaa grace 30s',
      'stop aaa grace 30s',
      'stop aaa grace 25s',
    ]);
  });

  it('stop() aborts a hook under way and waits for it; the container is not stopped and nothing starts afterwards', async () => {
    const h = harness([asked('a', 'aaa', { preStop: drain }), asked('b', 'bbb')]);
    h.cri.exec = (_id, _cmd, _t, o) => untilAborted(o);
    await h.actuator.reconcile('ns/a');
    await h.actuator.stop();
    expect(h.actuator.inFlightCount()).toBe(0);
    await h.actuator.reconcile('ns/b');
    await flush();
    expect(h.calls).toEqual(['exec aaa /bin/sh -c drain within 30s']);
    expect([h.retries, h.events]).toEqual([[], []]);
  });

  it('stop() cancels a StopContainer under way', async () => {
    const h = harness([asked('a', 'aaa')]);
    let signal: AbortSignal | undefined;
    h.cri.stop = (_id, _g, o) => {
      signal = o?.signal;
      return untilAborted(o);
    };
    await h.actuator.reconcile('ns/a');
    await h.actuator.stop();
    expect(signal?.aborted).toBe(true);
    expect(h.retries).toEqual([]);
  });
});
