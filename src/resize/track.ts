// Follows the resizes of one CloneSet's pods: the CloneSet's status.resize, which pods changed
// state since the last status (for events), and what the resize strategy says to do about pods
// whose resize cannot finish (recreate them, or wait with a ResizeBlocked condition). Pure: the
// controller performs the deletions, events and status write. State comes from the pods and the
// previous status only, so timers survive a controller restart.
import { rfc3339Seconds } from '../api/time.js';
import type { CloneSetResizeStatus, ResizeAction, UpdateStrategyType } from '../api/types.js';
import type { Pod } from '../api/wire.js';
import { decideResizeOutcome } from './outcome.js';
import { podResizeView } from './state.js';
import type { ResizeView } from './view.js';
import { summarizeResizes } from './summary.js';

export interface ResizeStrategyInput {
  type: UpdateStrategyType;
  deferredTimeoutSeconds: number;
  inProgressTimeoutSeconds: number;
  onTimeout: ResizeAction;
  onInfeasible: ResizeAction;
}

export interface ResizeTracking {
  status: CloneSetResizeStatus;
  /** Pods whose state differs from the previous status (new state, or finished when undefined). */
  transitions: { pod: Pod; from?: string; view: Readonly<ResizeView> }[];
  recreate: { pod: Pod; reason: string }[];
  blocked: { pod: Pod; reason: string; message: string }[];
  nextCheckAt?: number;
}

export function trackResizes(
  pods: readonly Pod[],
  previous: CloneSetResizeStatus | undefined,
  strategy: ResizeStrategyInput,
  now: number,
): ResizeTracking {
  const before = new Map((previous?.pods ?? []).map((p) => [p.name, p.state]));
  const since = new Map((previous?.pods ?? []).map((p) => [p.name, p.since]));
  const entries = pods.map((pod) => {
    const name = pod.metadata?.name ?? '';
    const seen = podResizeView(pod);
    // The legacy status.resize form has no timestamp: a state's clock starts when we first saw it
    // and carries over in status.resize, so timeouts still fire after a controller restart.
    const view =
      seen.state && !seen.since
        ? { ...seen, since: (before.get(name) === seen.state ? since.get(name) : undefined) ?? rfc3339Seconds(now) }
        : seen;
    return { pod, name, view };
  });
  const result: ResizeTracking = { status: summarizeResizes(entries), transitions: [], recreate: [], blocked: [] };
  for (const { pod, name, view } of entries) {
    if (before.get(name) !== view.state && (view.state !== undefined || before.has(name))) {
      result.transitions.push({ pod, from: before.get(name), view });
    }
    if (view.done) continue;
    const outcome = decideResizeOutcome(view, strategy, now);
    if (outcome.action === 'recreate') result.recreate.push({ pod, reason: outcome.reason ?? `resize ${view.state}` });
    if (outcome.action === 'blocked') {
      result.blocked.push({
        pod,
        reason: outcome.reason ?? view.state ?? 'Blocked',
        message: outcome.message ?? view.message ?? '',
      });
    }
    if (outcome.nextCheckAt !== undefined)
      result.nextCheckAt = Math.min(result.nextCheckAt ?? Infinity, outcome.nextCheckAt);
  }
  return result;
}
