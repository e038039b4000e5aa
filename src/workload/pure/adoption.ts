// Which orphans a workload adopts (docs/architecture.md §3.1): pods of its namespace that no
// controller owns, that its selector matches, that are neither terminating nor ended, and that its
// kind counts as members (a set's pods are `<set>-<ordinal>`), as the native controllers' ControllerRef
// manager decides. A workload that is being deleted adopts nothing. A pod left by
// `kubectl delete --cascade=orphan` comes back under the workload created again in its place.
// Pure. Must not: write, or adopt a pod another controller owns (the caller's orphans own none).
import { isLivePod } from '../../api/pod.js';
import type { Pod } from '../../api/wire.js';
import type { DefaultedWireCloneSet } from './pods.js';
import { matchesSelector } from './selector.js';

/** True when a pod is a member of the workload by the kind's rules (its name, for a set). */
export type IsMember = (pod: Pod, workload: DefaultedWireCloneSet) => boolean;

export function adoptable(
  orphans: readonly Pod[],
  workload: DefaultedWireCloneSet,
  isMember: IsMember = () => true,
): Pod[] {
  if (workload.metadata?.deletionTimestamp) return [];
  return orphans.filter(
    (pod) => isLivePod(pod) && matchesSelector(pod.metadata?.labels, workload.spec.selector) && isMember(pod, workload),
  );
}
