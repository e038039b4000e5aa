// Which revisions a node's agent pre-pulls for
// (docs/decisions/0094-the-controller-names-the-revisions-a-node-pre-pulls.md): for every live pod
// on the node that does not run its workload's update revision yet, that revision, by namespace
// and name; pods held back by partition or pause count too, since pulling moves no pod out of
// service. Pure. Must not: do I/O (workload/prepull-publisher.ts writes the Node), or bound the
// list (api/prepull-revisions.ts encodes it).
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
