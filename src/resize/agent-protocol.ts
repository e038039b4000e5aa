// The contract between the controller and Tailor's node agent, carried in two pod annotations
// (DESIGN.md §2.3). The controller writes `apps.tailor.dev/resize-request`; the agent on the
// pod's node answers in `apps.tailor.dev/resize-status`. Both are JSON and name the revision the
// request belongs to, so a status about an older request is never mistaken for the current one.
// Parsing is strict: a half-written or unknown payload is reported as invalid, never guessed.
// Pure. Must not: decide admission or touch cgroups (src/agent does).
import { ANNOTATION_RESIZE_REQUEST, ANNOTATION_RESIZE_STATUS, type ResizeState } from '../api/types.js';
import type { Pod } from '../runtime/kube-client.js';

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

/**
 * Reasons the agent answers with instead of resizing (state Infeasible). Each is a verdict, so a
 * request is always answered: the controller reads KubeletResizes as "this node's kubelet resizes
 * in place; remove the request and use pods/resize" (backend.ts).
 */
export const AgentVerdicts = {
  /** The agent's evidence says the node's kubelet resizes in place; it never touches such a pod. */
  KubeletResizes: 'KubeletResizes',
  /** The request is not what the pod's CloneSet revision asks for. */
  NotInRevision: 'NotInRevision',
  /** The new resources would change the pod's QoS class (the kubelet and API server refuse that too). */
  QoSClassChange: 'QoSClassChange',
  /** A changed resource has resizePolicy RestartContainer, which the agent does not carry out live. */
  RestartContainerUnsupported: 'RestartContainerUnsupported',
} as const;

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string } | { ok: false; error: undefined };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function validResources(v: unknown): v is ContainerResources {
  if (!isRecord(v)) return false;
  for (const part of ['requests', 'limits']) {
    const values = v[part];
    if (values === undefined) continue;
    if (!isRecord(values)) return false;
    for (const [name, q] of Object.entries(values)) {
      if (name !== 'cpu' && name !== 'memory') return false;
      if (typeof q !== 'string' || q === '') return false;
    }
  }
  return true;
}

function parse<T>(pod: Pod, annotation: string, check: (v: unknown) => string | undefined): Parsed<T> {
  const raw = pod.metadata?.annotations?.[annotation];
  if (raw === undefined) return { ok: false, error: undefined };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return { ok: false, error: `${annotation} is not JSON: ${(err as Error).message}` };
  }
  const problem = check(value);
  return problem ? { ok: false, error: `${annotation}: ${problem}` } : { ok: true, value: value as T };
}

export function readResizeRequest(pod: Pod): Parsed<ResizeRequest> {
  return parse<ResizeRequest>(pod, ANNOTATION_RESIZE_REQUEST, (v) => {
    if (!isRecord(v)) return 'must be an object';
    if (typeof v['revision'] !== 'string' || v['revision'] === '') return 'revision must be a non-empty string';
    if (!isRecord(v['containers']) || Object.keys(v['containers']).length === 0) return 'containers must name at least one container';
    for (const [name, r] of Object.entries(v['containers'])) {
      if (!validResources(r)) return `containers.${name} must hold only cpu/memory requests and limits as quantity strings`;
    }
    return undefined;
  });
}

const STATES = new Set(['', 'Proposed', 'InProgress', 'Deferred', 'Infeasible']);

export function readResizeStatus(pod: Pod): Parsed<ResizeStatus> {
  return parse<ResizeStatus>(pod, ANNOTATION_RESIZE_STATUS, (v) => {
    if (!isRecord(v)) return 'must be an object';
    if (typeof v['revision'] !== 'string') return 'revision must be a string';
    if (typeof v['state'] !== 'string' || !STATES.has(v['state'])) return `unknown state ${JSON.stringify(v['state'])}`;
    if (typeof v['since'] !== 'string') return 'since must be an RFC 3339 time';
    return undefined;
  });
}

export const encodeResizeRequest = (r: ResizeRequest): string => JSON.stringify(r);
export const encodeResizeStatus = (s: ResizeStatus): string => JSON.stringify(s);
