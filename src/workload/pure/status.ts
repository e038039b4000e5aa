// A CloneSet's status computed from what the controller observed this round: replica counts,
// revisions, conditions (FailedScale/FailedUpdate, Progressing with progressDeadlineSeconds;
// kstatus's Reconciling and Stalled are readiness-conditions.ts's, decided from this status).
// Pure: the clock comes in as an argument. The reconciler writes the result only when it
// differs from what is stored. Must not: decide scale or update actions.
import { rfc3339Seconds } from '../../api/time.js';
import {
  CloneSetConditionTypes,
  type CloneSetCondition,
  type CloneSetResizeStatus,
  type CloneSetStatus,
} from '../../api/types.js';
import type { ConditionWrite, ConditionWrites } from './intents.js';
import { countsAsAvailable, countsAsReady, isActive, type PodSummary } from './pod-state.js';
import { canonicalJSON } from '../../api/json.js';
import { ProgressingReasons } from '../../api/reasons.js';

export interface StatusInput {
  generation: number;
  replicas: number;
  pods: readonly PodSummary[];
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
  expectedUpdatedReplicas: number;
  labelSelector: string;
  previous: CloneSetStatus | undefined;
  progressDeadlineSeconds?: number;
  paused: boolean;
  /** updateStrategy.type OnDelete: the rollout waits for people to delete pods, so it never times out. */
  onDelete?: boolean;
  resize: CloneSetResizeStatus;
  /** Conditions to set this round (type → status/reason/message); others are kept. */
  conditions: ConditionWrites;
  /** The workload's kind, as its messages name it; CloneSet when absent. */
  kind?: string;
  now: number;
}

export function computeStatus(input: StatusInput): CloneSetStatus {
  const active = input.pods.filter(isActive);
  const updated = active.filter((p) => p.revision === input.updateRevision);
  const status: CloneSetStatus = {
    observedGeneration: input.generation,
    replicas: active.length,
    readyReplicas: active.filter(countsAsReady).length,
    availableReplicas: active.filter(countsAsAvailable).length,
    updatedReplicas: updated.length,
    updatedReadyReplicas: updated.filter(countsAsReady).length,
    updatedAvailableReplicas: updated.filter(countsAsAvailable).length,
    expectedUpdatedReplicas: input.expectedUpdatedReplicas,
    currentRevision: input.currentRevision,
    updateRevision: input.updateRevision,
    collisionCount: input.collisionCount,
    labelSelector: input.labelSelector,
    resize: input.resize,
  };
  // As Kruise: once every desired pod runs the update revision (ready or not), it is the current
  // one; scaling up then creates pods of it even under a partition.
  if (status.updatedReplicas === status.replicas && status.replicas === input.replicas) {
    status.currentRevision = input.updateRevision;
  }
  const conditions =
    withConditions({ conditions: input.previous?.conditions ?? [] }, input.conditions, input.now).conditions ?? [];
  status.conditions = progressing(conditions, status, input);
  return status;
}

export function setCondition(
  conditions: readonly CloneSetCondition[],
  type: string,
  wanted: ConditionWrite,
  now: number,
): CloneSetCondition[] {
  const stamp = rfc3339Seconds(now);
  const old = conditions.find((c) => c.type === type);
  if (old && old.status === wanted.status && old.reason === wanted.reason && old.message === wanted.message) {
    return [...conditions];
  }
  const next: CloneSetCondition = {
    type,
    ...wanted,
    lastTransitionTime: old && old.status === wanted.status ? (old.lastTransitionTime ?? stamp) : stamp,
    lastUpdateTime: stamp,
  };
  return [...conditions.filter((c) => c.type !== type), next];
}

/** progressDeadlineSeconds that means "no deadline", as for Deployments and Kruise. */
export const NO_PROGRESS_DEADLINE = 2147483647;

/**
 * Progressing, as OpenKruise's CloneSet reports it: only when progressDeadlineSeconds is set and
 * not MaxInt32, and then the first that holds of available (every desired pod updated and
 * available), paused, partition available (the pods the partition lets through are updated and
 * available), deadline exceeded (False), else updating. Where Tailor differs on purpose (README's
 * compatibility table): the deadline counts from the last progress (a count moving, as for a
 * Deployment) instead of from when updating began, and a new update revision starts a new
 * deadline instead of staying exceeded.
 */
