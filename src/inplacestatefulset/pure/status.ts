// The InPlaceStatefulSet's own status fields beside the engine's (workload/pure/kind.ts's
// KindStatus): apps/v1's `currentReplicas`, the pods at `status.currentRevision`, counted as the
// engine counts `replicas` (active pods: neither terminating nor ended), and Advanced StatefulSet's
// `volumeClaims` (claim-expansion.ts). Pure. Must not: change a field the engine wrote.
import type { CloneSetStatus } from '../../api/types.js';
import { isActive, type PodSummary } from '../../workload/pure/pod-state.js';
import type { Claim } from '../../workload/pure/claims.js';
import type { KindStatus } from '../../workload/pure/kind.js';
import type { WireCloneSet } from '../../api/wire.js';
import { volumeClaimsStatus } from './claim-expansion.js';

export const statefulStatus: KindStatus = (
  status: CloneSetStatus,
  pods: readonly PodSummary[],
  claims: readonly Claim[],
  view: WireCloneSet,
): CloneSetStatus => {
  const current = pods.filter((p) => isActive(p) && p.revision === status.currentRevision);
  const volumeClaims = volumeClaimsStatus(view, pods, claims);
  return { ...status, currentReplicas: current.length, ...(volumeClaims.length > 0 ? { volumeClaims } : {}) };
};
