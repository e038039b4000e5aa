// Whether each claim of a workload with pod identities names the workload as an owner, as its
// kind's retention says (kind.ts PodIdentity.claimOwner): the reference is put on the claims that
// lack it and taken off those that should not have it, so a policy changed after the claims were
// made applies to them too. The claims a scale-down deletes with its pods, and the pending pods
// whose claims are missing (made again, as the native controller does). Pure. Must not: touch a
// claim being deleted, or an owner reference other than the workload's own.
import type { Pod } from '../../api/wire.js';
import { claimName, type Claim, type ClaimOwner, type ClaimPlan } from './claims.js';
import { LABEL_INSTANCE_ID } from '../../api/types.js';
import type { PodIdentity } from './kind.js';
import type { DefaultedWireCloneSet } from './pods.js';

/** Put the workload's owner reference on a claim (`owner` given), or take it off. */
export interface ClaimOwnerWrite {
  readonly claim: Claim;
  readonly owner?: ClaimOwner;
}

/** The owner-reference writes that bring the workload's claims in line with its retention. */
export function claimOwnerWrites(
  claims: readonly Claim[],
  workload: DefaultedWireCloneSet,
  identity: Pick<PodIdentity, 'claimOwner'>,
): ClaimOwnerWrite[] {
  const owner = identity.claimOwner(workload);
  const uid = workload.metadata?.uid;
  return claims.flatMap((claim): ClaimOwnerWrite[] => {
    if (claim.metadata?.deletionTimestamp) return [];
    const owned = claim.metadata?.ownerReferences?.some((o) => o.uid === uid) === true;
    if (owner && !owned) return [{ claim, owner }];
    if (!owner && owned) return [{ claim }];
    return [];
  });
}

/** The claim plan with the claims a scale-down deletes along with each of its pods (the kind's retention). */
export function withScaleDownClaims(
  plan: ClaimPlan,
  scaledDown: readonly Pod[],
  workload: DefaultedWireCloneSet,
  identity: Pick<PodIdentity, 'scaleDownClaims'>,
): ClaimPlan {
  const deleteWithPod = new Map(plan.deleteWithPod);
  for (const pod of scaledDown) {
    const names = identity.scaleDownClaims(pod, workload);
    const name = pod.metadata?.name ?? '';
    if (names.length > 0) deleteWithPod.set(name, [...new Set([...(deleteWithPod.get(name) ?? []), ...names])]);
  }
  return { ...plan, deleteWithPod };
}

/**
 * The pods whose claims are to be made again: pending, not scheduled (PodScheduled False: the
 * scheduler found a claim missing, or no node), and missing a claim of the workload's templates.
 * A claim being deleted still counts as there: its replacement is made once it is gone. The
 * native controller makes them for every pending pod; waiting for the scheduler's verdict spares a
 * refused create for each new pod whose claims the cache does not show yet.
 */
export function podsMissingClaims(
  pods: readonly Pod[],
  claims: readonly Claim[],
  workload: DefaultedWireCloneSet,
): Pod[] {
  const templates = workload.spec.volumeClaimTemplates ?? [];
  if (templates.length === 0) return [];
  const existing = new Set(claims.map((c) => c.metadata?.name ?? ''));
  const setName = workload.metadata?.name ?? '';
  return pods.filter((pod) => {
    const id = pod.metadata?.labels?.[LABEL_INSTANCE_ID] ?? '';
    return (
      unschedulable(pod) && id !== '' && templates.some((t) => !existing.has(claimName(t.metadata.name, setName, id)))
    );
  });
}

/** Pending, not being deleted, and the scheduler said it cannot place it (PodScheduled False). */
const unschedulable = (pod: Pod): boolean =>
  pod.status?.phase === 'Pending' &&
  !pod.metadata?.deletionTimestamp &&
  pod.status.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False') === true;
