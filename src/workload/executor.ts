// Performs one round's plan: the planned events, then releases, creates and deletes (pod-control,
// with the claims the plan carries: created before their pod, deleted after it), then the
// lifecycle writes the plan spelled out, in-place drains, patches and settlements (inplace/engine),
// each write recorded as an expectation by the module that makes it. A failed intent does not stop the others; it becomes a
// Failure that names the condition to raise, with a message that is the same on every attempt.
// Events come from the catalogue in src/api/reasons.ts.
// Must not: decide anything (the planner has), write the CloneSet's status, or retry.
import PQueue from 'p-queue';
import { EventReasons, type DeleteReason } from '../api/reasons.js';
import { CloneSetConditionTypes as Conditions } from '../api/types.js';
import type { InPlaceUpdater } from '../inplace/engine.js';
import type { InPlaceMetrics } from '../inplace/metrics.js';
import type { EventRecorder } from '../runtime/events.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.js';
import { isNotFound, type KubeClient } from '../runtime/kube-client.js';
import { describeFailure } from './pure/failures.js';
import type { Intent } from './pure/intents.js';
import type { Plan } from './pure/round-plan.js';
import type { GateWrite } from '../inplace/pure/readiness-gate.js';
import { PodControl, PodControlError } from './pod-control.js';
import type { WireCloneSet, Pod } from '../api/wire.js';
import type { ClaimResize, PodIdentity } from './pure/kind.js';

export interface Failure {
  condition: typeof Conditions.FailedScale | typeof Conditions.FailedUpdate;
  reason: string;
  message: string;
  permanent: boolean;
  cause: unknown;
}

export interface ExecutorDeps {
  client: KubeClient;
  /** The kind's resource name, to read the workload again before it adopts (pure/kind.ts). */
  plural: string;
  events: EventRecorder;
  scaleExpectations: ScaleExpectations;
  /** The kind's identity on new pods and claims (pure/kind.ts); absent: none. */
  identity?: Pick<PodIdentity, 'decorate' | 'decorateClaim'>;
  inPlace: { updater: InPlaceUpdater; metrics?: InPlaceMetrics };
  /** Pod writes other than creates and deletes (lifecycle moves) are expected by resourceVersion. */
  podExpectations?: ResourceVersionExpectations;
}

/**
 * How many in-place pod writes are in flight at once. A round's writes hold its CloneSet's key:
 * at 1,000 pods a wave is ~100 drains, then ~100 patches, then ~100 completions, and each round
 * took 100/16 API round trips, a second under load, three times per wave. 32 halves that and
 * stays well inside the client's 64 sockets (the watches and events hold a few).
 */
export const IN_PLACE_WRITES_AT_ONCE = 32;

/** Deletions that scale the CloneSet; the others are part of an update. */
const SCALE_DELETES: ReadonlySet<DeleteReason> = new Set(['ScaleDown', 'PodsToDelete']);

type Of<K extends Intent['kind']> = Extract<Intent, { kind: K }>;

export class PlanExecutor {
  private readonly pods: PodControl;

  constructor(private readonly deps: ExecutorDeps) {
    this.pods = new PodControl(deps.client, deps.scaleExpectations, deps.identity);
  }

  /** Runs the plan; once `signal` aborts, no further write starts and the abort reason is thrown. */
  /**
   * Adopts the plan's orphans (said in one event) and releases the pods that left the selector
   * (one event each); a failure is the round's FailedUpdate.
   */
  private async adoptAndRelease(
    cs: WireCloneSet,
    adopts: readonly Of<'adopt'>[],
    releases: readonly Of<'release'>[],
    attempts: Attempts,
  ): Promise<void> {
    const { events } = this.deps;
    if (adopts.length > 0)
      await attempts.run(Conditions.FailedUpdate, EventReasons.FailedUpdate, 'adopt pods', [], async () => {
        const names = await this.pods.adopt(
          cs,
          this.deps.plural,
          adopts.map((a) => a.pod),
        );
        if (names.length > 0)
          events.event(
            cs,
            'Normal',
            EventReasons.AdoptedPod,
            `adopted orphan pod(s) its selector matches: ${names.join(', ')}`,
          );
      });
    for (const { pod } of releases) {
      const name = pod.metadata?.name ?? '';
      await attempts.run(Conditions.FailedUpdate, EventReasons.FailedUpdate, `release pod ${name}`, [], async () => {
        await this.pods.release(cs, pod);
        events.event(cs, 'Normal', EventReasons.ReleasedPod, `pod ${name} no longer matches the selector; released`);
      });
    }
  }

