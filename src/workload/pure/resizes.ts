// A workload's view of its pods' resizes: requests to reroute to the kubelet, status.resize, the
// events for each state change (on the pod and on the workload), PodUnschedulable for pods no
// node fits, which pods the resize strategy wants recreated (marked on their summaries, so the
// surge can replace them first: decision 79) or holds, and the ResizeBlocked condition's words.
// Pure. Must not: delete pods, emit events or write status (the executor does what the planner
// admits), nor admit a recreate (the planner draws every disruption from the one budget).
import { ConditionReasons, EventReasons, resizeStateReason } from '../../api/reasons.js';
import { hasEnded, isLivePod, podCondition } from '../../api/pod.js';
import type { Pod } from '../../api/wire.js';
import { readResizeRequest } from '../../resize/agent-protocol.js';
import { staleResizeRequest, type Backend, type ConfiguredBackend } from '../../resize/backend.js';
import { trackResizes, type ResizeStrategyInput, type ResizeTracking } from '../../resize/track.js';
import type { CloneSetResizeStatus } from '../../api/types.js';
import { readUpdateState } from '../../inplace/pure/plan.js';
import type { ConditionWrite, PlannedEvent } from './intents.js';
import type { PodSummary } from './pod-state.js';

export type ResizeBackend = ConfiguredBackend;

/**
 * What the plan does about a pod whose resize request is addressed to the agent although the
 * one backend rule (resize/backend.ts) says its kubelet resizes: send the requested resources
 * through pods/resize, then remove the request and the agent's answer, so neither side waits
 * for the other. Undefined when the pod carries no stale request.
 */
export function rerouteToKubelet(pod: Pod, backend: Backend): { resize?: Record<string, unknown> } | undefined {
  if (!staleResizeRequest(pod, backend)) return undefined;
  const request = readResizeRequest(pod);
  if (!request.ok) return {};
  const containers = Object.entries(request.value.containers).map(([name, resources]) => ({ name, resources }));
  return { resize: { spec: { containers } } };
}

export interface ResizeFollowUp {
  tracking: ResizeTracking;
  events: PlannedEvent[];
  /** Seconds each resize that finished since the last status took. */
  durations: number[];
}

/**
 * The round's resize news, from the workload's last status (its `resize`) and its update
 * strategy's type and resize strategy.
 */
export function followResizes(
  status: { resize?: CloneSetResizeStatus } | undefined,
  strategy: ResizeStrategyInput,
  pods: readonly Pod[],
  now: number,
): ResizeFollowUp {
  // An ended pod's resize is over with it: the cache keeps none of its status (decision 74).
  const tracking = trackResizes(pods.filter(isLivePod), status?.resize, strategy, now);
  const events: PlannedEvent[] = [];
  const durations: number[] = [];
  // Warnings go on the pod and the CloneSet one by one; routine transitions are batched on the
  // CloneSet (the pod's own conditions already show them).
  for (const { pod, from, view } of tracking.transitions) {
    const name = pod.metadata?.name ?? '';
    if (view.state) {
      const reason = resizeStateReason(view.state);
      if (view.state === 'Infeasible' || view.reason === 'Error') {
        const message = `resize ${view.state}${view.message ? `: ${view.message}` : ''}`;
        events.push({ on: pod, type: 'Warning', reason, message });
        events.push({ on: 'workload', type: 'Warning', reason, message: `pod ${name}: ${message}` });
      } else {
        events.push({ on: 'workload', type: 'Normal', reason, message: `resize ${view.state}`, batchPod: name });
      }
    } else if (from) {
      events.push({
        on: 'workload',
        type: 'Normal',
        reason: EventReasons.ResizeCompleted,
        message: 'the node actuated the new resources',
        batchPod: name,
      });
      const started = readUpdateState(pod)?.updateTimestamp;
      if (started) durations.push(Math.max(0, now - Date.parse(started)) / 1000);
    }
  }
  // A pod that cannot be scheduled (for example a replacement with resources no node fits) is
  // said so on the CloneSet too, where the user looks.
  for (const pod of pods.filter((p) => !hasEnded(p))) {
    const scheduled = podCondition(pod, 'PodScheduled');
    if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
      events.push({
        on: 'workload',
        type: 'Warning',
        reason: EventReasons.PodUnschedulable,
        message: `cannot be scheduled: ${scheduled.message ?? ''}`,
        batchPod: pod.metadata?.name ?? '',
      });
    }
  }
  return { tracking, events, durations };
}

/** The summaries with `resizeRecreate` set on the pods the resize strategy recreates (a kind's rollout arithmetic surges for them). */
export function markResizeRecreates(summaries: readonly PodSummary[], tracking: ResizeTracking): readonly PodSummary[] {
  if (tracking.recreate.length === 0) return summaries;
  const recreated = new Set(tracking.recreate.map((r) => r.pod.metadata?.name ?? ''));
  return summaries.map((s) => (recreated.has(s.name) ? { ...s, resizeRecreate: true } : s));
}

/**
 * ResizeBlocked: the resizes the strategy holds, and the recreates the budget held this round
 * (`waitsFor` says for what); null when there are none.
 */
export function resizeBlockedCondition(
  blocked: ResizeTracking['blocked'],
  held: ResizeTracking['recreate'],
  waitsFor: string,
): ConditionWrite | null {
  const name = (pod: Pod): string => pod.metadata?.name ?? '';
  const lines = [
    ...blocked.map((b) => `${name(b.pod)}: ${b.reason}${b.message ? ` (${b.message})` : ''}`),
    ...held.map((h) => `${name(h.pod)}: ${h.reason}, recreate waits for ${waitsFor}`),
  ];
  if (lines.length === 0) return null;
  const infeasible = [...blocked, ...held].some((b) => b.reason === 'Infeasible');
  return {
    status: 'True',
    reason: infeasible ? ConditionReasons.Infeasible : ConditionReasons.Timeout,
    message: lines.sort().join('; ').slice(0, 2000),
  };
}
