// The contract between the controller and Tailor's node agent, carried in two pod annotations
// (docs/architecture.md §4.4 Two resize backends). The controller writes `apps.tailor.dev/resize-request`; the agent on the
// pod's node answers in `apps.tailor.dev/resize-status`. Both are JSON and name the revision the
// request belongs to, so a status about an older request is never mistaken for the current one.
// Parsing is strict (schemas in src/api/schemas.ts): a half-written or unknown payload is
// reported as invalid, never guessed.
// Pure. Must not: decide admission or touch cgroups (src/agent does).
import { parseResizeRequest, parseResizeStatus, type AnnotationValue } from '../api/schemas.js';
import type { ResizeState } from '../api/types.js';
import type { Pod } from '../api/wire.js';

export interface ContainerResources {
  requests?: { cpu?: string; memory?: string };
  limits?: { cpu?: string; memory?: string };
}

/** What the controller asks the agent for. */
export interface ResizeRequest {
  /** The ControllerRevision whose template these resources come from. */
  revision: string;
  /** Container name → the cpu/memory it should run with. */
  containers: Record<string, ContainerResources>;
}

/** What the agent reports. `state` "" means the request is applied. */
export interface ResizeStatus {
  revision: string;
  state: ResizeState | '';
  reason?: string;
  message?: string;
  /** RFC 3339: when `state` began. */
  since: string;
  /** Container name → what the agent applied, and to which container instance. */
  applied?: Record<string, ContainerResources & { containerID?: string }>;
}

export type Parsed<T> = AnnotationValue<T>;

export const readResizeRequest = (pod: Pod): Parsed<ResizeRequest> => parseResizeRequest(pod.metadata?.annotations);
export const readResizeStatus = (pod: Pod): Parsed<ResizeStatus> => parseResizeStatus(pod.metadata?.annotations);

export const encodeResizeRequest = (r: ResizeRequest): string => JSON.stringify(r);
export const encodeResizeStatus = (s: ResizeStatus): string => JSON.stringify(s);