  async execute(cs: WireCloneSet, key: string, plan: Plan, signal?: AbortSignal): Promise<Failure[]> {
    const { claims } = plan;
    const { events } = this.deps;
    for (const e of plan.events) {
      if (e.on === 'workload' && e.batchPod !== undefined) events.batch(cs, e.type, e.reason, e.message, e.batchPod);
      else events.event(e.on === 'workload' ? cs : e.on, e.type, e.reason, e.message);
    }
    const attempts = new Attempts(signal);
    const byKind = <K extends Intent['kind']>(kind: K): Of<K>[] =>
      plan.intents.filter((i): i is Of<K> => i.kind === kind);

    await this.adoptAndRelease(cs, byKind('adopt'), byKind('release'), attempts);
    const creates = byKind('create');
    if (creates.length > 0) {
      await attempts.run(Conditions.FailedScale, EventReasons.FailedCreate, 'create pods', [], async () => {
        const names = await this.pods.create(cs, key, creates, plan.instanceIdsInUse, claims);
        events.event(
          cs,
          'Normal',
          EventReasons.SuccessfulCreate,
          `created ${names.length} pod(s): ${names.join(', ')}`,
        );
      });
    }
    for (const { pod, reason, message } of byKind('delete')) {
      const name = pod.metadata?.name ?? '';
      const condition = SCALE_DELETES.has(reason) ? Conditions.FailedScale : Conditions.FailedUpdate;
      await attempts.run(condition, EventReasons.FailedDelete, 'delete pod <pod>', [name], async () => {
        await this.pods.delete(key, pod);
        events.batch(cs, 'Normal', EventReasons.SuccessfulDelete, `deleted (${reason}): ${message}`, name);
        await this.pods.deleteClaims(cs, claims?.deleteWithPod.get(name) ?? []);
        if (reason === 'RecreateFallback') this.deps.inPlace.metrics?.updates.inc({ result: 'recreated' });
      });
    }
    await this.claimUpkeep(cs, plan, attempts);
    // In-place writes touch one pod each and no two intents name the same pod for them, so they
    // go out IN_PLACE_WRITES_AT_ONCE at a time: a 1,000-pod resize is not 2,000 writes in a row.
    const { updater } = this.deps.inPlace;
    const writes = plan.intents.flatMap((intent) => {
      const run = this.inPlaceWrite(cs, intent, updater);
      const name = intent.kind === 'create' ? '' : (intent.pod.metadata?.name ?? '');
      return run ? [{ what: `${intent.kind} pod <pod> in place`, name, run }] : [];
    });
    const inFlight = new PQueue({ concurrency: IN_PLACE_WRITES_AT_ONCE });
    await inFlight.addAll(
      writes.map(
        (w) => () => attempts.run(Conditions.FailedUpdate, EventReasons.FailedUpdate, w.what, [w.name], w.run),
      ),
    );
    return attempts.failures;
  }

  /**
   * The claims no pod takes back go now (disablePVCReuse), the workload's owner reference is put
   * on or taken off its claims, as its retention says (claim-owners.ts), a pending pod's missing
   * claims are made again, and claims are raised to their template's storage (kind.ts claimResizes).
   */
  private async claimUpkeep(cs: WireCloneSet, plan: Plan, attempts: Attempts): Promise<void> {
    await this.deleteOrphanedClaims(cs, plan.claims, attempts);
    for (const { claim, owner } of plan.claimOwners ?? []) {
      const name = claim.metadata?.name ?? '';
      await attempts.run(
        Conditions.FailedUpdate,
        EventReasons.FailedUpdate,
        `set the owners of claim ${name}`,
        [],
        () => this.pods.setClaimOwner(cs, claim, owner),
      );
    }
    for (const pod of plan.missingClaims ?? []) await this.makeMissingClaims(cs, pod, attempts);
    for (const resize of plan.claimResizes ?? []) await this.expandClaim(cs, resize, attempts);
  }

  /** A pending pod's missing claims made again (claim-owners.ts podsMissingClaims). */
  private async makeMissingClaims(cs: WireCloneSet, pod: Pod, attempts: Attempts): Promise<void> {
    const name = pod.metadata?.name ?? '';
    await attempts.run(
      Conditions.FailedScale,
      EventReasons.FailedCreate,
      'make the missing claims of pod <pod>',
      [name],
      async () => {
        await this.pods.createClaims(cs, pod);
        this.deps.events.batch(cs, 'Normal', EventReasons.SuccessfulCreate, 'made its missing claims again', name);
      },
    );
  }