function progressing(conditions: CloneSetCondition[], status: CloneSetStatus, input: StatusInput): CloneSetCondition[] {
  const deadline = input.progressDeadlineSeconds;
  if (deadline === undefined || deadline === NO_PROGRESS_DEADLINE)
    return conditions.filter((c) => c.type !== 'Progressing');
  const settled = settledProgress(status, input);
  if (settled) return setCondition(conditions, 'Progressing', settled, input.now);
  return updatingProgress(conditions, status, input, deadline);
}

/** Progressing when the rollout is not moving by itself: available, paused, partition available, or OnDelete's updated. */
function settledProgress(status: CloneSetStatus, input: StatusInput): ConditionWrite | undefined {
  const replicas = input.replicas;
  const updatedAvailable = status.updatedAvailableReplicas ?? 0;
  const expected = status.expectedUpdatedReplicas ?? replicas;
  if (
    status.currentRevision === status.updateRevision &&
    status.replicas === replicas &&
    status.updatedReplicas === replicas &&
    updatedAvailable === replicas
  )
    return ProgressingReasons.Available;
  if (input.paused) return ProgressingReasons.Paused;
  if (expected < replicas && expected <= updatedAvailable) return ProgressingReasons.PartitionAvailable;
  if (input.onDelete) return ProgressingReasons.Updated;
  return undefined;
}

const kindName = (input: StatusInput): string => input.kind ?? 'CloneSet';

/** Progressing while pods are updating: the deadline counts from the last progress, and a new revision starts it anew. */
function updatingProgress(
  conditions: CloneSetCondition[],
  status: CloneSetStatus,
  input: StatusInput,
  deadline: number,
): CloneSetCondition[] {
  const set = (wanted: ConditionWrite): CloneSetCondition[] =>
    setCondition(conditions, 'Progressing', wanted, input.now);
  const prev = input.previous;
  const old = conditions.find((c) => c.type === 'Progressing');
  const newRevision = prev?.updateRevision !== status.updateRevision;
  const moved =
    prev === undefined ||
    newRevision ||
    prev.updatedReplicas !== status.updatedReplicas ||
    prev.availableReplicas !== status.availableReplicas ||
    prev.updatedAvailableReplicas !== status.updatedAvailableReplicas;
  const exceeded = {
    status: 'False',
    reason: ProgressingReasons.DeadlineExceeded,
    message: `${kindName(input)} revision ${status.updateRevision} has timed out progressing`,
  } as const;
  if (!newRevision && old?.reason === ProgressingReasons.DeadlineExceeded && old.status === 'False')
    return set(exceeded);
  if (old?.reason === ProgressingReasons.Updated.reason && old.status === 'True' && !moved) {
    const lastProgress = Date.parse(old.lastUpdateTime ?? old.lastTransitionTime ?? '');
    return input.now - lastProgress > deadline * 1000 ? set(exceeded) : conditions;
  }
  // Progress (or a start): lastUpdateTime is the last-progress clock the deadline counts from.
  const started = set(ProgressingReasons.Updated);
  return started.map((c) => (c.type === 'Progressing' ? { ...c, lastUpdateTime: rfc3339Seconds(input.now) } : c));
}

/** `status` with each condition in `writes` set (or removed when null), other conditions kept. */
export function withConditions(status: CloneSetStatus, writes: StatusInput['conditions'], now: number): CloneSetStatus {
  let conditions = status.conditions ?? [];
  for (const [type, wanted] of Object.entries(writes)) {
    conditions = wanted ? setCondition(conditions, type, wanted, now) : conditions.filter((c) => c.type !== type);
  }
  return { ...status, conditions };
}

/**
 * `status` (the round's plan) with the round's failed writes folded in (`writes`), a refusal that
 * goes on keeping the lastTransitionTime `stored` gave it. A round starts without the failure
 * conditions (a round whose writes all succeed clears them), so without the stored one every retry
 * would look like a new refusal, and none would ever be held long enough to be Stalled.
 */
