// Which pod changes wake the node agent, pure (docs/architecture.md §3.2 An agent resize): a pod
// with a resize request is reconciled; a pending one (not applied yet: Deferred, Infeasible,
// InProgress or unreadable) is retried when what the node's pods hold may have changed.
// Owns: those predicates, used by agent/setup.ts's informer handlers.
// Must not: touch a queue or an informer (agent/setup.ts does), or judge a request (decide.ts).
import { ANNOTATION_RESIZE_REQUEST } from '../../api/types.js';
import type { Pod } from '../../api/wire.js';
import { readResizeStatus } from '../../resize/agent-protocol.js';

export const hasRequest = (pod: Pod): boolean => pod.metadata?.annotations?.[ANNOTATION_RESIZE_REQUEST] !== undefined;

/** A pod whose resize waits on the node's resources or a retry (not applied yet). */
export function pending(pod: Pod): boolean {
  if (!hasRequest(pod)) return false;
  const status = readResizeStatus(pod);
  return !status.ok || status.value.state !== '';
}

/** The same annotations, key by key and value by value (an absent map is an empty one). */
export function sameAnnotations(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const left = a ?? {};
  const right = b ?? {};
  const keys = Object.keys(left);
  return (
    keys.length === Object.keys(right).length && keys.every((k) => Object.hasOwn(right, k) && left[k] === right[k])
  );
}

/**
 * Whether an update may have changed what the pod holds on the node: a phase change (a finished
 * pod frees its resources), or an annotation change (a resize status reports new applied values).
 */
export function holdingsMayHaveChanged(oldPod: Pod, pod: Pod): boolean {
  return (
    oldPod.status?.phase !== pod.status?.phase ||
    !sameAnnotations(oldPod.metadata?.annotations, pod.metadata?.annotations)
  );
}
