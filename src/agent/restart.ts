// The node agent's side of a restart in place (docs/architecture.md §3.3 An agent restart,
// docs/decisions/0015-restart-in-place.md): for a CloneSet pod on this node whose
// `apps.tailor.dev/restart-request` is of the pod's revision and names a container by the ID it
// runs now, stop that container once, as the kubelet would (pure/prestop-plan.ts decides the hook,
// prestop.ts runs it), in the background. The request needs no answer.
// Owns: which containers to stop (pure, containersToStop), the in-flight stops and their
// cancellation, the stop calls, and saying so when a stop's plan refuses it (a preStop hook the
// agent did not keep: decision 74).
// Must not: stop a container the request does not name by its current ID, act on a pod that no
// CloneSet controls, write anything to the pod, hold the reconcile worker while a stop runs, or
// decide itself how many stops a pod may start (pure/restart-slots.ts does, decision 78).
import { Counter, type Registry } from 'prom-client';
import { LRUCache } from 'lru-cache';
import { hasEnded } from '../api/pod.js';
import { EventReasons } from '../api/reasons.js';
import { parseRestartRequest } from '../api/schemas.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../api/types.js';
import type { Pod } from '../api/wire.js';
import type { CriClient } from '../cri/client.js';
import { ItemExponentialRateLimiter } from '../runtime/backoff.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Informer } from '../runtime/informer.js';
import { objectKey } from '../runtime/store.js';
import type { Logger } from '../runtime/logger.js';
import { workloadOwner } from './pure/authorize.js';
import { runPreStopHook } from './prestop.js';
import { stopGraceSeconds, stopPlan, type PreStopHook } from './pure/prestop-plan.js';
import { DEFAULT_SLOT_LIMITS, grantSlots, type PodStops, type SlotLimits } from './pure/restart-slots.js';

export interface ContainerToStop {
  readonly name: string;
  /** The runtime's container ID (the status's `containerd://…` without its scheme). */
  readonly containerId: string;
}

/** When a request that found no slot it may take is looked at again. */
export const WAIT_FOR_SLOT_MS = 1_000;

/**
 * How long a stop waits after this agent first saw its request: the kubelet, which watches the
 * same pod, must have the request's labels and annotations before it starts the container again,
 * or an env var read from them keeps its old value (decision 89).
 */
export const SETTLE_MS = 2_000;

/**
 * A CloneSet pod that has not ended: an ended pod runs nothing again, whatever a stale status says
 * (the pod GC fails the pods of a node out of service and leaves their statuses; decision 74).
 */
const restartable = (pod: Pod): boolean => workloadOwner(pod) !== undefined && !hasEnded(pod);

