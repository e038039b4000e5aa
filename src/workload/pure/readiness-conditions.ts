// The standard conditions kstatus (sigs.k8s.io/cli-utils pkg/kstatus: Flux's health checks, Helm
// 4's --wait, kpt) reads on a custom resource, derived from a CloneSet's status and the few spec
// facts that say what the user holds back: `Reconciling` True while a rollout, a scale, pods
// becoming available or a resize move; `Stalled` True when the CloneSet cannot reach its spec
// without someone acting (the progress deadline passed, a resize is Infeasible and the strategy
// waits, or recreates it where the spec lets the budget never admit that, or the API server
// refuses the work for good or keeps refusing it for a minute). Both are always written, False when they
// do not hold (done, paused, held by a partition, OnDelete), so `kubectl wait
// --for=condition=Reconciling=false` finds a value; kstatus reads False as absent
// (docs/decisions/0022-kstatus-conditions.md). Kruise's own conditions are read, never changed.
// Pure: the clock comes in as an argument. Must not: decide scale or update actions, or change
// any condition but these two.
import { ConditionReasons, ProgressingReasons, ReconcilingReasons, StalledReasons } from '../../api/reasons.js';
import { CloneSetConditionTypes as Types, type CloneSetCondition, type CloneSetStatus } from '../../api/types.js';
import type { DefaultedCloneSetSpec } from '../../api/defaults.js';
import type { ConditionWrite } from './intents.js';
import { setCondition } from './status.js';
import { recreateEverAdmitted } from './budget.js';
import { resolveRolloutLimits, type RolloutLimits } from './limits.js';
import { IntOrPercentError } from '../../api/intorpercent.js';

/** What the spec says about the rollout beyond the status: the desired count and what is held on purpose. */
export interface ReadinessFacts {
  /** spec.replicas. */
  replicas: number;
  /** updateStrategy.paused: no pod moves to the update revision. */
  paused: boolean;
  /** updateStrategy.type OnDelete: pods move only when someone deletes them. */
  onDelete: boolean;
  /** An Infeasible resize is left waiting (InPlaceOnly, or resizeStrategy.onInfeasible Wait), never recreated. */
  resizeWaitsOnInfeasible: boolean;
  /**
   * Why the budget can never admit a recreate, read from the spec (budget.ts
   * recreateEverAdmitted); absent when it can. An Infeasible resize to be recreated is then Stalled.
   */
  recreateNeverAdmitted?: string;
  /** metadata.generation: a status whose observedGeneration is behind has not acted on the spec yet. */
  generation?: number;
}

type Spec = Pick<DefaultedCloneSetSpec, 'replicas' | 'updateStrategy'>;

/** `limits`: the round's, when the planner resolved them; else resolved here from the spec. */
export function readinessFacts(spec: Spec, generation?: number, limits?: RolloutLimits): ReadinessFacts {
  const strategy = spec.updateStrategy;
  const neverAdmitted = whyRecreateNeverAdmitted(spec, limits);
  return {
    replicas: spec.replicas,
    paused: strategy.paused,
    onDelete: strategy.type === 'OnDelete',
    resizeWaitsOnInfeasible: strategy.type === 'InPlaceOnly' || strategy.resizeStrategy.onInfeasible !== 'Recreate',
    ...(neverAdmitted !== undefined ? { recreateNeverAdmitted: neverAdmitted } : {}),
    ...(generation !== undefined ? { generation } : {}),
  };
}

/** The spec's limits as the planner resolves them (a pause or OnDelete uses no surge); undefined for a value the CRD did not bound. */
function specLimits(spec: Spec): RolloutLimits | undefined {
  const { replicas, updateStrategy: u } = spec;
  const held = u.paused || u.type === 'OnDelete';
  try {
    return resolveRolloutLimits({ replicas, maxUnavailable: u.maxUnavailable, maxSurge: u.maxSurge, paused: held });
  } catch (err) {
    // A value the CRD did not bound when the object was stored: the round's InvalidSpec says so.
    if (err instanceof IntOrPercentError) return undefined;
    throw err;
  }
}

/**
 * What in the spec keeps the budget from ever admitting a recreate, in the limits the planner
 * resolves (a pause or OnDelete uses no surge, as in the planner); undefined when it can.
 */
