// The controller's half of the image pre-pull's request
// (docs/decisions/0094-the-controller-names-the-revisions-a-node-pre-pulls.md): on each Node whose
// agent pre-pulls (its report is there, prepull-nodes.ts), the annotation naming the update
// revisions that pods of that node do not run yet (pure/prepull-publication.ts); on a Node without
// a report, none. Another controller's entries (one scoped to other workloads) are left as they
// are (decision 101). One publisher per manager, fed by every kind's pods and workloads, behind one
// worker keyed by node name; a node's key waits a short window, so a rollout's many pod changes
// cost a node a write or two.
// Owns: that one annotation's writes. Must not: decide which revisions, or change anything else of a Node.
import type { InformerHandler } from '../api/handler.js';
import { ANNOTATION_PULLED_IMAGES } from '../api/prepull.js';
import {
  ANNOTATION_PREPULL_REVISIONS,
  encodePrePullRevisions,
  parsePrePullRevisions,
  type RevisionRef,
} from '../api/prepull-revisions.js';
import { controllerOf, ownedIndexValue, type OwnerKind } from '../api/owner.js';
import type { Node, Pod, WireCloneSet } from '../api/wire.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../api/types.js';
import { isLivePod } from '../api/pod.js';
import type { Informer } from '../runtime/informer.js';
import { isNotFound } from '../runtime/kube-client.js';
import type { Manager } from '../runtime/manager.js';
import { ownerKey } from '../runtime/handlers.js';
import { nextPublication, revisionsToPrePull } from './pure/prepull-publication.js';
import { workloadOfRevision } from './pure/revision.js';

/** How long a node's key gathers changes before its annotation is recomputed. */
const PUBLISH_WINDOW_MS = 250;

/** One kind's pods and workloads, as the publisher reads them. */
export interface PrePullSource {
  readonly pods: Informer<Pod>;
  readonly workloads: Informer<WireCloneSet>;
  readonly owner: OwnerKind;
  /** The index of `pods` by node name. */
  readonly nodeIndex: string;
  /** The index of `pods` by controller (ownedIndexValue). */
  readonly ownerIndex: string;
}

/** The update revision of the workload that controls `pod` (its UID checked), if `source`'s kind does. */
function updateRevisionIn(source: PrePullSource, pod: Pod): string | undefined {
  const key = ownerKey(pod, source.owner);
  const workload = key === undefined ? undefined : source.workloads.get(key);
  const ref = controllerOf(pod, source.owner);
  return workload?.metadata?.uid === ref?.uid ? workload?.status?.updateRevision : undefined;
}

const nodeOf = (pod: Pod): string | undefined => pod.spec?.nodeName || undefined;
const publicationOf = (node: Node): string | undefined => node.metadata?.annotations?.[ANNOTATION_PREPULL_REVISIONS];
const reportOf = (node: Node): string | undefined => node.metadata?.annotations?.[ANNOTATION_PULLED_IMAGES];

export class PrePullPublisher {
  private readonly sources: PrePullSource[] = [];
  private readonly queue: { addBatched(key: string, windowMs: number): void };

  constructor(
    private readonly manager: Manager,
    private readonly nodes: Informer<Node>,
  ) {
    this.queue = manager.controller({
      name: 'prepull-publisher',
      concurrency: 1,
      reconcile: (node) => this.publish(node),
    }).queue;
    nodes.addHandler({
      onAdd: (node) => this.wake(node.metadata?.name),
      onUpdate: (old, node) => {
        const changed =
          publicationOf(old) !== publicationOf(node) ||
          (reportOf(old) === undefined) !== (reportOf(node) === undefined);
        if (changed) this.wake(node.metadata?.name);
      },
    });
  }

  /** Reads `source`'s pods and workloads too, and wakes a node when one of them may change its list. */
  addSource(source: PrePullSource): void {
    this.sources.push(source);
    source.pods.addHandler(this.podHandler());
    source.workloads.addHandler({
      onUpdate: (old, workload) => {
        if (old.status?.updateRevision === workload.status?.updateRevision) return;
        const owned = ownedIndexValue(workload.metadata?.namespace, workload.metadata?.uid);
        for (const pod of source.pods.byIndex(source.ownerIndex, owned)) this.wake(nodeOf(pod));
      },
    });
  }

  /** Writes `nodeName`'s annotation when it differs from what its pods want (removed where no agent reports). */
  async publish(nodeName: string): Promise<void> {
    const node = this.nodes.get(nodeName);
    if (node === undefined) return;
    const pods = this.sources.flatMap((s) => s.pods.byIndex(s.nodeIndex, nodeName));
    const updateRevisionOf = (pod: Pod): string | undefined =>
      this.sources.map((s) => updateRevisionIn(s, pod)).find((name) => name !== undefined);
    let wanted: string | undefined;
    if (reportOf(node) === undefined) {
      // No agent reports here: nobody's list has a reader.
      if (publicationOf(node) === undefined) return;
    } else {
      const next = nextPublication(
        revisionsToPrePull(pods, updateRevisionOf),
        parsePrePullRevisions(node.metadata?.annotations),
        (ref) => this.isOwn(ref),
      );
      if (next === 'unchanged') return;
      wanted = encodePrePullRevisions(next);
    }
    try {
      await this.manager.client.patch(
        `/api/v1/nodes/${encodeURIComponent(nodeName)}`,
        { metadata: { annotations: { [ANNOTATION_PREPULL_REVISIONS]: wanted ?? null } } },
        'merge',
      );
    } catch (err) {
      if (!isNotFound(err)) throw new Error(`publishing the revisions node ${nodeName} pre-pulls`, { cause: err });
    }
  }

  /** A revision of a workload this controller reconciles (in one of its caches). */
  private isOwn(ref: RevisionRef): boolean {
    const workload = workloadOfRevision(ref.name);
    return (
      workload !== undefined && this.sources.some((s) => s.workloads.get(`${ref.namespace}/${workload}`) !== undefined)
    );
  }

  private wake(node: string | undefined): void {
    if (node) this.queue.addBatched(node, PUBLISH_WINDOW_MS);
  }

  /** A pod that comes, goes, moves to a node, changes revision or ends may change its node's list. */
  private podHandler(): InformerHandler<Pod> {
    const revisionOf = (pod: Pod): string | undefined => pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH];
    return {
      onAdd: (pod) => this.wake(nodeOf(pod)),
      onUpdate: (old, pod) => {
        if (nodeOf(old) !== nodeOf(pod)) this.wake(nodeOf(old));
        if (nodeOf(old) !== nodeOf(pod) || revisionOf(old) !== revisionOf(pod) || isLivePod(old) !== isLivePod(pod)) {
          this.wake(nodeOf(pod));
        }
      },
      onDelete: (pod) => this.wake(nodeOf(pod)),
    };
  }
}

const publishers = new WeakMap<Manager, PrePullPublisher>();

/** The manager's one publisher, reading `nodes` (the informer every kind shares). */
export function prePullPublisher(manager: Manager, nodes: Informer<Node>): PrePullPublisher {
  let publisher = publishers.get(manager);
  if (!publisher) publishers.set(manager, (publisher = new PrePullPublisher(manager, nodes)));
  return publisher;
}
