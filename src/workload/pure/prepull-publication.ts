// Which revisions a node's agent pre-pulls for
// (docs/decisions/0094-the-controller-names-the-revisions-a-node-pre-pulls.md): for every live pod
// on the node that does not run its workload's update revision yet, that revision, by namespace
// and name; pods held back by partition or pause count too, since pulling moves no pod out of
// service. And what a publisher writes when it is one of several on a node (docs/decisions/0101-
// each-controller-publishes-only-its-own-revisions.md): its own entries replaced, every other
// entry kept, the list cut at its bound the same way by every publisher. Pure. Must not: do I/O
// (workload/prepull-publisher.ts writes the Node).
import type { Pod } from '../../api/wire.js';
import { isLivePod } from '../../api/pod.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../api/types.js';
import { MAX_PUBLISHED_REVISIONS, revisionRefKey, type RevisionRef } from '../../api/prepull-revisions.js';

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
    const ref = { namespace: pod.metadata?.namespace ?? '', name };
    refs.set(revisionRefKey(ref), ref);
  }
  return inKeyOrder(refs);
}

/** The references of a map keyed by revisionRefKey, in name order. */
const inKeyOrder = (refs: ReadonlyMap<string, RevisionRef>): RevisionRef[] =>
  [...refs.keys()].sort().map((key) => refs.get(key) as RevisionRef);

/**
 * The list to publish on a node, or `unchanged` when this publisher's part of it is already right.
 * Its part is every entry it wants or `isOwn` claims; every other entry (another controller's,
 * scoped to other workloads) is kept and never decides a write. The list is the union in name
 * order, cut at `bound`: every publisher orders and cuts the same union the same way, so two of
 * them agree on what survives the cut instead of each cutting the other's entries in turn. Its
 * part is right when it holds exactly the wanted entries that survive that cut.
 */
export function nextPublication(
  wanted: readonly RevisionRef[],
  published: readonly RevisionRef[],
  isOwn: (ref: RevisionRef) => boolean,
  bound = MAX_PUBLISHED_REVISIONS,
): RevisionRef[] | 'unchanged' {
  const wantedKeys = new Set(wanted.map(revisionRefKey));
  const own = new Set<string>();
  const others: RevisionRef[] = [];
  for (const ref of published) {
    if (wantedKeys.has(revisionRefKey(ref)) || isOwn(ref)) own.add(revisionRefKey(ref));
    else others.push(ref);
  }
  const next = inKeyOrder(new Map([...wanted, ...others].map((ref) => [revisionRefKey(ref), ref]))).slice(0, bound);
  const wantedNext = next.map(revisionRefKey).filter((key) => wantedKeys.has(key));
  const right = own.size === wantedNext.length && wantedNext.every((key) => own.has(key));
  return right ? 'unchanged' : next;
}