function whyRecreateNeverAdmitted(spec: Spec, roundLimits: RolloutLimits | undefined): string | undefined {
  const { updateStrategy: u } = spec;
  const limits = roundLimits ?? specLimits(spec);
  if (limits === undefined || recreateEverAdmitted(limits)) return undefined;
  const lower = 'or lower the resources the template asks for';
  const [surge, fix] = u.paused
    ? ['updateStrategy.paused uses no surge', `unpause it, raise updateStrategy.maxUnavailable ${lower}`]
    : u.type === 'OnDelete'
      ? ['updateStrategy.type OnDelete uses no surge', `raise updateStrategy.maxUnavailable ${lower}`]
      : ['maxSurge is 0', `raise updateStrategy.maxUnavailable or maxSurge, ${lower}`];
  return `maxUnavailable ${u.maxUnavailable} resolves to 0 of ${spec.replicas} pods and ${surge}; ${fix}`;
}

/**
 * A refusal that retrying may fix (quota, RBAC, a conflict) held this long is a refusal the API
 * server keeps making: Stalled, until someone acts (decision 75).
 */
export const REFUSED_FOR_LONG_MS = 60_000;

export interface Readiness {
  reconciling: ConditionWrite;
  stalled: ConditionWrite;
}

/** Condition reasons that mean retrying cannot succeed: the CloneSet or its template must change. */
const PERMANENT_REFUSALS: ReadonlySet<string> = new Set([
  ConditionReasons.ApiRejected,
  ConditionReasons.InvalidSpec,
  ConditionReasons.NotInPlaceUpdatable,
]);

/** Kruise's and Tailor's failure conditions, in the order a Stalled message names them. */
const FAILURE_TYPES = [Types.FailedRevision, Types.FailedScale, Types.FailedUpdate] as const;

