// The InPlaceStatefulSet's own status fields beside the engine's (workload/pure/kind.ts's
// KindStatus): apps/v1's `currentReplicas`, the pods at `status.currentRevision`, counted as the
// engine counts `replicas` (active pods: neither terminating nor ended). Pure. Must not: change a
// field the engine wrote.
import type { CloneSetStatus } from '../../api/types.js';
import { isActive, type PodSummary } from '../../workload/pure/pod-state.js';

export function statefulStatus(status: CloneSetStatus, pods: readonly PodSummary[]): CloneSetStatus {
  const current = pods.filter((p) => isActive(p) && p.revision === status.currentRevision);
  return { ...status, currentReplicas: current.length };
}