/** The containers the pod's restart request asks this agent to stop now; none when there is nothing to do. */
export function containersToStop(pod: Pod): ContainerToStop[] {
  const request = parseRestartRequest(pod.metadata?.annotations);
  if (!request.ok || !restartable(pod)) return [];
  if (request.value.revision !== pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH]) return [];
  const statuses = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])];
  return Object.entries(request.value.containers).flatMap(([name, id]) => {
    const status = statuses.find((s) => s.name === name);
    if (status?.state?.running === undefined || status.containerID !== id) return [];
    return [{ name, containerId: id.replace(/^[a-z0-9.+-]+:\/\//, '') }];
  });
}

export interface RestartActuatorOptions {
  /** This node's pods: the one reconciled, and the others whose stops share the node's slots. */
  readonly pods: Pick<Informer<Pod>, 'get' | 'list'>;
  readonly cri: Pick<CriClient, 'stopContainer' | 'execSync'>;
  /** Runs the pod's key again after `delayMs` (the work queue's addAfter): a failed stop is retried. */
  readonly retry: (key: string, delayMs: number) => void;
  readonly events?: Pick<EventRecorder, 'event'>;
  readonly logger: Logger;
  readonly registry: Registry;
  /** Stops at once on the node and of one pod; DEFAULT_SLOT_LIMITS (pure/restart-slots.ts). */
  readonly slots?: SlotLimits;
  /** How long a request settles before its stop; SETTLE_MS. */
  readonly settleMs?: number;
  /** Milliseconds, for the hook's elapsed time; Date.now. */
  readonly now?: () => number;
}

/** One container's stop under way. */
interface Stop {
  readonly pod: Pod;
  readonly target: ContainerToStop;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

interface InFlight {
  /** The pod's key, whose slots the stop holds. */
  readonly key: string;
  readonly namespace: string;
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

/**
 * Stops the containers restart requests name: the preStop hook first, bounded by the pod's grace
 * period, then CRI StopContainer with the grace period left, at least 2 s; a hook that fails is
 * logged, counted and recorded as a FailedPreStopHook event, and the stop goes on. The kubelet
 * starts the container again (restartPolicy Always) and its restart count rises by one; a
 * restarted container has a new ID, so it is never stopped twice, and the controller reads the
 * restart count.
 * A stop can take the whole grace period, so reconcile only starts it, and one slow container
 * does not hold the node's other restarts. How many of a pod's stops start is grantSlots' answer
 * over every stop of the node under way or asked for (at most 4 of a pod, a namespace's share, 64
 * on the node); the rest wait for a later reconcile. A stop that fails is retried through `retry`
 * with a growing delay (without its hook again when the hook already ran).
 */
export class RestartActuator {
  private readonly restarts: Counter<'result'>;
  private readonly hooks: Counter<'result'>;
  /**
   * Containers this process stopped: the cache shows the old ID until the kubelet reports the new
   * container, and a second stop in that window would restart it twice. Bounded; an entry is only
   * needed for seconds.
   */
  private readonly stopped = new LRUCache<string, true>({ max: 4096 });
  /** Containers whose stop was refused (stopPlan), so the refusal is said once. */
  private readonly refused = new LRUCache<string, true>({ max: 4096 });
  /** When the preStop hook of a container whose stop then failed started: a retry does not run it again. */
  private readonly hooked = new LRUCache<string, number>({ max: 4096 });
  /** Stops under way, by container ID. */
  private readonly inFlight = new Map<string, InFlight>();
  /** When this agent first saw a request to stop each container, by container ID (SETTLE_MS). */
  private readonly firstSeen = new LRUCache<string, number>({ max: 4096 });
  /** Delays of failed stops, by pod key; forgotten when the pod has nothing left to stop. */
  private readonly retryDelay = new ItemExponentialRateLimiter({ baseDelayMs: 1_000, maxDelayMs: 60_000 });
  private closed = false;

  constructor(private readonly options: RestartActuatorOptions) {
    this.restarts = new Counter({
      name: 'tailor_agent_container_restarts_total',
      help: 'Containers the node agent was asked to stop for a restart in place, by result (stopped, aborted, failed, refused)',
      labelNames: ['result'],
      registers: [options.registry],
    });
    this.hooks = new Counter({
      name: 'tailor_agent_prestop_hooks_total',
      help: 'preStop hooks the node agent ran before a restart in place, by result (completed, failed, timeout, aborted)',
      labelNames: ['result'],
      registers: [options.registry],
    });
  }

  /** How many stops are under way (for tests and the shutdown log). */
  inFlightCount(): number {
    return this.inFlight.size;
  }

  /**
   * Starts the stops the pod's request asks for once settled (SETTLE_MS), as many as its slots
   * allow (the rest are looked at again after WAIT_FOR_SLOT_MS); returns at once, without waiting
   * for them.
   */
  reconcile(key: string): Promise<ReconcileResult> {
    const pod = this.options.pods.get(key);
    if (pod === undefined || this.wanted(pod).length === 0) this.retryDelay.forget(key);
    if (pod === undefined) return Promise.resolve(undefined);
    const { settled, settlesInMs = Infinity } = this.settle(this.waiting(key, pod));
    const slotInMs = settled.length > 0 && !this.startGranted(key, pod, settled) ? WAIT_FOR_SLOT_MS : Infinity;
    const againInMs = Math.min(settlesInMs, slotInMs);
    return Promise.resolve(Number.isFinite(againInMs) ? { requeueAfterMs: againInMs } : undefined);
  }

  /** Starts as many of the pod's settled stops as its slots allow; false when some wait for a slot. */
  private startGranted(key: string, pod: Pod, settled: readonly ContainerToStop[]): boolean {
    const grant = grantSlots(key, this.nodeStops(key, pod, settled.length), this.options.slots ?? DEFAULT_SLOT_LIMITS);
    for (const target of settled.slice(0, grant.granted)) this.start(key, pod, target);
    if (grant.waitsOn === undefined) return true;
    this.options.logger.debug(
      { pod: key, started: grant.granted, waiting: settled.length - grant.granted, waitsOn: grant.waitsOn },
      'restart in place waits for a slot',
    );
    return false;
  }

  /**
   * Of the stops that wait, those whose request this agent saw at least settleMs ago, and when the
   * first of the others will have settled.
   */
  private settle(waiting: readonly ContainerToStop[]): { settled: ContainerToStop[]; settlesInMs?: number } {
    const now = (this.options.now ?? Date.now)();
    const settleMs = this.options.settleMs ?? SETTLE_MS;
    const left = waiting.map((target) => {
      const seen = this.firstSeen.get(target.containerId) ?? now;
      this.firstSeen.set(target.containerId, seen);
      return seen + settleMs - now;
    });
    const settled = waiting.filter((_, i) => (left[i] ?? 0) <= 0);
    const soonest = Math.min(...left.filter((ms) => ms > 0));
    return Number.isFinite(soonest) ? { settled, settlesInMs: soonest } : { settled };
  }

  /** The containers the pod's request asks to stop now; none once the pod is being deleted. */
  private wanted(pod: Pod): ContainerToStop[] {
    return pod.metadata?.deletionTimestamp ? [] : containersToStop(pod);
  }

  /** The pod's wanted stops that have not started: neither stopped nor under way. */
  private notStarted(pod: Pod): ContainerToStop[] {
    return this.wanted(pod).filter((t) => !this.stopped.has(t.containerId) && !this.inFlight.has(t.containerId));
  }

  /** The pod's stops that wait for a slot: not started, and not refused by their plan (said here, once). */
  private waiting(key: string, pod: Pod): ContainerToStop[] {
    return this.closed ? [] : this.notStarted(pod).filter((target) => !this.refuse(key, pod, target));
  }

  /**
   * Every pod of the node that holds or waits for stops, the reconciled one with its `waiting`
   * stops. The other pods' waiting stops are read from the cache, so a namespace that asked counts
   * in the shares before its own pods are reconciled (their refusals are said when they are).
   */
  private nodeStops(key: string, pod: Pod, waiting: number): PodStops[] {
    const byPod = new Map<string, PodStops>();
    const add = (stops: PodStops): void => {
      const was = byPod.get(stops.pod);
      byPod.set(stops.pod, was ? { ...was, held: was.held + stops.held, waiting: was.waiting + stops.waiting } : stops);
    };
    for (const op of this.inFlight.values()) add({ pod: op.key, namespace: op.namespace, held: 1, waiting: 0 });
    for (const other of this.options.pods.list()) {
      const otherKey = objectKey(other);
      if (otherKey === key) continue;
      const unrefused = this.notStarted(other).filter((t) => stopPlan(other, t.name).refused === undefined);
      add({ pod: otherKey, namespace: other.metadata?.namespace ?? '', held: 0, waiting: unrefused.length });
    }
    add({ pod: key, namespace: pod.metadata?.namespace ?? '', held: 0, waiting });
    return [...byPod.values()];
  }

  /**
   * True when the stop's plan refuses it (a preStop hook past what the agent keeps:
   * pure/prestop-plan.ts): then the container keeps running, said once per container in a Warning event
   * and the log; the pod stays drained and the controller's RolloutBlocked names it after a minute.
   */
  private refuse(key: string, pod: Pod, target: ContainerToStop): boolean {
    const refused = stopPlan(pod, target.name).refused;
    if (refused === undefined) return false;
    if (this.refused.has(target.containerId)) return true;
    this.refused.set(target.containerId, true);
    this.restarts.inc({ result: 'refused' });
    this.options.logger.warn({ pod: key, container: target.name }, refused);
    this.options.events?.event(pod, 'Warning', EventReasons.PreStopHookNotKept, refused);
    return true;
  }

  /**
   * Aborts every stop under way and waits for all of them to end; no stop starts afterwards. A
   * hook cut short leaves its container running under its old ID, so the next agent carries the
   * request out (running the hook again).
   */
  async stop(): Promise<void> {
    this.closed = true;
    const all = [...this.inFlight.values()];
    if (all.length > 0)
      this.options.logger.info(
        { stops: all.length },
        'agent stopping: restarts in place under way are left to the next agent',
      );
    for (const op of all) op.abort.abort(new Error('the node agent is stopping'));
    await Promise.all(all.map((op) => op.done));
  }

  private start(key: string, pod: Pod, target: ContainerToStop): void {
    const abort = new AbortController();
    const log = this.options.logger.child({ pod: key, container: target.name, containerId: target.containerId });
    const done = this.restart({ pod, target, signal: abort.signal, log })
      .then((outcome) => {
        this.restarts.inc({ result: outcome });
        if (outcome === 'stopped') log.info('stopped a container for a restart in place');
      })
      .catch((err: unknown) => {
        this.restarts.inc({ result: 'failed' });
        const delayMs = this.retryDelay.when(key);
        log.error(
          { err, retryInMs: delayMs },
          `stopping container ${target.name} of pod ${key} for a restart in place failed`,
        );
        if (!this.closed) this.options.retry(key, delayMs);
      })
      .finally(() => this.inFlight.delete(target.containerId));
    this.inFlight.set(target.containerId, { key, namespace: pod.metadata?.namespace ?? '', abort, done });
  }

  /** The hook, then the stop; 'aborted' when the agent stopped first. Rejects when the stop failed. */
  private async restart(op: Stop): Promise<'stopped' | 'aborted'> {
    const now = this.options.now ?? Date.now;
    const { target, signal } = op;
    const plan = stopPlan(op.pod, target.name);
    let hookStarted = this.hooked.get(target.containerId);
    if (plan.hook !== undefined && hookStarted === undefined) {
      hookStarted = now();
      await this.runHook(op, plan.hook, plan.graceSeconds);
      this.hooked.set(target.containerId, hookStarted);
    }
    if (signal.aborted) return 'aborted';
    const graceSeconds = stopGraceSeconds(plan.graceSeconds, hookStarted === undefined ? 0 : now() - hookStarted);
    try {
      await this.options.cri.stopContainer(target.containerId, graceSeconds, { signal });
    } catch (err) {
      if (signal.aborted) return 'aborted';
      throw new Error(`CRI StopContainer with a grace period of ${graceSeconds} s`, { cause: err });
    }
    this.stopped.set(target.containerId, true);
    this.hooked.delete(target.containerId);
    return 'stopped';
  }

  /** Runs the hook within the grace period; never throws (a failed hook is reported, the stop goes on). */
  private async runHook({ pod, target, signal, log }: Stop, hook: PreStopHook, graceSeconds: number): Promise<void> {
    const timeUp = new AbortController();
    // setTimeout fires at once past 2^31 - 1 ms (24.8 days): a longer grace period waits that long.
    const boundMs = Math.min(graceSeconds * 1000, 2 ** 31 - 1);
    const timer = setTimeout(() => timeUp.abort(new Error(`the grace period of ${graceSeconds} s ran out`)), boundMs);
    try {
      await runPreStopHook(hook, {
        cri: this.options.cri,
        containerId: target.containerId,
        boundSeconds: graceSeconds,
        signal: AbortSignal.any([signal, timeUp.signal]),
      });
      this.hooks.inc({ result: 'completed' });
      log.info({ hook: hook.kind }, 'preStop hook completed');
    } catch (err) {
      const result = signal.aborted ? 'aborted' : timeUp.signal.aborted ? 'timeout' : 'failed';
      this.hooks.inc({ result });
      if (result === 'aborted') return;
      log.warn(
        { err, hook: hook.kind, graceSeconds },
        result === 'timeout' ? 'preStop hook not completed in the grace period' : 'preStop hook failed',
      );
      // As the kubelet: the event does not carry the hook's message, which may hold secrets.
      if (result === 'failed')
        this.options.events?.event(
          pod,
          'Warning',
          'FailedPreStopHook',
          `PreStopHook failed (container ${target.name})`,
        );
    } finally {
      clearTimeout(timer);
    }
  }
}