const MAX_MESSAGE = 1000;
const clip = (text: string): string => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 1)}…` : text);

const NOT_STALLED: ConditionWrite = {
  status: 'False',
  reason: StalledReasons.NotStalled,
  message: 'no missed deadline, infeasible resize or refused write holds the workload',
};

/** The numbers the decision reads, missing ones as 0 (the CRD defaults them so, too). */
interface Counts {
  desired: number;
  replicas: number;
  updated: number;
  updatedAvailable: number;
  available: number;
  /** Pods that must run the update revision: expectedUpdatedReplicas (a partition's). */
  target: number;
  revision: string;
  /** currentRevision is not yet the update revision: a rollout began and has not reached every pod. */
  rolloutOpen: boolean;
  paused: boolean;
  onDelete: boolean;
  /** The UpdateHeld condition is True: every pod is held back (decision 97). */
  updateHeld: boolean;
  /** Nothing moves to the update revision on purpose: paused, OnDelete, or UpdateHeld. */
  held: boolean;
}

const isTrue = (status: CloneSetStatus, type: string): boolean =>
  status.conditions?.some((c) => c.type === type && c.status === 'True') === true;

function countsOf(status: CloneSetStatus, facts: ReadinessFacts): Counts {
  const desired = facts.replicas;
  const updateHeld = isTrue(status, Types.UpdateHeld);
  return {
    desired,
    replicas: status.replicas ?? 0,
    updated: status.updatedReplicas ?? 0,
    updatedAvailable: status.updatedAvailableReplicas ?? 0,
    available: status.availableReplicas ?? 0,
    target: Math.min(status.expectedUpdatedReplicas ?? desired, desired),
    revision: status.updateRevision ?? '',
    rolloutOpen: status.currentRevision !== status.updateRevision,
    paused: facts.paused,
    onDelete: facts.onDelete,
    updateHeld,
    held: facts.paused || facts.onDelete || updateHeld,
  };
}

type Find = (type: string) => CloneSetCondition | undefined;
type Verdict = { reason: string; message: string };

/**
 * The Reconciling and Stalled the status leads to. Stalled first (then Reconciling is False: kstatus
 * reads Reconciling first); otherwise what still moves, in the order a round works (pods left to
 * update, the pod count, pods becoming available, resizes); otherwise why nothing moves (paused,
 * OnDelete, a partition, or complete). A wait for availability keeps the reason of the work it
 * finishes (a rollout or a scale) from the previous status.
 */
export function decideReadiness(status: CloneSetStatus, facts: ReadinessFacts, now?: number): Readiness {
  const conditions = status.conditions ?? [];
  const find: Find = (type) => conditions.find((c) => c.type === type);
  const c = countsOf(status, facts);
  const stalled = refusedForGood(find, now) ?? infeasibleResize(status, facts, find) ?? deadlineExceeded(c, find);
  if (stalled) {
    return {
      stalled: { status: 'True', ...stalled },
      reconciling: {
        status: 'False',
        reason: ReconcilingReasons.Stalled,
        message: `stalled (${stalled.reason}): see the Stalled condition`,
      },
    };
  }
  const moves = notObserved(status, facts) ?? whatMoves(c, status, find);
  if (moves) {
    // A refusal that retrying may fix (quota, conflict): the work is still under way, and says so.
    const retrying = FAILURE_TYPES.map(find).find((x) => x?.status === 'True');
    const message = retrying
      ? `${moves.message}; retrying: ${retrying.message ?? retrying.reason ?? retrying.type}`
      : moves.message;
    return { reconciling: { status: 'True', reason: moves.reason, message: clip(message) }, stalled: NOT_STALLED };
  }
  return { reconciling: { status: 'False', ...whyNothingMoves(c) }, stalled: NOT_STALLED };
}

const rolloutMessage = (c: Counts): string =>
  `rolling out revision ${c.revision}: ${c.updated} of ${c.target} pods updated, ${c.updatedAvailable} available`;

/** The spec's latest generation has not been acted on (a round failed before it could plan). */
function notObserved(status: CloneSetStatus, facts: ReadinessFacts): Verdict | undefined {
  const observed = status.observedGeneration ?? 0;
  if (facts.generation === undefined || observed >= facts.generation) return undefined;
  return {
    reason: ReconcilingReasons.SpecNotObserved,
    message: `generation ${facts.generation} not yet acted on (observedGeneration ${observed})`,
  };
}

/** The work still under way, if any. */
function whatMoves(c: Counts, status: CloneSetStatus, find: Find): Verdict | undefined {
  const scalingUp: Verdict = {
    reason: ReconcilingReasons.Scaling,
    message: `scaling up: ${c.replicas} of ${c.desired} pods exist`,
  };
  // New pods of a CloneSet whose rollout is done are a scale, not a rollout (they start updated).
  if (c.replicas < c.desired && !c.rolloutOpen) return scalingUp;
  if (!c.held && c.updated < c.target)
    return { reason: ReconcilingReasons.RolloutInProgress, message: rolloutMessage(c) };
  if (c.replicas < c.desired) return scalingUp;
  if (c.replicas > c.desired) {
    return {
      reason: ReconcilingReasons.Scaling,
      message: `scaling down: ${c.replicas} pods exist, ${c.desired} wanted`,
    };
  }
  const settling = becomingAvailable(c, find);
  if (settling) return settling;
  return resizesLeft(status.resize);
}

/** Resizes that may still finish, and Infeasible ones the strategy recreates (a waiting one is Stalled). */
function resizesLeft(r: CloneSetStatus['resize']): Verdict | undefined {
  if (r === undefined || r.resizing + r.infeasible === 0) return undefined;
  const infeasible = r.infeasible > 0 ? `, infeasible ${r.infeasible} to be recreated` : '';
  const message = `${r.resizing + r.infeasible} pod(s) resizing (proposed ${r.proposed}, in progress ${r.inProgress}, deferred ${r.deferred}${infeasible})`;
  return { reason: ReconcilingReasons.Resizing, message };
}

/**
 * Pods that exist at the right revision but are not yet available: the end of the rollout or
 * scale the previous Reconciling named (its reason kept), or pods that went unavailable by
 * themselves (PodsUnavailable).
 */
function becomingAvailable(c: Counts, find: Find): Verdict | undefined {
  const rolloutSettling = !c.held && c.updatedAvailable < c.target;
  if (c.available >= c.desired && !rolloutSettling) return undefined;
  const before = find(Types.Reconciling);
  const kept = before?.status === 'True' ? before.reason : undefined;
  const reason =
    kept === ReconcilingReasons.RolloutInProgress || kept === ReconcilingReasons.Scaling
      ? kept
      : ReconcilingReasons.PodsUnavailable;
  const rollout = reason === ReconcilingReasons.RolloutInProgress && rolloutSettling;
  return { reason, message: rollout ? rolloutMessage(c) : `${c.available} of ${c.desired} pods available` };
}

/** Why nothing moves: held on purpose, or done. */
function whyNothingMoves(c: Counts): Verdict {
  const left = c.desired - c.updated;
  const older = `${left} of ${c.desired} pods at older revisions`;
  if (left > 0 && c.paused)
    return { reason: ReconcilingReasons.Paused, message: `updateStrategy.paused holds ${older}` };
  if (left > 0 && c.updateHeld) {
    const message = `the update is held (${older}): see the UpdateHeld condition`;
    return { reason: ReconcilingReasons.UpdateHeld, message };
  }
  if (left > 0 && c.onDelete) {
    return {
      reason: ReconcilingReasons.OnDelete,
      message: `updateStrategy.type OnDelete keeps ${older} until they are deleted`,
    };
  }
  if (left > 0) return { reason: ReconcilingReasons.PartitionHeld, message: `updateStrategy.partition holds ${older}` };
  return {
    reason: ReconcilingReasons.Complete,
    message: `all ${c.desired} pods run revision ${c.revision} and are available`,
  };
}

/**
 * A failure condition whose reason says retrying cannot help, or one the API server has kept up for
 * REFUSED_FOR_LONG_MS (its lastTransitionTime: the message stays the same while the refusal does).
 */
function refusedForGood(find: Find, now: number | undefined): Verdict | undefined {
  for (const type of FAILURE_TYPES) {
    const c = find(type);
    if (c?.status !== 'True') continue;
    if (PERMANENT_REFUSALS.has(c.reason ?? '')) return { reason: type, message: clip(c.message ?? type) };
    if (heldLong(c, now)) return { reason: type, message: clip(`refused since ${c.lastTransitionTime}: ${c.message}`) };
  }
  return undefined;
}

/**
 * When a refusal held now turns the workload Stalled (its lastTransitionTime plus
 * REFUSED_FOR_LONG_MS), so the round that says so runs then; undefined when none will.
 */
export function refusalStallsAt(status: CloneSetStatus): number | undefined {
  const conditions = status.conditions ?? [];
  if (conditions.some((c) => c.type === Types.Stalled && c.status === 'True')) return undefined;
  const times = conditions
    .filter((c) => (FAILURE_TYPES as readonly string[]).includes(c.type) && c.status === 'True')
    .filter((c) => !PERMANENT_REFUSALS.has(c.reason ?? ''))
    .map((c) => Date.parse(c.lastTransitionTime ?? '') + REFUSED_FOR_LONG_MS)
    .filter(Number.isFinite);
  return times.length > 0 ? Math.min(...times) : undefined;
}

/** The condition has been as it is for REFUSED_FOR_LONG_MS or more. */
function heldLong(c: CloneSetCondition, now: number | undefined): boolean {
  const since = Date.parse(c.lastTransitionTime ?? '');
  return now !== undefined && Number.isFinite(since) && now - since >= REFUSED_FOR_LONG_MS;
}

/**
 * Pods whose resize is Infeasible while the strategy waits, or while it recreates them but the
 * spec lets the budget never admit a recreate: nothing will ever finish them (decision 79).
 */
function infeasibleResize(status: CloneSetStatus, facts: ReadinessFacts, find: Find): Verdict | undefined {
  const infeasible = status.resize?.infeasible ?? 0;
  if (infeasible === 0) return undefined;
  const blocked = find(Types.ResizeBlocked);
  const detail = blocked?.status === 'True' && blocked.message ? `: ${blocked.message}` : '';
  const pods = `${infeasible} pod(s) cannot be resized on their nodes`;
  if (facts.resizeWaitsOnInfeasible)
    return { reason: StalledReasons.ResizeInfeasible, message: clip(`${pods} and the update strategy waits${detail}`) };
  if (facts.recreateNeverAdmitted === undefined) return undefined;
  return {
    reason: StalledReasons.InfeasibleResizeNotAdmissible,
    message: clip(`${pods} and their recreate can never be admitted: ${facts.recreateNeverAdmitted}${detail}`),
  };
}

/** Kruise's Progressing False/ProgressDeadlineExceeded, with what the rollout reached. */
function deadlineExceeded(c: Counts, find: Find): Verdict | undefined {
  const progressing = find(Types.Progressing);
  if (progressing?.status !== 'False' || progressing.reason !== ProgressingReasons.DeadlineExceeded) return undefined;
  const reached = `${c.updated} of ${c.target} pods updated, ${c.updatedAvailable} available`;
  return { reason: ProgressingReasons.DeadlineExceeded, message: clip(`${progressing.message ?? ''} (${reached})`) };
}

/** `status` with Reconciling and Stalled set as decideReadiness says, every other condition kept as it is. */
export function withReadiness(status: CloneSetStatus, facts: ReadinessFacts, now: number): CloneSetStatus {
  const { reconciling, stalled } = decideReadiness(status, facts, now);
  let conditions = setCondition(status.conditions ?? [], Types.Reconciling, reconciling, now);
  conditions = setCondition(conditions, Types.Stalled, stalled, now);
  return { ...status, conditions };
}
