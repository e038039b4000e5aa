// The node agent's per-pod decision, pure (docs/architecture.md §3.2 An agent resize, §5 Trust
// boundaries): from a pod, its request and status annotations and the evidence the reconciler
// gathered, whether to leave the pod alone, answer with a verdict, actuate the request, or verify
// what was applied; whether a well-formed request fits the pod; which containers restarted since
// they were resized; the status to write (only when it changed); and which metric result and
// event a verdict earns.
// Owns: the order in which the agent's refusals are checked, its retry periods and its reasons,
// and the metric results (ResizeResult, the values of agent/metrics.ts's result label).
// Must not: read anything but its arguments (no informer, CRI, cgroup or clock); take the status
// annotation for what was applied (only Evidence.applied, the agent's own record, is), so a
// forged status cannot skip admission.
import { sameJSON } from '../../api/json.js';
import { resizableContainers } from '../../api/pod.js';
import { parseQuantity, toBytes, toMilli } from '../../api/quantity.js';
import type { ResizeState } from '../../api/types.js';
import { errorMessage } from '../../api/errors.js';
import { AgentReasons, AgentVerdicts } from '../../api/reasons.js';
import type { Pod } from '../../api/wire.js';
import type { ContainerResources, Parsed, ResizeRequest, ResizeStatus } from '../../resize/agent-protocol.js';
import { holdsResources, type AdmissionResult } from './admission.js';
import type { AppliedRecord } from './applied-record.js';
import type { NamespaceLimitsVerdict } from './namespace-limits.js';

/** How long a Deferred / Infeasible / refused resize waits before it is tried again without an event. */
export const RETRY_DEFERRED_MS = 30_000;
export const RETRY_INFEASIBLE_MS = 120_000;
export const RETRY_REFUSED_MS = 10_000;
export const RETRY_NOT_RUNNING_MS = 5_000;

/** A status to record (revision and since are filled in by nextStatus). */
export interface StatusUpdate {
  readonly state: ResizeState | '';
  readonly reason?: string;
  readonly message?: string;
  readonly applied?: ResizeStatus['applied'];
}

export type Action =
  | { readonly action: 'None'; readonly why: string; readonly retryAfterMs?: number }
  | {
      readonly action: 'Report';
      readonly revision: string;
      readonly status: StatusUpdate;
      readonly retryAfterMs?: number;
    }
  | { readonly action: 'Actuate'; readonly request: ResizeRequest }
  | { readonly action: 'Verify'; readonly request: ResizeRequest; readonly applied: AppliedRecord['containers'] };

/**
 * What is wrong with a well-formed request for this pod, or undefined: a container the pod does
 * not have, an unreadable quantity, a request above its limit, or a limit the pod has and the
 * request drops (CRI cannot remove a limit in place; the API server forbids it too).
 */
