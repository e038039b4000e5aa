// The rollout limits of a CloneSet's spec resolved against replicas: partition as a pod count,
// maxSurge, maxUnavailable and scaleStrategy.maxUnavailable, rounded as Kruise rounds them. The
// planner resolves them once per round (RolloutInput.limits). Pure. Must not: read pods.
import { getScaledValueFromIntOrPercent as resolveIntOrPercent } from '../../api/intorpercent.js';
import type { IntOrString } from '../../api/types.js';
import { DEFAULT_MAX_UNAVAILABLE } from '../../api/defaults.js';

/** The spec fields the limits are resolved from (names as in the CloneSet spec). */
export interface LimitSpec {
  readonly replicas: number;
  /** updateStrategy.partition: pods kept on the current revision; percentages round up. */
  readonly partition?: IntOrString;
  /** updateStrategy.maxUnavailable; default "20%". */
  readonly maxUnavailable?: IntOrString;
  /** updateStrategy.maxSurge; default 0; percentages round up. */
  readonly maxSurge?: IntOrString;
  /** updateStrategy.paused: no pod is updated, and no surge is used. */
  readonly paused?: boolean;
  /** scaleStrategy.maxUnavailable: caps creations while pods are unavailable; default unlimited. */
  readonly scaleMaxUnavailable?: IntOrString;
}

/** The spec's int-or-percent fields resolved against replicas. */
export interface RolloutLimits {
  readonly partition: number;
  readonly maxSurge: number;
  readonly maxUnavailable: number;
  readonly scaleMaxUnavailable: number;
}

const UNLIMITED = 2147483647;

/**
 * Partition as a pod count: percentages round up (so "1%" keeps one old pod), a percentage
 * below 100% that would keep every pod keeps all but one (so at least one pod moves), and the
 * result is clamped to [0, replicas].
 */
export function resolvePartition(partition: IntOrString | undefined, replicas: number): number {
  if (partition === undefined) return 0;
  let value = resolveIntOrPercent(partition, replicas, true);
  if (replicas > 1 && value === replicas && typeof partition === 'string' && partition.trim() !== '100%') {
    value = replicas - 1;
  }
  return Math.max(Math.min(value, replicas), 0);
}

/**
 * maxSurge rounds up and is 0 while paused. maxUnavailable rounds up when there is no surge
 * (so "20%" of 3 still lets one pod go) and down when there is. scaleStrategy.maxUnavailable
 * rounds up.
 */
export function resolveRolloutLimits(spec: LimitSpec): RolloutLimits {
  const { replicas } = spec;
  const maxSurge =
    spec.maxSurge === undefined || spec.paused === true ? 0 : resolveIntOrPercent(spec.maxSurge, replicas, true);
  return {
    partition: resolvePartition(spec.partition, replicas),
    maxSurge,
    maxUnavailable: resolveIntOrPercent(spec.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE, replicas, maxSurge === 0),
    scaleMaxUnavailable: resolveIntOrPercent(spec.scaleMaxUnavailable ?? UNLIMITED, replicas, true),
  };
}
