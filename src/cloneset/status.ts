// A CloneSet's status computed from what the controller observed this round: replica counts,
// revisions, conditions (FailedScale/FailedUpdate, Progressing with progressDeadlineSeconds).
// Pure: the clock comes in as an argument. The reconciler writes the result only when it
// differs from what is stored. Must not: decide scale or update actions.
import type { CloneSetCondition, CloneSetResizeStatus, CloneSetStatus } from '../api/types.js';
import type { ConditionWrite, ConditionWrites } from './intents.js';
import { countsAsAvailable, countsAsReady, isActive, type PodSummary } from './pod-state.js';
import { canonicalJSON } from '../api/json.js';

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
  resize: CloneSetResizeStatus;
  /** Conditions to set this round (type → status/reason/message); others are kept. */
  conditions: ConditionWrites;
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
  // The rollout is complete once every desired pod runs the update revision and is ready:
  // from then on the update revision is the current one.
  if (status.updatedReadyReplicas! >= input.replicas && status.replicas === input.replicas) {
    status.currentRevision = input.updateRevision;
  }
  const conditions = withConditions({ conditions: input.previous?.conditions ?? [] }, input.conditions, input.now).conditions ?? [];
  status.conditions = progressing(conditions, status, input);
  return status;
}

export function setCondition(
  conditions: readonly CloneSetCondition[],
  type: string,
  wanted: ConditionWrite,
  now: number,
): CloneSetCondition[] {
  const stamp = isoSeconds(now);
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

/**
 * Progressing, as Deployments report it: True while pods move toward the update revision, True
 * with reason RolloutComplete when done, False with ProgressDeadlineExceeded when no count has
 * moved for progressDeadlineSeconds. Paused rollouts do not time out.
 */
function progressing(conditions: CloneSetCondition[], status: CloneSetStatus, input: StatusInput): CloneSetCondition[] {
  const complete = status.updatedAvailableReplicas === input.replicas && status.replicas === input.replicas;
  if (complete) {
    return setCondition(
      conditions,
      'Progressing',
      { status: 'True', reason: 'RolloutComplete', message: 'all pods run the update revision and are available' },
      input.now,
    );
  }
  if (input.paused) {
    return setCondition(
      conditions,
      'Progressing',
      { status: 'Unknown', reason: 'RolloutPaused', message: 'updateStrategy.paused is true' },
      input.now,
    );
  }
  const prev = input.previous;
  const moved =
    !prev ||
    prev.updatedReplicas !== status.updatedReplicas ||
    prev.availableReplicas !== status.availableReplicas ||
    prev.updatedAvailableReplicas !== status.updatedAvailableReplicas ||
    prev.updateRevision !== status.updateRevision;
  const old = conditions.find((c) => c.type === 'Progressing');
  if (moved || !old || old.reason === 'RolloutComplete' || old.reason === 'RolloutPaused') {
    // Record progress: a changed message keeps lastUpdateTime as the last-progress clock.
    return [
      ...conditions.filter((c) => c.type !== 'Progressing'),
      {
        type: 'Progressing',
        status: 'True',
        reason: 'Updating',
        message: `${status.updatedAvailableReplicas}/${input.replicas} pods updated and available`,
        lastTransitionTime: old?.status === 'True' ? old.lastTransitionTime : isoSeconds(input.now),
        lastUpdateTime: isoSeconds(input.now),
      },
    ];
  }
  const deadline = input.progressDeadlineSeconds;
  const lastProgress = Date.parse(old.lastUpdateTime ?? old.lastTransitionTime ?? '');
  if (deadline !== undefined && old.status === 'True' && input.now - lastProgress > deadline * 1000) {
    return setCondition(
      conditions,
      'Progressing',
      {
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: `no progress for ${deadline}s: ${status.updatedAvailableReplicas}/${input.replicas} pods updated and available`,
      },
      input.now,
    );
  }
  return conditions;
}

const isoSeconds = (now: number): string => new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** `status` with each condition in `writes` set (or removed when null), other conditions kept. */
export function withConditions(status: CloneSetStatus, writes: StatusInput['conditions'], now: number): CloneSetStatus {
  let conditions = status.conditions ?? [];
  for (const [type, wanted] of Object.entries(writes)) {
    conditions = wanted ? setCondition(conditions, type, wanted, now) : conditions.filter((c) => c.type !== type);
  }
  return { ...status, conditions };
}

/**
 * Whether a status change must be written at once: a new generation observed, revisions,
 * collision count or selector changed, or a condition appeared, went, or changed its status,
 * reason or message (Progressing's running "n/m updated" message and clock excepted). Replica
 * counts, status.resize and that Progressing message may wait for the next write.
 */
export function statusChangeIsUrgent(previous: CloneSetStatus | undefined, next: CloneSetStatus): boolean {
  const p = previous ?? {};
  if (p.observedGeneration !== next.observedGeneration || p.currentRevision !== next.currentRevision) return true;
  if (p.updateRevision !== next.updateRevision || p.collisionCount !== next.collisionCount || p.labelSelector !== next.labelSelector)
    return true;
  const signature = (conditions: readonly CloneSetCondition[] | undefined): string =>
    (conditions ?? [])
      .map((c) =>
        [c.type, c.status, c.reason ?? '', c.type === 'Progressing' && c.reason === 'Updating' ? '' : (c.message ?? '')].join('\u0000'),
      )
      .sort()
      .join('\n');
  return signature(p.conditions) !== signature(next.conditions);
}

/** Status equality ignoring key order. */
export const sameStatus = (a: CloneSetStatus | undefined, b: CloneSetStatus): boolean => canonicalJSON(a ?? {}) === canonicalJSON(b);

/** When the Progressing deadline would pass, for a requeue; undefined when no deadline applies. */
export function progressDeadlineAt(status: CloneSetStatus, deadlineSeconds: number | undefined): number | undefined {
  const c = status.conditions?.find((x) => x.type === 'Progressing');
  if (deadlineSeconds === undefined || !c || c.status !== 'True' || c.reason !== 'Updating') return undefined;
  return Date.parse(c.lastUpdateTime ?? '') + deadlineSeconds * 1000 + 1000;
}