export function validateRequest(request: ResizeRequest, pod: Pod): string | undefined {
  const spec = new Map(resizableContainers(pod.spec).map((c) => [c.name, c.resources]));
  for (const [name, r] of Object.entries(request.containers)) {
    if (!spec.has(name)) return `container ${name} is not a resizable container of the pod`;
    for (const resource of ['cpu', 'memory'] as const) {
      const problem = resourceProblem(name, resource, r, spec.get(name)?.limits?.[resource] !== undefined);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

/** validateRequest for one resource of one container; `specHasLimit`: the pod's spec sets its limit. */
function resourceProblem(
  name: string,
  resource: 'cpu' | 'memory',
  r: ContainerResources,
  specHasLimit: boolean,
): string | undefined {
  const read = (text: string | undefined): bigint | undefined => {
    if (text === undefined) return undefined;
    const q = parseQuantity(text, { allowNegative: false });
    return resource === 'cpu' ? toMilli(q) : toBytes(q);
  };
  let request: bigint | undefined;
  let limit: bigint | undefined;
  try {
    request = read(r.requests?.[resource]);
    limit = read(r.limits?.[resource]);
  } catch (err) {
    return `container ${name}: ${resource}: ${errorMessage(err)}`;
  }
  if (request !== undefined && limit !== undefined && request > limit) {
    return `container ${name}: ${resource} request ${r.requests?.[resource]} is above its limit ${r.limits?.[resource]}`;
  }
  if (specHasLimit && limit === undefined) {
    return `container ${name}: the ${resource} limit cannot be removed in place`;
  }
  return undefined;
}

/** What the agent knows about a pod besides its annotations; each part comes from its own source. */
export interface Evidence {
  /** The pod's controller owner is an apps.tailor.dev CloneSet (authorize.ts workloadOwner). */
  readonly workloadOwned: boolean;
  /** Whether the node's kubelet resizes in place (resize/backend.ts); undefined: no evidence. */
  readonly kubeletResizes: boolean | undefined;
  /** The request's ControllerRevision is not known to the agent yet (its cache may lag). */
  readonly revisionPending?: boolean;
  /** Why the request is not what the CloneSet's revision asks for (authorize.ts). */
  readonly notInRevision?: string | undefined;
  /** Why the request would change the pod's QoS class (authorize.ts). */
  readonly qosChange?: string | undefined;
  /** Why the request needs a container restart the agent does not do (authorize.ts). */
  readonly restartRequired?: string | undefined;
  /** What the namespace's LimitRanges and ResourceQuotas refuse (namespace-limits.ts). */
  readonly namespaceLimits?: NamespaceLimitsVerdict | undefined;
  /** What the agent itself applied to this pod (its in-memory record). */
  readonly applied: AppliedRecord | undefined;
  /** The verdict on the request; undefined when it could not be judged (e.g. the Node is not known yet). */
  readonly admission: AdmissionResult | undefined;
}

const refuse = (revision: string, reason: string, message: string): Action => ({
  action: 'Report',
  revision,
  status: { state: 'Infeasible', reason, message },
  retryAfterMs: RETRY_INFEASIBLE_MS,
});

/**
 * The per-pod decision, pure. `request`/`status` as read from the annotations; the status is
 * only used to name a revision in an answer to an unreadable request — it never stands for what
 * was applied (that is `evidence.applied`, the agent's own record), so a forged status cannot skip
 * admission. Every CloneSet pod with a request gets an answer: a resize, or a verdict.
 */
export function decide(
  pod: Pod,
  request: Parsed<ResizeRequest>,
  status: Parsed<ResizeStatus>,
  evidence: Evidence,
): Action {
  if (!request.ok && request.error === undefined) return { action: 'None', why: 'no resize request' };
  if (!evidence.workloadOwned)
    return { action: 'None', why: 'the pod is not controlled by an apps.tailor.dev CloneSet' };
  if (pod.metadata?.deletionTimestamp || !holdsResources(pod))
    return { action: 'None', why: 'the pod is terminating or finished' };
  const revision = request.ok ? request.value.revision : status.ok ? status.value.revision : '';
  if (evidence.kubeletResizes === true) {
    return {
      action: 'Report',
      revision,
      status: {
        state: 'Infeasible',
        reason: AgentVerdicts.KubeletResizes,
        message: `the kubelet of node ${pod.spec?.nodeName ?? ''} resizes in place; the agent leaves this pod to it (use pods/resize)`,
      },
    };
  }
  if (!request.ok) return refuse(revision, AgentReasons.InvalidRequest, request.error ?? '');
  return decideRequest(pod, request.value, evidence);
}

/** decide() for a readable request on a CloneSet pod the agent resizes: a refusal, a verify, admission's verdict. */
function decideRequest(pod: Pod, r: ResizeRequest, evidence: Evidence): Action {
  const problem = validateRequest(r, pod);
  if (problem !== undefined) return refuse(r.revision, AgentReasons.InvalidRequest, problem);
  if (evidence.revisionPending)
    return {
      action: 'None',
      why: `ControllerRevision ${r.revision} is not known yet`,
      retryAfterMs: RETRY_NOT_RUNNING_MS,
    };
  const refusal = authorizationRefusal(r.revision, evidence);
  if (refusal !== undefined) return refusal;
  if (evidence.applied?.revision === r.revision)
    return { action: 'Verify', request: r, applied: evidence.applied.containers };
  const admission = evidence.admission;
  if (admission === undefined)
    return { action: 'None', why: 'node allocatable is not known yet', retryAfterMs: RETRY_NOT_RUNNING_MS };
  if (admission.decision !== 'Admit') {
    return {
      action: 'Report',
      revision: r.revision,
      status: { state: admission.decision, reason: admission.reason, message: admission.message },
      retryAfterMs: admission.decision === 'Deferred' ? RETRY_DEFERRED_MS : RETRY_INFEASIBLE_MS,
    };
  }
  return { action: 'Actuate', request: r };
}

/** The first thing the request may not do (its revision, QoS class, restarts, namespace limits), refused. */
function authorizationRefusal(revision: string, evidence: Evidence): Action | undefined {
  if (evidence.notInRevision) return refuse(revision, AgentVerdicts.NotInRevision, evidence.notInRevision);
  if (evidence.qosChange) return refuse(revision, AgentVerdicts.QoSClassChange, evidence.qosChange);
  if (evidence.restartRequired)
    return refuse(revision, AgentVerdicts.RestartContainerUnsupported, evidence.restartRequired);
  if (evidence.namespaceLimits)
    return refuse(revision, AgentVerdicts[evidence.namespaceLimits.reason], evidence.namespaceLimits.message);
  return undefined;
}

/** Verdicts that refuse a request outright: recorded with a Warning event on the pod as well. */
const REFUSALS: ReadonlySet<string> = new Set([
  AgentReasons.InvalidRequest,
  AgentVerdicts.NotInRevision,
  AgentVerdicts.QoSClassChange,
  AgentVerdicts.RestartContainerUnsupported,
  AgentVerdicts.OutsideLimitRange,
  AgentVerdicts.GrowthNotChargedToQuota,
]);

/** Whether a verdict refuses the request outright (recorded with a Warning event on the pod as well). */
export function isRefusal(reason: string): boolean {
  return REFUSALS.has(reason);
}

/**
 * What became of a resize request the agent handled: the result label of tailor_agent_resizes_total
 * (agent/metrics.ts).
 */
export type ResizeResult = 'applied' | 'unchanged' | 'deferred' | 'infeasible' | 'refused' | 'kubelet' | 'error';

/** The metric result of a verdict the agent reported instead of resizing. */
export function reportResult(status: StatusUpdate): ResizeResult {
  const reason = status.reason ?? '';
  if (reason === AgentVerdicts.KubeletResizes) return 'kubelet';
  if (REFUSALS.has(reason)) return 'refused';
  return status.state === 'Deferred' ? 'deferred' : 'infeasible';
}

/** Containers whose recorded container ID is not the one running now (restarted); not-running ones are left out. */
export function restartedContainers(
  applied: Readonly<Record<string, { readonly containerID?: string }>>,
  running: ReadonlyMap<string, string>,
  names: readonly string[],
): string[] {
  return names.filter((name) => {
    const id = running.get(name);
    return id !== undefined && applied[name]?.containerID !== id;
  });
}

/** The status to write, or undefined when `prev` already says the same (since is kept while the state holds). */
export function nextStatus(
  prev: ResizeStatus | undefined,
  revision: string,
  update: StatusUpdate,
  now: string,
): ResizeStatus | undefined {
  const next: ResizeStatus = { revision, state: update.state, since: now };
  if (update.reason) next.reason = update.reason;
  if (update.message) next.message = update.message;
  if (update.applied) next.applied = update.applied;
  if (prev && prev.revision === revision && prev.state === update.state) next.since = prev.since;
  return prev && sameStatus(prev, next) ? undefined : next;
}

/** Field by field: the annotation's JSON may order its keys differently. */
function sameStatus(a: ResizeStatus, b: ResizeStatus): boolean {
  return (
    a.revision === b.revision &&
    a.state === b.state &&
    a.since === b.since &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '') &&
    sameJSON(a.applied, b.applied)
  );
}
