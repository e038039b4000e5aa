// The one rule for who resizes a pod (docs/architecture.md §4.4 Two resize backends), shared by
// the controller and the node agent so the two sides cannot disagree about a node: the evidence
// (nodeResizeEvidence), the backend (backendForPod) and a request left over from the other backend
// (staleResizeRequest).
// Pure. Must not: do I/O, remember anything, or decide what a resize state leads to (outcome.ts).
import { AgentVerdicts } from '../api/reasons.js';
import { hasEnded } from '../api/pod.js';
import type { Node, Pod } from '../api/wire.js';
import { readResizeRequest, readResizeStatus } from './agent-protocol.js';
import { kubeletCanResize } from './state.js';

export type ConfiguredBackend = 'auto' | 'kubelet' | 'agent';
export type Backend = 'kubelet' | 'agent';

/** What is known about one node's kubelet. `kubeletResizes` undefined: no evidence either way. */
export interface NodeResizeEvidence {
  readonly kubeletResizes: boolean | undefined;
  readonly why: string;
}

/** The first kubelet minor version with in-place resize (alpha, KEP-1287). */
const FIRST_RESIZE_MINOR = 27;

function kubeletPredatesResize(node: Node | undefined): string | undefined {
  const version = node?.status?.nodeInfo?.kubeletVersion;
  const m = version ? /^v?(\d+)\.(\d+)/.exec(version) : null;
  if (!m) return undefined;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major === 1 && minor < FIRST_RESIZE_MINOR ? `kubelet ${version} predates in-place resize` : undefined;
}

const runningContainers = (pod: Pod): number =>
  [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].filter(
    (s) => s.state?.running !== undefined,
  ).length;

/**
 * What one pod says about its node's kubelet: a running container that reports its resources says
 * it resizes; a running container without them says it does not; no running container says nothing.
 * An ended pod (Succeeded or Failed) says nothing either: the kubelet ends a pod only once its
 * containers stopped, so a "running" status on one was left by someone else (the pod GC failing
 * the pods of a node out of service), and the caches keep no status of it (decision 74).
 */
export function podTestifies(pod: Pod): 'resizes' | 'silent' | undefined {
  if (hasEnded(pod)) return undefined;
  if (kubeletCanResize(pod)) return 'resizes';
  return runningContainers(pod) > 0 ? 'silent' : undefined;
}

/**
 * Evidence about the kubelet of `nodeName`, from the pods the caller knows (only those bound to
 * that node count) and the Node when the caller has it. Positive evidence wins over negative: a
 * container reporting resources can only come from a kubelet that resizes.
 */
export function nodeResizeEvidence(nodeName: string, pods: readonly Pod[], node?: Node): NodeResizeEvidence {
  const old = kubeletPredatesResize(node);
  if (old !== undefined) return { kubeletResizes: false, why: old };
  const onNode = pods.filter((p) => nodeName !== '' && p.spec?.nodeName === nodeName);
  return evidenceFrom(
    nodeName,
    onNode.find((p) => podTestifies(p) === 'resizes'),
    onNode.find((p) => podTestifies(p) === 'silent'),
  );
}

/** The evidence one witness of each kind gives, positive first (nodeResizeEvidence's rule, for callers that keep witnesses themselves). */
export function evidenceFrom(nodeName: string, resizes: Pod | undefined, silent: Pod | undefined): NodeResizeEvidence {
  if (resizes) {
    return {
      kubeletResizes: true,
      why: `pod ${resizes.metadata?.namespace}/${resizes.metadata?.name} on node ${nodeName} reports its containers' actual resources`,
    };
  }
  if (silent) {
    return {
      kubeletResizes: false,
      why: `pod ${silent.metadata?.namespace}/${silent.metadata?.name} runs on node ${nodeName} without reporting actual resources`,
    };
  }
  return {
    kubeletResizes: undefined,
    why: `no running container on node ${nodeName || '(unscheduled)'} tells whether its kubelet resizes`,
  };
}

/** Whether the agent on the pod's node answered the pod's current resize request with KubeletResizes. */
export function agentSaysKubeletResizes(pod: Pod): boolean {
  const request = readResizeRequest(pod);
  const status = readResizeStatus(pod);
  return (
    request.ok &&
    status.ok &&
    status.value.revision === request.value.revision &&
    status.value.reason === AgentVerdicts.KubeletResizes
  );
}

/**
 * The backend that resizes `pod`: the agent's KubeletResizes verdict first (whatever is
 * configured: the agent never resizes where the kubelet does), then `configured`, and for `auto`
 * the kubelet on positive evidence only, because the agent answers every CloneSet request on its
 * node (it resizes, or says KubeletResizes), so a request is never left unanswered.
 */
export function backendForPod(configured: ConfiguredBackend, evidence: NodeResizeEvidence, pod: Pod): Backend {
  if (agentSaysKubeletResizes(pod)) return 'kubelet';
  if (configured !== 'auto') return configured;
  return evidence.kubeletResizes === true ? 'kubelet' : 'agent';
}

/**
 * Whether the pod carries a resize request (readable or not) although its backend is the kubelet.
 * The caller removes `resize-request` and `resize-status` (one merge patch, both null) before it
 * resizes through pods/resize; until then the agent view shows the pod Proposed, never Infeasible.
 */
export function staleResizeRequest(pod: Pod, backend: Backend): boolean {
  if (backend !== 'kubelet') return false;
  const request = readResizeRequest(pod);
  return request.ok || request.error !== undefined;
}
