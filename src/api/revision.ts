// The one ControllerRevision shape: an apps/v1 ControllerRevision as the API server sends it and as
// the controller's and the node agent's caches keep it (trimmed: workload/revision-store.ts
// trimRevision, agent/pure/cache.ts). Here so the controller and the agent name one shape.
// Types only. Must not: say how a revision is trimmed, fetched or chosen (those modules do).
import type { ObjectMeta, PodTemplate } from './wire.js';

export interface ControllerRevision {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
  /**
   * The newest revision of a CloneSet has the highest number (a rollback renumbers the one it
   * reuses). Always on the wire (apps/v1 serialises it even when 0), and every cache keeps it.
   */
  readonly revision: number;
  /** The template: on a revision read from the API; the controller's cache keeps only its digest (trimRevision). */
  readonly data?: { readonly template?: PodTemplate };
  /** templateDigest() of data.template, set by the controller's trimRevision when its cache drops the template. */
  readonly templateDigest?: string;
  /** The template's size in characters (canonical JSON), set by trimRevision: what a round would hold. */
  readonly templateChars?: number;
}
