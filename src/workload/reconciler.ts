// The CloneSet reconcile as four steps: observe (the CloneSet, its pods, revisions and claims from
// the caches, once the caches have seen our own writes), plan (planner.ts, pure: claims and
// creates included), act (executor.ts), then write the status the plan leads to with any failures
// folded in. A failed write is a
// condition plus an event, and the reconcile then fails so the key backs off; a refusal that
// retrying cannot fix backs off to the long end. Level-triggered and idempotent.
// Must not: decide anything itself, keep state between rounds other than expectations and when
// each status was last written or first differed (only to gather and space out count updates),
// or PUT typed objects.
import { ConditionReasons, EventReasons } from '../api/reasons.js';
import { CloneSetConditionTypes as Conditions, type CloneSetStatus } from '../api/types.js';
import type { InPlaceUpdater } from '../inplace/engine.js';
import type { InPlaceMetrics } from '../inplace/metrics.js';
import type { ResizeMetrics } from './resize-metrics.js';
import { SlowRetryError, WakeByError, type ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.js';
import { ownedIndexValue } from '../api/owner.js';
import type { Informer } from '../runtime/informer.js';
import type { Node, Pod, WireCloneSet } from '../api/wire.js';
import { parsePulledImages, type PulledImages } from '../api/prepull.js';
import { isNotFound, type KubeClient } from '../runtime/kube-client.js';
import type { Logger } from '../runtime/logger.js';
import { mergePatch } from '../api/json.js';
import { IntOrPercentError } from '../api/intorpercent.js';
import type { Claim } from './pure/claims.js';
import { PlanExecutor, type Failure } from './executor.js';
import { describeFailure } from './pure/failures.js';
import type { NodeEvidenceIndex } from './node-evidence.js';
import type { ConditionWrites } from './pure/intents.js';
import type { Plan } from './pure/round-plan.js';
import type { PlanInput, PrePullInput } from './pure/plan-input.js';
import { planReconcile } from './pure/planner.js';
import type { WorkloadKind } from './pure/kind.js';
import { kindOf, type DefaultedWireCloneSet } from './pure/pods.js';
import type { ResizeBackend } from './pure/resizes.js';
import { OWNER_INDEX, RevisionStore } from './revision-store.js';
import { objectKey } from '../runtime/store.js';
import { ORPHAN_INDEX, WORKLOAD_LABEL_INDEX } from './handlers.js';
import type { ControllerRevision } from '../api/revision.js';
import { sameStatus, statusChangeIsUrgent, statusWriteAt, withConditions, withFailures } from './pure/status.js';
import { readinessFacts, refusalStallsAt, withReadiness } from './pure/readiness-conditions.js';

/** The pods informer's index by spec.nodeName: the pods a node's pre-pull report concerns. */
export const NODE_INDEX = 'nodeName';

/** How long a key waits after a refusal that retrying cannot fix (the periodic resync comes too). */
export const SLOW_RETRY_MS = 5 * 60_000;

export interface WorkloadReconcilerDeps {
  /** The kind this reconciler runs (pure/kind.ts): its names, its view, its pods' identities. */
  kind: WorkloadKind;
  client: KubeClient;
  cloneSets: Informer<WireCloneSet>;
  pods: Informer<Pod>;
  /** What each node's pods say about its kubelet, kept from the pods informer's changes. */
  nodeEvidence: NodeEvidenceIndex;
  revisions: Informer<ControllerRevision>;
  /** The claims of spec.volumeClaimTemplates (claims.ts), indexed by owner. */
  claims?: Informer<Claim>;
  scaleExpectations: ScaleExpectations;
  /** Pod and CloneSet resourceVersions our own writes produced, keyed by UID. */
  podExpectations: ResourceVersionExpectations;
  events: EventRecorder;
  logger: Logger;
  inPlace: { updater: InPlaceUpdater; metrics?: InPlaceMetrics };
  resize: { backend: ResizeBackend; metrics?: ResizeMetrics };
  /** Nodes (trimmed to their pre-pull report) and how long a drain waits for a pull. */
  prePull?: { nodes: Informer<Node>; timeoutMs: number };
  now?: () => number;
  /** Characters of templates one round holds (round-templates.ts roundTemplateChars); default: four workers'. */
  roundTemplateChars?: number;
}

export class WorkloadReconciler {
  private readonly now: () => number;
  private readonly store: RevisionStore;
  private readonly executor: PlanExecutor;
  /** When each CloneSet's status was last written (key → ms): only to space out count updates. */
  private readonly statusWrittenAt = new Map<string, number>();
  /** Since when a round has seen a status change it held back (key → ms): only to gather count updates. */
  private readonly statusDiffersSince = new Map<string, number>();

  constructor(private readonly deps: WorkloadReconcilerDeps) {
    this.now = deps.now ?? Date.now;
    this.store = new RevisionStore(deps.client, deps.kind, deps.revisions, deps.roundTemplateChars);
    this.executor = new PlanExecutor({
      client: deps.client,
      plural: deps.kind.plural,
      ...(deps.kind.identity ? { identity: deps.kind.identity } : {}),
      events: deps.events,
      scaleExpectations: deps.scaleExpectations,
      inPlace: deps.inPlace,
      podExpectations: deps.podExpectations,
    });
  }

  /** `signal` aborts when leadership is lost or shutdown runs out of time: no intent starts after it. */
  async reconcile(key: string, signal?: AbortSignal, reconcileId?: string): Promise<ReconcileResult> {
    const log = this.deps.logger.child({ cloneset: key, ...(reconcileId ? { reconcileId } : {}) });
    const first = await this.observe(key, log);
    if ('done' in first) return first.done;
    const { observed, plan } = await this.planRound(first);
    const failures = await this.executor.execute(observed.stored, key, plan, signal);
    return this.conclude(observed, plan, failures);
  }

  /**
   * Step 2, and again once when the pods it would move run revisions whose templates the round
   * did not hold: those are fetched first, still within the round's bound (decision 81).
   */
  private async planRound(observed: Observed): Promise<{ observed: Observed; plan: Plan }> {
    const plan = await this.plan(observed);
    const wanted = plan.templatesWanted?.filter((r) => observed.input.revisions.deferred?.has(r)) ?? [];
    if (wanted.length === 0) return { observed, plan };
    const again = await this.withTemplates(observed, wanted);
    return { observed: again, plan: await this.plan(again) };
  }

  /** The observation with the templates of `wanted` held first, still within the round's bound. */
  private async withTemplates(observed: Observed, wanted: readonly string[]): Promise<Observed> {
    const { stored, cs, pods, input } = observed;
    const revisions = await this.store
      .templatesFor(cs, pods, input.revisions, wanted)
      .catch((err: unknown) => this.failRevision(stored, cs, err));
    return { ...observed, input: { ...input, revisions } };
  }

  /**
   * Step 1: the CloneSet, once the caches have seen our own writes, its pods, revisions and
   * claims, and what its nodes pre-pull: the planner's input. `done` when the round ends here.
   */
  private async observe(key: string, log: Logger): Promise<Observed | { done: ReconcileResult }> {
    const stored = this.deps.cloneSets.get(key);
    if (!stored) return { done: this.forget(key) };
    if (stored.metadata?.deletionTimestamp) return { done: undefined };
    const cs = this.deps.kind.view(stored);
    const waitFor = this.cacheLag(key, cs, log);
    if (waitFor !== undefined) return { done: waitFor };
    const pods = this.deps.pods.byIndex(OWNER_INDEX, ownedBy(cs));
    const revisions = await this.store.sync(cs, pods).catch((err: unknown) => this.failRevision(stored, cs, err));
    if (revisions === 'collision') return { done: { requeue: true } };
    const input: PlanInput = {
      cloneSet: cs,
      pods,
      revisions,
      now: this.now(),
      resizeBackend: this.deps.resize.backend,
      nodeEvidence: this.deps.nodeEvidence,
      claims: this.deps.claims?.byIndex(OWNER_INDEX, ownedBy(cs)) ?? [],
      orphans: this.orphansBeside(cs),
      setClaims: this.claimsLabelledWith(cs),
      ...(this.deps.kind.identity ? { identity: this.deps.kind.identity } : {}),
      ...(this.deps.kind.status ? { kindStatus: this.deps.kind.status } : {}),
      ...this.prePullInput(cs, pods),
    };
    return { key, stored, cs, pods, input, log };
  }

  /** A deleted CloneSet leaves nothing behind: its expectations, status timers and metric series. */
  private forget(key: string): ReconcileResult {
    this.deps.scaleExpectations.delete(key);
    this.statusWrittenAt.delete(key);
    this.statusDiffersSince.delete(key);
    const [namespace = '', name = ''] = key.split('/');
    // A deleted CloneSet's series would otherwise be scraped forever.
    this.deps.resize.metrics?.forget(namespace, name);
    return undefined;
  }

  /** Step 2 (planner.ts, pure). A spec that cannot be planned is an InvalidSpec condition and event, then a failure. */
  private async plan({ stored, cs, input, log }: Observed): Promise<Plan> {
    try {
      const plan = planReconcile(input);
      log.debug({ intents: plan.intents.map((i) => i.kind), budget: plan.budget }, 'plan');
      return plan;
    } catch (err) {
      if (!(err instanceof IntOrPercentError)) throw err;
      // Only a CloneSet stored before the CRD bounded these values gets here: say what to fix.
      const message = `the spec cannot be planned: ${err.message}; edit the ${kindOf(cs)}`;
      const info = { message, permanent: true, reason: ConditionReasons.InvalidSpec };
      return await this.failRound(stored, cs, Conditions.FailedUpdate, EventReasons.InvalidSpec, info, err);
    }
  }

  /** The claims labelled with the workload's name: a kind with identities keeps their owners (claim-owners.ts). */
  private claimsLabelledWith(cs: WireCloneSet): Claim[] {
    if (!this.deps.kind.identity || !this.deps.claims) return [];
    return this.deps.claims.byIndex(WORKLOAD_LABEL_INDEX, objectKey(cs));
  }

  /** The pods of the workload's namespace no controller owns: orphans it may adopt. */
  private orphansBeside(cs: WireCloneSet): Pod[] {
    return this.deps.pods.byIndex(ORPHAN_INDEX, cs.metadata?.namespace ?? '');
  }

  /**
   * Step 4: the status the plan leads to, failures folded in, and the revision history pruned
   * whatever else failed (a refusal that lasts must not keep every revision of the meantime: 15
   * kept with a limit of 2). Failures make the round fail, so the key backs off.
   */
  private async conclude(observed: Observed, plan: Plan, failures: readonly Failure[]): Promise<ReconcileResult> {
    const { key, stored, cs, pods, input } = observed;
    this.recordMetrics(cs, plan);
    const { status, wakeAt } = await this.writeRoundStatus(key, stored, cs, plan, failures, input.now);
    const pruneError = await this.store.prune(cs, pods, status).then(
      () => undefined,
      (err: unknown) => err,
    );
    if (failures.length > 0) {
      // One event when a refusal starts or changes, like its condition; the retries stay quiet.
      for (const f of failures)
        if (!alreadyReported(cs, f.condition, f.message))
          this.deps.events.event(stored, 'Warning', f.reason, f.message);
      throw reconcileFailure(failures, refusalStallsAt(status), input.now);
    }
    if (pruneError !== undefined) throw new Error('pruning ControllerRevisions failed', { cause: pruneError });
    if (wakeAt !== undefined) return { requeueAfterMs: Math.max(100, wakeAt - input.now) };
    return;
  }

  /** When to look again if the caches have not yet seen our own creates, deletes or writes. */
  private cacheLag(key: string, cs: DefaultedWireCloneSet, log: Logger): ReconcileResult | undefined {
    const { scaleExpectations, podExpectations } = this.deps;
    if (!scaleExpectations.satisfied(key)) {
      const pending = scaleExpectations.pending(key);
      log.debug({ pending }, 'waiting for the cache to observe our creates/deletes');
      return { requeueAfterMs: Math.max(100, Math.min(pending?.expiresInMs ?? 1000, 5000)) };
    }
    const uid = cs.metadata?.uid ?? '';
    podExpectations.observe(uid, cs.metadata?.resourceVersion ?? '');
    if (!podExpectations.satisfied(uid)) return { requeueAfterMs: 200 };
    for (const pod of this.deps.pods.byIndex(OWNER_INDEX, ownedIndexValue(cs.metadata?.namespace, uid))) {
      // The watch may deliver our own write before its response arrives: compare with the cache.
      podExpectations.observe(pod.metadata?.uid ?? '', pod.metadata?.resourceVersion ?? '');
      if (!podExpectations.satisfied(pod.metadata?.uid ?? '')) return { requeueAfterMs: 200 };
    }
    return undefined;
  }

  /** The pre-pull reports of these pods' nodes and the CloneSet's revisions' ages. */
  private prePullInput(cs: DefaultedWireCloneSet, pods: readonly Pod[]): { prePull?: PrePullInput } {
    const prePull = this.deps.prePull;
    if (prePull === undefined) return {};
    const reports = new Map<string, PulledImages>();
    for (const node of new Set(pods.map((p) => p.spec?.nodeName ?? ''))) {
      const report = parsePulledImages(prePull.nodes.get(node)?.metadata?.annotations);
      if (report.ok) reports.set(node, report.value);
    }
    const revisionCreatedAt = new Map<string, number>();
    for (const r of this.deps.revisions.byIndex(OWNER_INDEX, ownedBy(cs))) {
      const createdAt = Date.parse(r.metadata?.creationTimestamp ?? '');
      if (Number.isFinite(createdAt)) revisionCreatedAt.set(r.metadata?.name ?? '', createdAt);
    }
    return { prePull: { reports, revisionCreatedAt, timeoutMs: prePull.timeoutMs } };
  }

  /**
   * Writes the status the plan leads to, failures folded in as conditions, when statusWriteAt
   * says (status.ts): at once when urgent, count-only changes gathered for a moment and spaced
   * out. A round that holds a change back asks to be woken then, so the last state is always written.
   */
  private async writeRoundStatus(
    key: string,
    stored: WireCloneSet,
    cs: DefaultedWireCloneSet,
    plan: Plan,
    failures: readonly Failure[],
    now: number,
  ): Promise<{ status: CloneSetStatus; wakeAt: number | undefined }> {
    const written: ConditionWrites = { [Conditions.FailedRevision]: null };
    for (const f of failures)
      written[f.condition] = { status: 'True', reason: conditionReason(f.permanent), message: f.message };
    // A refusal folded in may stall the CloneSet (or say what a moving rollout retries).
    const status = withReadiness(
      withFailures(plan.status, cs.status, written, now),
      readinessFacts(cs.spec, cs.metadata?.generation, plan.limits),
      now,
    );
    if (sameStatus(cs.status, status)) {
      this.statusDiffersSince.delete(key);
      return { status, wakeAt: plan.wakeAt };
    }
    const differsSince = this.statusDiffersSince.get(key) ?? now;
    const urgent = failures.length > 0 || statusChangeIsUrgent(cs.status, status);
    const writeAt = statusWriteAt({ lastWriteAt: this.statusWrittenAt.get(key), differsSince }, urgent, now);
    if (writeAt > now) {
      this.statusDiffersSince.set(key, differsSince);
      return { status, wakeAt: Math.min(plan.wakeAt ?? Infinity, writeAt) };
    }
    if (await this.writeStatus(stored, cs, status)) this.statusWrittenAt.set(key, now);
    this.statusDiffersSince.delete(key);
    return { status, wakeAt: plan.wakeAt };
  }

  /** A revision that cannot be created is a FailedRevision condition and event, then a failure. */
  private async failRevision(stored: WireCloneSet, cs: DefaultedWireCloneSet, err: unknown): Promise<never> {
    const info = describeFailure('create the ControllerRevision of the template', err);
    return this.failRound(stored, cs, Conditions.FailedRevision, EventReasons.FailedRevision, info, err);
  }

  /** A round that cannot go on: its condition and (once) its event, then a failure that backs off. */
  private async failRound(
    stored: WireCloneSet,
    cs: DefaultedWireCloneSet,
    type: string,
    eventReason: string,
    info: { message: string; permanent: boolean; reason?: string },
    err: unknown,
  ): Promise<never> {
    const condition = {
      status: 'True' as const,
      reason: info.reason ?? conditionReason(info.permanent),
      message: info.message,
    };
    const now = this.now();
    const status = withReadiness(
      withConditions(cs.status ?? {}, { [type]: condition }, now),
      readinessFacts(cs.spec, cs.metadata?.generation),
      now,
    );
    if (!alreadyReported(cs, type, info.message)) this.deps.events.event(stored, 'Warning', eventReason, info.message);
    await this.writeStatus(stored, cs, status);
    throw reconcileFailure([{ ...info, cause: err }], refusalStallsAt(status), now);
  }

  private recordMetrics(cs: DefaultedWireCloneSet, plan: ReturnType<typeof planReconcile>): void {
    const metrics = this.deps.resize.metrics;
    metrics?.record(
      cs.metadata?.namespace ?? '',
      cs.metadata?.name ?? '',
      plan.status.resize ?? { resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 0 },
    );
    for (const seconds of plan.resizeDurations) metrics?.duration.observe(seconds);
    if (plan.events.some((e) => e.reason === EventReasons.NotInPlaceUpdatable))
      this.deps.inPlace.metrics?.updates.inc({ result: 'blocked' });
  }

  /** Writes status when it differs from the stored one (true when written); a refusal is an event and a failure. */
  private async writeStatus(stored: WireCloneSet, cs: DefaultedWireCloneSet, status: CloneSetStatus): Promise<boolean> {
    if (sameStatus(cs.status, status)) return false;
    try {
      const written = await this.deps.client.patchMetadata(
        `/apis/${cs.apiVersion}/namespaces/${cs.metadata?.namespace}/${this.deps.kind.plural}/${cs.metadata?.name}/status`,
        // Null out what disappeared (e.g. status.resize.pods once every resize finished).
        { status: mergePatch(cs.status ?? {}, status) },
        'merge',
      );
      this.deps.podExpectations.expectResourceVersion(cs.metadata?.uid ?? '', written.metadata?.resourceVersion ?? '');
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      const info = describeFailure('write status', err);
      this.deps.events.event(stored, 'Warning', EventReasons.FailedStatusUpdate, info.message);
      throw retryable(info.message, info.permanent, err);
    }
  }
}

/** One round's observation: the CloneSet as stored and defaulted, and the planner's input. */
interface Observed {
  readonly key: string;
  readonly stored: WireCloneSet;
  readonly cs: DefaultedWireCloneSet;
  /** Every pod the CloneSet owns (the owner index). */
  readonly pods: Pod[];
  readonly input: PlanInput;
  /** This round's logger: the CloneSet's key and the reconcile's ID in every line. */
  readonly log: Logger;
}

/** The owner index value of what this CloneSet owns (pods, revisions, claims). */
const ownedBy = (cs: DefaultedWireCloneSet): string => ownedIndexValue(cs.metadata?.namespace, cs.metadata?.uid);

const alreadyReported = (cs: DefaultedWireCloneSet, type: string, message: string): boolean =>
  cs.status?.conditions?.some((c) => c.type === type && c.status === 'True' && c.message === message) === true;

const conditionReason = (permanent: boolean): string =>
  permanent ? ConditionReasons.ApiRejected : ConditionReasons.ApiRefused;

/**
 * The round's failures as one error: permanent ones retry slowly; retryable ones back off, and
 * wake the round that turns a held refusal Stalled (`stallsAt`) if that comes first.
 */
function reconcileFailure(
  failures: readonly Pick<Failure, 'message' | 'permanent' | 'cause'>[],
  stallsAt: number | undefined,
  now: number,
): Error {
  const message = failures.map((f) => f.message).join('; ');
  const permanent = failures.every((f) => f.permanent);
  if (!permanent && stallsAt !== undefined)
    return new WakeByError(message, Math.max(100, stallsAt - now), { cause: failures[0]?.cause });
  return retryable(message, permanent, failures[0]?.cause);
}

function retryable(message: string, permanent: boolean, cause: unknown): Error {
  return permanent ? new SlowRetryError(message, SLOW_RETRY_MS, { cause }) : new Error(message, { cause });
}
