// What the resize strategy (updateStrategy.resizeStrategy, docs/architecture.md §4.1 The CloneSet
// API) says to do about one pod's unfinished resize, given its state (state.ts) and the time.
// Owns the timers (deferredTimeoutSeconds, inProgressTimeoutSeconds) and the action each outcome
// leads to. Must not: do I/O, read the clock (`now` is given), or keep state: timers come from
// recorded timestamps, so they survive a restart.
import { ResizeOutcomeReasons } from '../api/reasons.js';
import type { ResizeAction, UpdateStrategyType } from '../api/types.js';
import type { ResizeView } from './view.js';

export interface ResizeOutcomeStrategy {
  type: UpdateStrategyType;
  deferredTimeoutSeconds: number;
  inProgressTimeoutSeconds: number;
  onTimeout: ResizeAction;
  onInfeasible: ResizeAction;
}

export type ResizeOutcomeAction = 'none' | 'wait' | 'recreate' | 'blocked';

export interface ResizeOutcome {
  action: ResizeOutcomeAction;
  /** Why: Infeasible, DeferredTimeout or InProgressTimeout for recreate/blocked. */
  reason?: string;
  /** For people: the state, how long, the limit, and the kubelet's message. */
  message?: string;
  /** Epoch milliseconds at which the answer may change (a timer runs out). */
  nextCheckAt?: number;
}

const timeoutReason = {
  Proposed: ResizeOutcomeReasons.ProposedTimeout,
  Deferred: ResizeOutcomeReasons.DeferredTimeout,
  InProgress: ResizeOutcomeReasons.InProgressTimeout,
} as const;

function act(configured: ResizeAction, type: UpdateStrategyType): 'recreate' | 'blocked' {
  return type !== 'InPlaceOnly' && configured === 'Recreate' ? 'recreate' : 'blocked';
}

const kubeletSays = (view: Readonly<ResizeView>): string =>
  view.message ? `: ${view.reason && view.reason !== view.state ? `${view.reason}: ` : ''}${view.message}` : '';

/**
 * Proposed or Deferred longer than deferredTimeoutSeconds, InProgress longer than
 * inProgressTimeoutSeconds, all measured from the view's `since`, and Infeasible, lead to the
 * configured action; anything still inside its time says when to look again.
 * Actions: 'none' (done, or nothing pending), 'wait' (leave the pod; look again at nextCheckAt
 * when there is a timer), 'recreate' (replace the pod with the new resources), 'blocked' (leave
 * the pod and say why with the ResizeBlocked condition). InPlaceOnly never recreates: whatever
 * the configured action, it is 'blocked'. ReCreate follows the configured actions like
 * InPlaceIfPossible (a resize there can only come from outside Tailor).
 * A timer has run out once the elapsed time reaches the timeout (elapsed >= timeout), so a requeue
 * at nextCheckAt decides. A Deferred/InProgress view without a usable `since` (the ≤ 1.32
 * status.resize form carries no time) cannot time out by itself: the answer is 'wait' with
 * nextCheckAt one timeout from now, and the caller should supply `since` from its own record
 * (e.g. the previous status.resize entry of the pod while the state is unchanged).
 */
export function decideResizeOutcome(
  view: Readonly<ResizeView>,
  strategy: ResizeOutcomeStrategy,
  now: number,
): ResizeOutcome {
  if (view.done || view.state === undefined) return { action: 'none' };

  switch (view.state) {
    case 'Infeasible':
      return {
        action: act(strategy.onInfeasible, strategy.type),
        reason: ResizeOutcomeReasons.Infeasible,
        message: `resize is infeasible on this node${kubeletSays(view)}`,
      };

    case 'Proposed':
    case 'Deferred':
    case 'InProgress': {
      // A node that never decides (Proposed) holds the resize as long as one that defers it.
      const undecided = view.state !== 'InProgress';
      const timeoutSeconds = undecided ? strategy.deferredTimeoutSeconds : strategy.inProgressTimeoutSeconds;
      const setting = undecided ? 'deferredTimeoutSeconds' : 'inProgressTimeoutSeconds';
      const start = view.since === undefined ? Number.NaN : Date.parse(view.since);
      if (Number.isNaN(start)) {
        return {
          action: 'wait',
          message: `resize ${view.state} since an unknown time (${setting} ${timeoutSeconds})${kubeletSays(view)}`,
          nextCheckAt: now + timeoutSeconds * 1000,
        };
      }
      const deadline = start + timeoutSeconds * 1000;
      const elapsedSeconds = Math.max(0, Math.floor((now - start) / 1000));
      const summary = `resize ${view.state} for ${elapsedSeconds}s (${setting} ${timeoutSeconds})${kubeletSays(view)}`;
      if (now < deadline) return { action: 'wait', message: summary, nextCheckAt: deadline };
      return {
        action: act(strategy.onTimeout, strategy.type),
        reason: timeoutReason[view.state],
        message: summary,
      };
    }
  }
}
