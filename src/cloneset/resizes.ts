// The CloneSet controller's side of resizes: which backend resizes a pod, and what to tell the
// user and do about resizes in flight — status.resize, an event per state change (on the pod and
// the CloneSet), PodUnschedulable for replacements no node fits, the ResizeBlocked condition,
// metrics, and which pods the resize strategy says to recreate. Must not: delete pods or write
// status itself (the reconciler does, with its expectations).
import type { ConditionStatus } from '../api/types.js';
import { readUpdateState } from '../inplace/plan.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Pod } from '../runtime/kube-client.js';
import type { ResizeMetrics } from '../resize/metrics.js';
import { kubeletCanResize } from '../resize/state.js';
import { trackResizes, type ResizeTracking } from '../resize/track.js';
import type { DefaultedWireCloneSet, WireCloneSet } from './pods.js';

export type ResizeBackend = 'auto' | 'kubelet' | 'agent';

/**
 * How a pod is resized. `auto` uses the kubelet when its running containers report their actual
 * resources (the kubelet's in-place resize is on) and Tailor's node agent otherwise; a node with
 * no agent shows the resize Proposed with reason NoAgentResponse.
 */
export function resizeVia(backend: ResizeBackend, pod: Pod): { supported: boolean; via: 'kubelet' | 'agent' } {
  return backend === 'kubelet' || (backend === 'auto' && kubeletCanResize(pod))
    ? { supported: true, via: 'kubelet' }
    : { supported: true, via: 'agent' };
}

export interface ResizeFollowUp {
  tracking: ResizeTracking;
  /** Pods the strategy says to replace with their new resources. */
  recreate: Pod[];
  resizeBlocked: { status: ConditionStatus; reason: string; message: string } | null;
}

export function followResizes(
  stored: WireCloneSet,
  cs: DefaultedWireCloneSet,
  pods: Pod[],
  now: number,
  events: EventRecorder,
  metrics: ResizeMetrics | undefined,
): ResizeFollowUp {
  const tracking = trackResizes(
    pods.filter((p) => !p.metadata?.deletionTimestamp),
    cs.status?.resize,
    { type: cs.spec.updateStrategy.type, ...cs.spec.updateStrategy.resizeStrategy },
    now,
  );
  for (const { pod, from, view } of tracking.transitions) {
    const name = pod.metadata?.name ?? '';
    if (view.state) {
      const type = view.state === 'Infeasible' || view.reason === 'Error' ? 'Warning' : 'Normal';
      const message = `resize ${view.state}${view.message ? `: ${view.message}` : ''}`;
      events.event(pod, type, `Resize${view.state}`, message);
      events.event(stored, type, `Resize${view.state}`, `pod ${name}: ${message}`);
    } else if (from) {
      events.event(pod, 'Normal', 'ResizeCompleted', 'the node actuated the new resources');
      events.event(stored, 'Normal', 'ResizeCompleted', `pod ${name}`);
      const started = readUpdateState(pod)?.updateTimestamp;
      if (started) metrics?.duration.observe(Math.max(0, now - Date.parse(started)) / 1000);
    }
  }
  // A pod that cannot be scheduled (for example a replacement with resources no node fits) is
  // said so on the CloneSet too, where the user looks.
  for (const pod of pods) {
    const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
      events.event(stored, 'Warning', 'PodUnschedulable', `pod ${pod.metadata?.name} cannot be scheduled: ${scheduled.message ?? ''}`);
    }
  }
  for (const { pod, reason } of tracking.recreate) {
    events.event(stored, 'Warning', 'ResizeRecreate', `pod ${pod.metadata?.name} is recreated with its new resources: ${reason}`);
  }
  metrics?.record(cs.metadata?.namespace ?? '', cs.metadata?.name ?? '', tracking.status);
  const blocked = tracking.blocked;
  return {
    tracking,
    recreate: tracking.recreate.map((r) => r.pod),
    resizeBlocked:
      blocked.length > 0
        ? {
            status: 'True',
            reason: blocked.some((b) => b.reason === 'Infeasible') ? 'Infeasible' : 'Timeout',
            message: blocked.map((b) => `${b.pod.metadata?.name}: ${b.reason}${b.message ? ` (${b.message})` : ''}`).join('; ').slice(0, 2000),
          }
        : null,
  };
}
