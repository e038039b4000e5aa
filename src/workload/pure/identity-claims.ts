// What a kind with identities does to its claims in a round, beside the planner (planner.ts): the
// workload's owner reference put on or taken off (claim-owners.ts), a pending pod's missing claims
// made again, and, unless the rollout is paused or held (no pod moves then either), the claims whose
// storage follows their template (kind.ts claimResizes). Pure. Must not: perform I/O.
import { claimOwnerWrites, podsMissingClaims } from './claim-owners.js';
import type { PlanInput } from './plan-input.js';
import type { PodSummary } from './pod-state.js';
import type { DefaultedWireCloneSet } from './pods.js';
import type { Plan } from './round-plan.js';

/** The round's facts the identity kind's claim work reads. */
export interface IdentityClaimsRound {
  input: PlanInput;
  cs: DefaultedWireCloneSet;
  summaries: readonly PodSummary[];
  /** Paused, or held for the canary driver: no claim grows then. */
  paused: boolean;
}

export function withIdentityClaims(plan: Plan, { input, cs, summaries, paused }: IdentityClaimsRound): Plan {
  const { identity, setClaims = [], pods, revisions } = input;
  if (!identity) return plan;
  const claimOwners = claimOwnerWrites(setClaims, cs, identity);
  const missingClaims = podsMissingClaims(pods, setClaims, cs);
  const claimResizes = paused ? [] : identity.claimResizes(cs, summaries, setClaims, revisions.updateRevision);
  return {
    ...plan,
    ...(claimOwners.length > 0 ? { claimOwners } : {}),
    ...(missingClaims.length > 0 ? { missingClaims } : {}),
    ...(claimResizes.length > 0 ? { claimResizes } : {}),
  };
}
