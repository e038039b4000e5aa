// The watcher: list + watch of one collection as an explicit state machine, in the manner of
// kube-rs's watcher. `step(state, input)` is pure: it returns the next state and the effects the
// driver (informer.ts) must perform — start a list or a watch, arm or clear a timer, back off,
// mark the cache synced, resync, log. Every request carries an `attempt` number and an input
// from an older attempt is ignored, so a watch that was abandoned cannot touch the state.
//
//   idle ──start──▶ listing ──listed──▶ watching ──closed (healthy)──▶ watching (new attempt)
//                     ▲  │                 │ ├─ 410 Gone, no event for noEventTimeoutMs,
//                     │  └─failed─▶ backingOff   │   or the periodic relist ──▶ listing
//                     └────retry (then: list)◀┘ └─ failed / closed too soon ─▶ backingOff (then: watch)
//   any ──stop──▶ stopped
//
// Guarantees: at most one list or watch is current at a time; the cache is marked synced once,
// after the first complete list; every failure (except 410, which relists at once unless the
// watch was opened from a list just made) waits a backoff; a watch that lasted `healthyAfterMs` resets the backoff; the watchdog is armed exactly
// while watching and re-armed by every event, bookmarks included.
// Must not: do I/O, read clocks or random numbers (time arrives in inputs), or know object shapes.

/** Why the watcher (re)lists; shown in logs. */
export type ListReason = 'initial' | 'gone' | 'stalled' | 'periodic' | 'error';

export type WatcherState =
  | { readonly phase: 'idle' }
  | { readonly phase: 'listing'; readonly attempt: number; readonly reason: ListReason; readonly synced: boolean }
  | {
      readonly phase: 'watching';
      readonly attempt: number;
      readonly resourceVersion: string;
      /** When this watch started (ms); decides whether it was healthy. */
      readonly since: number;
      /** Its resourceVersion is the one a list just returned (not one resumed after a failure or a close). */
      readonly fromList: boolean;
      readonly synced: true;
    }
  | {
      readonly phase: 'backingOff';
      readonly attempt: number;
      /** What to do when the backoff ends. */
      readonly then: 'list' | 'watch';
      readonly resourceVersion: string;
      readonly synced: boolean;
    }
  | { readonly phase: 'stopped' };

export type WatcherPhase = WatcherState['phase'];

export type WatcherInput =
  | { readonly type: 'start'; readonly now: number }
  | { readonly type: 'listed'; readonly attempt: number; readonly resourceVersion: string; readonly now: number }
  | { readonly type: 'listFailed'; readonly attempt: number; readonly error: unknown }
  /** Any line of the watch stream, bookmarks included. */
  | { readonly type: 'watchEvent'; readonly attempt: number; readonly resourceVersion?: string }
  /** The server ended the watch cleanly (its timeoutSeconds). */
  | { readonly type: 'watchClosed'; readonly attempt: number; readonly now: number }
  | {
      readonly type: 'watchFailed';
      readonly attempt: number;
      readonly gone: boolean;
      readonly error: unknown;
      readonly now: number;
    }
  | { readonly type: 'watchdogFired'; readonly attempt: number }
  | { readonly type: 'retryDue'; readonly attempt: number; readonly now: number }
  | { readonly type: 'relistDue' }
  | { readonly type: 'resyncDue' }
  | { readonly type: 'stop' };

export type WatcherEffect =
  | { readonly kind: 'list'; readonly attempt: number }
  | { readonly kind: 'watch'; readonly attempt: number; readonly resourceVersion: string }
  /** Abandon the current watch request. */
  | { readonly kind: 'abortWatch' }
  /** (Re)start the no-event timer; when it fires, feed `watchdogFired` with this attempt. */
  | { readonly kind: 'armWatchdog'; readonly attempt: number }
  | { readonly kind: 'disarmWatchdog' }
  /** Wait the backoff's next delay, then feed `retryDue` with this attempt. */
  | { readonly kind: 'scheduleRetry'; readonly attempt: number }
  | { readonly kind: 'resetBackoff' }
  /** (Re)start the periodic relist timer; when it fires, feed `relistDue`. */
  | { readonly kind: 'armRelist' }
  | { readonly kind: 'markSynced' }
  /** Re-deliver every cached object to the handlers. */
  | { readonly kind: 'resync' }
  /** Clear every timer and abort whatever request is in flight. */
  | { readonly kind: 'shutdown' }
  | { readonly kind: 'log'; readonly level: 'info' | 'warn'; readonly msg: string; readonly error?: unknown };

export interface WatcherConfig {
  /** A watch that lasted this long resets the backoff. */
  readonly healthyAfterMs: number;
  /** A watch the server closes sooner than this counts as a failure (no tight re-watch loop). */
  readonly minWatchMs: number;
}

export interface Transition {
  readonly state: WatcherState;
  readonly effects: readonly WatcherEffect[];
}

const stay = (state: WatcherState): Transition => ({ state, effects: [] });

const attemptOf = (state: WatcherState): number => ('attempt' in state ? state.attempt : 0);
const syncedOf = (state: WatcherState): boolean => ('synced' in state ? state.synced : false);

function list(from: WatcherState, reason: ListReason, extra: WatcherEffect[] = []): Transition {
  const attempt = attemptOf(from) + 1;
  return {
    state: { phase: 'listing', attempt, reason, synced: syncedOf(from) },
    effects: [...extra, { kind: 'list', attempt }],
  };
}

/** Where a watch starts: its resourceVersion, when, and whether a list just returned that version. */
interface WatchStart {
  readonly resourceVersion: string;
  readonly now: number;
  readonly fromList?: boolean;
}

