// Which revisions a node's agent pre-pulls for
// (docs/decisions/0094-the-controller-names-the-revisions-a-node-pre-pulls.md): for every live pod
// on the node that does not run its workload's update revision yet, that revision, by namespace
// and name; pods held back by partition or pause count too, since pulling moves no pod out of
// service. And what a publisher writes when it is one of several on a node (docs/decisions/0101-
// each-controller-publishes-only-its-own-revisions.md): its own entries replaced, every other
// entry kept. Pure. Must not: do I/O (workload/prepull-publisher.ts writes the Node), or bound
// the list (api/prepull-revisions.ts encodes it).
import type { Pod } from '../../api/wire.js';
import { isLivePod } from '../../api/pod.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../api/types.js';
import type { RevisionRef } from '../../api/prepull-revisions.js';

/** The update revisions `pods` will move to, in name order, once each. */
export function revisionsToPrePull(
  pods: readonly Pod[],
  updateRevisionOf: (pod: Pod) => string | undefined,
): RevisionRef[] {
  const refs = new Map<string, RevisionRef>();
  for (const pod of pods) {
    if (!isLivePod(pod)) continue;
    const name = updateRevisionOf(pod);
    if (name === undefined || name === pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH]) continue;
    const namespace = pod.metadata?.namespace ?? '';
    refs.set(`${namespace}/${name}`, { namespace, name });
  }
  return [...refs.keys()].sort().map((key) => refs.get(key) as RevisionRef);
}

const keyOf = (ref: RevisionRef): string => `${ref.namespace}/${ref.name}`;

/**
 * The list to publish on a node, or `unchanged` when the entries `isOwn` claims already name
 * exactly `wanted`. Another controller's entries (scoped to other workloads) are kept where they
 * are and never decide a write, so two controllers publishing on one node each write only when
 * their own part changes, and neither undoes the other. `wanted` comes first, so the list's bound
 * cuts others' entries before this publisher's.
 */
export function nextPublication(
  wanted: readonly RevisionRef[],
  published: readonly RevisionRef[],
  isOwn: (ref: RevisionRef) => boolean,
): RevisionRef[] | 'unchanged' {
  const own = new Set(published.filter(isOwn).map(keyOf));
  const wantedKeys = new Set(wanted.map(keyOf));
  if (own.size === wantedKeys.size && [...wantedKeys].every((key) => own.has(key))) return 'unchanged';
  const others = published.filter((ref) => !isOwn(ref) && !wantedKeys.has(keyOf(ref)));
  return [...wanted, ...others];
}
