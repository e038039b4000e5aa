// The controller's view of Nodes, for the image pre-pull only (the agents' reports, and the
// revisions the controller names to them, prepull-publisher.ts)
// (docs/decisions/0052-images-pulled-before-the-drain.md): what the cache keeps of a Node, and
// whom a change of a node's report wakes (the CloneSets of the pods on that node, which may now
// drain). Must not: read the API, or wake anything for a Node change other than its report.
import type { InformerHandler, KeyQueue } from '../api/handler.js';
import { ANNOTATION_PULLED_IMAGES } from '../api/prepull.js';
import { ANNOTATION_PREPULL_REVISIONS } from '../api/prepull-revisions.js';
import type { Node, Pod } from '../api/wire.js';
import { ownerKey } from '../runtime/handlers.js';
import type { OwnerKind } from '../api/owner.js';

/**
 * A Node as the controller caches it: its name, its pre-pull report and the revisions the
 * controller named to it (prepull-publisher.ts), nothing else (a Node's status is large).
 */
export function trimNodeForPrePull(node: Node): Node {
  const annotations = Object.fromEntries(
    [ANNOTATION_PULLED_IMAGES, ANNOTATION_PREPULL_REVISIONS].flatMap((key) => {
      const value = node.metadata?.annotations?.[key];
      return value === undefined ? [] : [[key, value]];
    }),
  );
  return {
    metadata: {
      ...(node.metadata?.name !== undefined ? { name: node.metadata.name } : {}),
      ...(node.metadata?.resourceVersion !== undefined ? { resourceVersion: node.metadata.resourceVersion } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
  };
}

const reportOf = (node: Node): string | undefined => node.metadata?.annotations?.[ANNOTATION_PULLED_IMAGES];

/** A node whose report appears, changes or goes wakes the workloads (of `owner`'s kind) of the pods on it. */
export function wakeOnPrePullReport(
  queue: KeyQueue,
  podsOn: (node: string) => readonly Pod[],
  owner: OwnerKind,
): InformerHandler<Node> {
  const wake = (node: Node): void => {
    for (const pod of podsOn(node.metadata?.name ?? '')) {
      const key = ownerKey(pod, owner);
      if (key) queue.add(key);
    }
  };
  return {
    onAdd: (node) => {
      if (reportOf(node) !== undefined) wake(node);
    },
    onUpdate: (old, node) => {
      if (reportOf(old) !== reportOf(node)) wake(node);
    },
    onDelete: () => undefined,
  };
}
