// Kubernetes objects as they travel on the wire: client-node's model types with dates as the
// RFC 3339 strings the API server sends, and the few shapes every layer names (a pod, a node, any
// object, a list, a label map). Types only: the ground floor, so pure modules never import the
// REST client.
import type * as k8s from '@kubernetes/client-node';
import type { CloneSet } from './types.js';

/** A client-node model type as it travels on the wire: Date fields arrive as RFC 3339 strings. */
export type Wire<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

export type Pod = Wire<k8s.V1Pod>;
export type Node = Wire<k8s.V1Node>;
export type ObjectMeta = Wire<k8s.V1ObjectMeta>;
/** A pod template: a CloneSet's, and the one a ControllerRevision stores (data.template). */
export type PodTemplate = Wire<k8s.V1PodTemplateSpec>;
/** A CloneSet as the API server sends it. */
export type WireCloneSet = Wire<CloneSet>;

/**
 * A string-to-string map: an object's labels (or annotations), and the maps CRI carries (labels,
 * annotations, the unified cgroup v2 map).
 */
export type Labels = Readonly<Record<string, string>>;

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}
