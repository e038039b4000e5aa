// One CloneSet round as the planner builds it (planner.ts), shared with the modules that plan a
// part of it (upkeep.ts): what was observed, and the intents, events and conditions so far.
// Owns the shape only. Must not: import anything that performs I/O.
import type { Pod } from '../../api/wire.js';
import type { ConditionWrite, ConditionWrites, Intent, PlannedEvent } from './intents.js';
import type { PodSummary } from './pod-state.js';
import type { ResizeFollowUp } from './resizes.js';
import type { RolloutLimits } from './limits.js';
import type { PlanInput } from './plan-input.js';
import type { DefaultedWireCloneSet } from './pods.js';
import type { RolloutInput, UpdatePlan } from './update.js';

/** One round being planned: what was observed, and the intents, events and conditions so far. */
export interface Round {
  readonly input: PlanInput;
  readonly cs: DefaultedWireCloneSet;
  readonly replicas: number;
  /** The spec's limits, resolved once for the whole round; maxSurge is 0 while paused, and above 0 a resize recreate is surged (decision 79). */
  readonly limits: RolloutLimits;
  /** The CloneSet's pods, released ones left out. */
  readonly pods: readonly Pod[];
  readonly summaries: readonly PodSummary[];
  readonly summaryOf: (pod: Pod) => PodSummary;
  readonly rollout: RolloutInput;
  readonly update: UpdatePlan;
  /** The UpdateHeld condition when the canary driver cannot see the change (driver-hold.ts): no pod is updated. */
  readonly updateHeld?: ConditionWrite;
  readonly resizes: ResizeFollowUp;
  readonly budget: { total: number; used: number };
  readonly intents: Intent[];
  readonly events: PlannedEvent[];
  readonly conditions: ConditionWrites;
  wakeAt?: number;
  /** The ids the kind's identities give this round's creates, in order (kind.ts); absent: random ids. */
  createIds?: readonly string[];
  /** Set when the round creates pods: the instance ids they must not take. */
  instanceIdsInUse?: ReadonlySet<string>;
  /** Pods whose lifecycle state moves this round (lifecycle.ts): nothing else writes them. */
  readonly lifecycleMoves: Set<string>;
  /** Deferred revisions of the pods the update picked (decision 81). */
  templatesWanted?: string[];
}