  /** A claim's storage request raised to its template's (kind.ts claimResizes). */
  private async expandClaim(cs: WireCloneSet, { claim, storage }: ClaimResize, attempts: Attempts): Promise<void> {
    const name = claim.metadata?.name ?? '';
    await attempts.run(Conditions.FailedUpdate, EventReasons.FailedUpdate, `expand claim ${name}`, [], async () => {
      await this.pods.expandClaim(claim, storage);
      this.deps.events.batch(cs, 'Normal', EventReasons.ClaimExpanding, `storage request raised to ${storage}`, name);
    });
  }

  /** disablePVCReuse: the claims no live pod has go now (claims.ts). */
  private async deleteOrphanedClaims(cs: WireCloneSet, claims: Plan['claims'], attempts: Attempts): Promise<void> {
    const names = claims?.deleteNow ?? [];
    if (names.length === 0) return;
    await attempts.run(Conditions.FailedScale, EventReasons.FailedDelete, 'delete claims of replaced pods', [], () =>
      this.pods.deleteClaims(cs, names),
    );
  }

  private inPlaceWrite(cs: WireCloneSet, intent: Intent, updater: InPlaceUpdater): (() => Promise<void>) | undefined {
    switch (intent.kind) {
      case 'drain':
        return () => updater.drain(cs, intent.pod, intent.message);
      case 'patch':
        return () => updater.apply(cs, intent.pod, intent.step);
      case 'settle':
        return () => updater.settle(cs, intent.pod, intent.settlement);
      case 'markGateReady':
        return () => updater.markGateReady(intent.pod);
      case 'reroute':
        return () => updater.rerouteToKubelet(intent.pod, intent.resize);
      case 'lifecycle':
        return () => this.moveLifecycle(intent);
      case 'holdNotReady':
        return () => this.markNotReady(intent.pod, intent.state, intent.notReady);
      default:
        return undefined;
    }
  }

  /**
   * The move's writes in the plan's order (lifecycle.ts lifecycleWrites): the gate False first when
   * the hook marks the pod not ready, then the pod patch. A failed second write leaves a pod
   * merely not ready, which the next round moves again.
   */
  private async moveLifecycle({ pod, state, patch, notReady }: Of<'lifecycle'>): Promise<void> {
    try {
      if (notReady) await this.markNotReady(pod, state, notReady);
      const patched = await this.deps.client.patchMetadata(podPath(pod), patch, 'strategic');
      this.deps.podExpectations?.expectResourceVersion(
        pod.metadata?.uid ?? '',
        patched.metadata?.resourceVersion ?? '',
      );
    } catch (err) {
      if (!isNotFound(err)) throw new Error(`moving pod ${pod.metadata?.name} to ${state} failed`, { cause: err });
    }
  }

  /** The planned InPlaceUpdateReady False (`condition`) of a pod a hook holds in `state`. */
  private async markNotReady(pod: Pod, state: string, condition: GateWrite): Promise<void> {
    try {
      const patched = await this.deps.client.patchMetadata(
        `${podPath(pod)}/status`,
        { status: { conditions: [condition] } },
        'strategic',
      );
      this.deps.podExpectations?.expectResourceVersion(
        pod.metadata?.uid ?? '',
        patched.metadata?.resourceVersion ?? '',
      );
    } catch (err) {
      if (!isNotFound(err))
        throw new Error(`marking pod ${pod.metadata?.name} not ready for ${state} failed`, { cause: err });
    }
  }
}

const podPath = (pod: Pod): string => `/api/v1/namespaces/${pod.metadata?.namespace}/pods/${pod.metadata?.name}`;

/**
 * One execution's writes: none starts once `signal` has aborted (lost lease, shutdown), and a
 * failure is recorded once per condition, the first one winning.
 */
class Attempts {
  readonly failures: Failure[] = [];

  constructor(private readonly signal: AbortSignal | undefined) {}

  async run(
    condition: Failure['condition'],
    eventReason: string,
    what: string,
    volatile: string[],
    write: () => Promise<void>,
  ): Promise<void> {
    this.signal?.throwIfAborted();
    try {
      await write();
    } catch (err) {
      const cause = err instanceof PodControlError ? err.cause : err;
      const names = err instanceof PodControlError ? [...volatile, ...err.podNames] : volatile;
      const info = describeFailure(what, cause, names);
      if (!this.failures.some((f) => f.condition === condition)) {
        this.failures.push({
          condition,
          reason: eventReason,
          message: info.message,
          permanent: info.permanent,
          cause: err,
        });
      }
    }
  }
}