function watch(from: WatcherState, start: WatchStart, extra: WatcherEffect[] = []): Transition {
  const attempt = attemptOf(from) + 1;
  const { resourceVersion, now, fromList = false } = start;
  return {
    state: { phase: 'watching', attempt, resourceVersion, since: now, fromList, synced: true },
    effects: [...extra, { kind: 'watch', attempt, resourceVersion }, { kind: 'armWatchdog', attempt }],
  };
}

function backOff(
  from: WatcherState,
  then: 'list' | 'watch',
  resourceVersion: string,
  extra: WatcherEffect[],
): Transition {
  const attempt = attemptOf(from) + 1;
  return {
    state: { phase: 'backingOff', attempt, then, resourceVersion, synced: syncedOf(from) },
    effects: [...extra, { kind: 'scheduleRetry', attempt }],
  };
}

/** The one transition function. Inputs that do not apply to the current state change nothing. */
export function step(state: WatcherState, input: WatcherInput, config: WatcherConfig): Transition {
  if (state.phase === 'stopped') return stay(state);
  if (input.type === 'stop') return { state: { phase: 'stopped' }, effects: [{ kind: 'shutdown' }] };
  if (input.type === 'resyncDue') return syncedOf(state) ? { state, effects: [{ kind: 'resync' }] } : stay(state);
  switch (state.phase) {
    case 'idle':
      return input.type === 'start' ? list(state, 'initial') : stay(state);
    case 'listing':
      return stepListing(state, input);
    case 'watching':
      return stepWatching(state, input, config);
    case 'backingOff':
      return stepBackingOff(state, input);
  }
}

function stepListing(state: Extract<WatcherState, { phase: 'listing' }>, input: WatcherInput): Transition {
  if (!('attempt' in input) || input.attempt !== state.attempt) return stay(state);
  if (input.type === 'listed') {
    const extra: WatcherEffect[] = state.synced ? [] : [{ kind: 'markSynced' }];
    const start = { resourceVersion: input.resourceVersion, now: input.now, fromList: true };
    return watch(state, start, [...extra, { kind: 'armRelist' }]);
  }
  if (input.type === 'listFailed') {
    return backOff(state, 'list', '', [
      { kind: 'log', level: 'warn', msg: 'list failed; retrying', error: input.error },
    ]);
  }
  return stay(state);
}

function stepWatching(
  state: Extract<WatcherState, { phase: 'watching' }>,
  input: WatcherInput,
  config: WatcherConfig,
): Transition {
  if (input.type === 'relistDue') {
    return list(state, 'periodic', [{ kind: 'abortWatch' }, { kind: 'disarmWatchdog' }]);
  }
  if (!('attempt' in input) || input.attempt !== state.attempt) return stay(state);
  switch (input.type) {
    case 'watchEvent':
      return {
        state: { ...state, resourceVersion: input.resourceVersion || state.resourceVersion },
        effects: [{ kind: 'armWatchdog', attempt: state.attempt }],
      };
    case 'watchdogFired':
      return list(state, 'stalled', [
        { kind: 'log', level: 'warn', msg: 'watch delivered nothing; relisting' },
        { kind: 'abortWatch' },
        { kind: 'disarmWatchdog' },
      ]);
    case 'watchClosed': {
      const lasted = input.now - state.since;
      if (lasted < config.minWatchMs) {
        return backOff(state, 'watch', state.resourceVersion, [
          { kind: 'disarmWatchdog' },
          { kind: 'log', level: 'warn', msg: 'watch closed as soon as it opened; retrying' },
        ]);
      }
      const reset: WatcherEffect[] = lasted >= config.healthyAfterMs ? [{ kind: 'resetBackoff' }] : [];
      return watch(state, { resourceVersion: state.resourceVersion, now: input.now }, reset);
    }
    case 'watchFailed':
      return onWatchFailed(state, input, config);
    default:
      return stay(state);
  }
}

function onWatchFailed(
  state: Extract<WatcherState, { phase: 'watching' }>,
  input: Extract<WatcherInput, { type: 'watchFailed' }>,
  config: WatcherConfig,
): Transition {
  const reset: WatcherEffect[] = input.now - state.since >= config.healthyAfterMs ? [{ kind: 'resetBackoff' }] : [];
  // A watch refused with 410 as soon as it opened, from a list just made, would otherwise
  // relist and be refused again in a tight loop: that one waits its backoff first. One resumed
  // from an older resourceVersion (after an API server restart, whose new watch cache holds
  // none of the old ones) relists at once: the list it leads to is the guard.
  if (input.gone && state.fromList && input.now - state.since < config.minWatchMs) {
    return backOff(state, 'list', state.resourceVersion, [
      { kind: 'disarmWatchdog' },
      {
        kind: 'log',
        level: 'warn',
        msg: 'resourceVersion expired (410 Gone) as soon as the watch opened; relisting after a backoff',
      },
    ]);
  }
  if (input.gone) {
    return list(state, 'gone', [
      ...reset,
      { kind: 'disarmWatchdog' },
      { kind: 'log', level: 'info', msg: 'resourceVersion expired (410 Gone); relisting' },
    ]);
  }
  return backOff(state, 'watch', state.resourceVersion, [
    ...reset,
    { kind: 'disarmWatchdog' },
    { kind: 'log', level: 'warn', msg: 'watch failed; retrying', error: input.error },
  ]);
}

function stepBackingOff(state: Extract<WatcherState, { phase: 'backingOff' }>, input: WatcherInput): Transition {
  // A periodic relist that falls due while waiting turns the retry into a relist.
  if (input.type === 'relistDue') return stay({ ...state, then: 'list' });
  if (input.type !== 'retryDue' || input.attempt !== state.attempt) return stay(state);
  return state.then === 'list'
    ? list(state, 'error')
    : watch(state, { resourceVersion: state.resourceVersion, now: input.now });
}