export function withFailures(
  status: CloneSetStatus,
  stored: CloneSetStatus | undefined,
  writes: StatusInput['conditions'],
  now: number,
): CloneSetStatus {
  const ongoing = (stored?.conditions ?? []).filter((c) => c.status === 'True' && writes[c.type]?.status === 'True');
  const kept = (status.conditions ?? []).filter((c) => !ongoing.some((o) => o.type === c.type));
  return withConditions({ ...status, conditions: [...kept, ...ongoing] }, writes, now);
}

/**
 * Status changes that only move counts are written at most this often per CloneSet, and never
 * later than this after a round first saw them: status is never more than a second behind the
 * pods (tools that poll status, Kruise's e2e among them, read counts within a few seconds).
 */
export const STATUS_COUNTS_INTERVAL_MS = 1_000;
/**
 * How long a count-only change waits for the changes that follow it: one pod's update moves the
 * counts two or three times within a few hundred ms (the next pod drained as the last one is
 * Ready again, then patched), and one write carries them all (decision 34).
 */
export const STATUS_GATHER_MS = 500;

/**
 * When to write a status that differs from the stored one: now when urgent (statusChangeIsUrgent,
 * or a failure), else once the change has been gathered for STATUS_GATHER_MS and the last write
 * is STATUS_COUNTS_INTERVAL_MS old. Both bounds keep the write within a second of `differsSince`.
 */
export function statusWriteAt(
  clock: { lastWriteAt?: number | undefined; differsSince: number },
  urgent: boolean,
  now: number,
): number {
  if (urgent) return now;
  return Math.max(clock.differsSince + STATUS_GATHER_MS, (clock.lastWriteAt ?? -Infinity) + STATUS_COUNTS_INTERVAL_MS);
}

/**
 * Whether a status change must be written at once: a new generation observed, revisions,
 * collision count or selector changed, or a condition appeared, went, or changed its status,
 * reason or message (Progressing's last-progress clock excepted). Replica counts, status.resize,
 * that clock and the counts in Reconciling's and Stalled's messages may wait for the next write
 * (at most STATUS_COUNTS_INTERVAL_MS); their status or reason changing is urgent.
 */
export function statusChangeIsUrgent(previous: CloneSetStatus | undefined, next: CloneSetStatus): boolean {
  const p = previous ?? {};
  if (p.observedGeneration !== next.observedGeneration || p.currentRevision !== next.currentRevision) return true;
  if (
    p.updateRevision !== next.updateRevision ||
    p.collisionCount !== next.collisionCount ||
    p.labelSelector !== next.labelSelector
  )
    return true;
  const signature = (conditions: readonly CloneSetCondition[] | undefined): string =>
    (conditions ?? [])
      .map((c) =>
        [c.type, c.status, c.reason ?? '', COUNTING_CONDITIONS.has(c.type) ? '' : (c.message ?? '')].join('\u0000'),
      )
      .sort()
      .join('\n');
  return signature(p.conditions) !== signature(next.conditions);
}

/** Conditions whose messages carry counts (readiness-conditions.ts): a message change alone is a count change. */
const COUNTING_CONDITIONS: ReadonlySet<string> = new Set([
  CloneSetConditionTypes.Reconciling,
  CloneSetConditionTypes.Stalled,
]);

/** Status equality ignoring key order. */
export const sameStatus = (a: CloneSetStatus | undefined, b: CloneSetStatus): boolean =>
  canonicalJSON(a ?? {}) === canonicalJSON(b);

/** When the Progressing deadline would pass, for a requeue; undefined when no deadline applies. */
export function progressDeadlineAt(status: CloneSetStatus, deadlineSeconds: number | undefined): number | undefined {
  const c = status.conditions?.find((x) => x.type === 'Progressing');
  if (
    deadlineSeconds === undefined ||
    deadlineSeconds === NO_PROGRESS_DEADLINE ||
    !c ||
    c.status !== 'True' ||
    c.reason !== ProgressingReasons.Updated.reason
  )
    return undefined;
  return Date.parse(c.lastUpdateTime ?? '') + deadlineSeconds * 1000 + 1000;
}
