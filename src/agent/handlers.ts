// The node agent's informer handlers: which change of a pod of this node, of the Node, of a
// LimitRange or ResourceQuota, or of a CloneSet revision puts which key on which of the agent's
// queues (docs/architecture.md §3.2 An agent resize, §3.3 An agent restart, §3.4 Images pulled
// before the drain). Owns: that mapping. Must not: judge a pod (pure/triggers.ts's predicates and
// pure/decide.ts do), or read anything but the change and the pods' cache.
import { sameJSON } from '../api/json.js';
import type { InformerHandler, KeyQueue } from '../api/handler.js';
import { ANNOTATION_RESTART_REQUEST } from '../api/types.js';
import { ANNOTATION_PREPULL_REVISIONS } from '../api/prepull-revisions.js';
import type { Node, Pod } from '../api/wire.js';
import { objectKey } from '../runtime/store.js';
import { hasRequest, holdingsMayHaveChanged, pending } from './pure/triggers.js';

export interface ResizeHandlerOptions {
  /** The pods of this node (the agent's pods cache). */
  readonly pods: { list(): Pod[] };
  /** The resize worker's queue. */
  readonly queue: KeyQueue;
  /** Drops what the agent keeps about a pod that is gone (AgentReconciler.forget). */
  readonly forget: (uid: string) => void;
}

export interface ResizeHandlers {
  readonly pods: InformerHandler<Pod>;
  readonly node: InformerHandler<Node>;
  /** For LimitRanges and ResourceQuotas alike. */
  readonly namespaceLimits: InformerHandler<{ spec?: unknown }>;
}

/**
 * A pod with a resize request is reconciled whenever it changes; every pending resize of the node
 * (Deferred, Infeasible, InProgress: pure/triggers.ts) is retried when what the node's pods hold may
 * have changed (a pod coming, going, changing phase or annotations), when the Node changes, and
 * when a LimitRange's or quota's spec changes (that may turn a refusal into a resize or the
 * reverse; a quota's status moves with every pod of its namespace, so it does not count). The
 * manager's periodic resync re-delivers every cached pod as an update, so each pod with a request
 * is reconciled again then too.
 */
export function resizeHandlers(o: ResizeHandlerOptions): ResizeHandlers {
  const enqueuePending = (except?: Pod): void => {
    for (const p of o.pods.list()) if (p !== except && pending(p)) o.queue.add(objectKey(p));
  };
  return {
    pods: {
      onAdd: (pod) => {
        if (hasRequest(pod)) o.queue.add(objectKey(pod));
        enqueuePending(pod);
      },
      onUpdate: (oldPod, pod) => {
        if (hasRequest(pod)) o.queue.add(objectKey(pod));
        // Resources the node holds changed: a phase change, a resize status (applied values) change.
        if (holdingsMayHaveChanged(oldPod, pod)) enqueuePending(pod);
      },
      onDelete: (pod) => {
        o.forget(pod.metadata?.uid ?? '');
        enqueuePending();
      },
    },
    node: { onAdd: () => enqueuePending(), onUpdate: () => enqueuePending() },
    namespaceLimits: {
      onAdd: () => enqueuePending(),
      onUpdate: (old, next) => {
        if (!sameJSON(old.spec, next.spec)) enqueuePending();
      },
      onDelete: () => enqueuePending(),
    },
  };
}

/** A pod that carries `apps.tailor.dev/restart-request` goes to the restart worker (restart.ts) on every change. */
export function restartHandler(queue: KeyQueue): InformerHandler<Pod> {
  const restartIfAsked = (pod: Pod): void => {
    if (pod.metadata?.annotations?.[ANNOTATION_RESTART_REQUEST] !== undefined) queue.add(objectKey(pod));
  };
  return { onAdd: restartIfAsked, onUpdate: (_, pod) => restartIfAsked(pod) };
}

/** Any change of this node's pods may change which images are wanted: the pre-pull reports again. */
export function prePullHandler(report: () => void): InformerHandler<unknown> {
  return { onAdd: report, onUpdate: report, onDelete: report };
}

/** So may a change of the revisions the controller names on this Node (decision 94); its status beats are ignored. */
export function onPrePullRevisions(report: () => void): InformerHandler<Node> {
  const revisionsOf = (node: Node): string | undefined => node.metadata?.annotations?.[ANNOTATION_PREPULL_REVISIONS];
  return {
    onAdd: report,
    onUpdate: (old, node) => {
      if (revisionsOf(old) !== revisionsOf(node)) report();
    },
  };
}
