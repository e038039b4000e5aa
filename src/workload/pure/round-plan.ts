// What one CloneSet reconcile round plans (planner.ts → executor.ts): the intents, events and
// conditions of the workload vocabulary (workload/pure/intents.ts), the status they lead to, and
// what only a CloneSet has (instance ids, claims by instance id). Owns the shape only.
// Must not: import anything that performs I/O.
import type { CloneSetStatus } from '../../api/types.js';
import type { Pod } from '../../api/wire.js';
import type { ClaimPlan } from './claims.js';
import type { ClaimOwnerWrite } from './claim-owners.js';
import type { ClaimResize } from './kind.js';
import type { RolloutLimits } from './limits.js';
import type { Intent, PlannedEvent } from './intents.js';

export interface Plan {
  intents: Intent[];
  events: PlannedEvent[];
  /** The status this round leads to if every intent succeeds. */
  status: CloneSetStatus;
  /** When to look again although nothing changes (grace periods, timers, minReadySeconds). */
  wakeAt?: number;
  /** The disruption budget at the start of the round and what the intents take from it. */
  budget: { total: number; used: number };
  /** The spec's limits as this round resolved them (the reconciler's Reconciling and Stalled read the same). */
  limits: RolloutLimits;
  /** Seconds each resize that finished this round took, for the duration histogram. */
  resizeDurations: number[];
  /** Instance ids of every pod the CloneSet has (terminating ones too): a new pod takes none of them. */
  instanceIdsInUse: ReadonlySet<string>;
  /**
   * What happens to the CloneSet's claims this round (claims.ts): the ids new pods take back,
   * the claims deleted with each deleted pod or now. Absent without templates or claims. The
   * creates it holds back for a predecessor still terminating are already left out of `intents`.
   */
  claims?: ClaimPlan;
  /** Deferred revisions (PlanInput.revisions.deferred) of pods this round would move: fetched, then planned again. */
  templatesWanted?: string[];
  /** The workload's owner reference put on or taken off its claims (a kind with identities: claim-owners.ts). */
  claimOwners?: ClaimOwnerWrite[];
  /** Claims whose storage request is raised to their template's (a kind with identities: kind.ts claimResizes). */
  claimResizes?: ClaimResize[];
  /** Pending pods whose missing claims are made again (a kind with identities: claim-owners.ts). */
  missingClaims?: Pod[];
}
