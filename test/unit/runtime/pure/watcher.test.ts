// The watcher state machine, one transition at a time: each test feeds `step` a state and an
// input and checks the state it moves to and the effects it asks for. No I/O, no timers.
import { describe, expect, test } from '@jest/globals';
import {
  step,
  type WatcherEffect,
  type WatcherInput,
  type WatcherState,
} from '../../../../src/runtime/pure/watcher.js';

const CONFIG = { healthyAfterMs: 60_000, minWatchMs: 1_000 };
const kinds = (effects: readonly WatcherEffect[]): string[] => effects.map((e) => e.kind);

const listing = (attempt: number, synced = true): WatcherState => ({
  phase: 'listing',
  attempt,
  reason: 'initial',
  synced,
});
const watching = (attempt: number, since = 0, resourceVersion = '100', fromList = true): WatcherState => ({
  phase: 'watching',
  attempt,
  resourceVersion,
  since,
  fromList,
  synced: true,
});

function run(state: WatcherState, ...inputs: WatcherInput[]): { state: WatcherState; effects: WatcherEffect[] } {
  const effects: WatcherEffect[] = [];
  for (const input of inputs) {
    const t = step(state, input, CONFIG);
    state = t.state;
    effects.push(...t.effects);
  }
  return { state, effects };
}

describe('watcher step', () => {
  test('start lists first, unsynced', () => {
    const t = step({ phase: 'idle' }, { type: 'start', now: 0 }, CONFIG);
    expect(t.state).toEqual({ phase: 'listing', attempt: 1, reason: 'initial', synced: false });
    expect(t.effects).toEqual([{ kind: 'list', attempt: 1 }]);
  });

  test('the first complete list marks the cache synced, arms the relist timer and watches from its resourceVersion', () => {
    const t = step(listing(1, false), { type: 'listed', attempt: 1, resourceVersion: '42', now: 5 }, CONFIG);
    expect(t.state).toEqual({
      phase: 'watching',
      attempt: 2,
      resourceVersion: '42',
      since: 5,
      fromList: true,
      synced: true,
    });
    expect(t.effects).toEqual([
      { kind: 'markSynced' },
      { kind: 'armRelist' },
      { kind: 'watch', attempt: 2, resourceVersion: '42' },
      { kind: 'armWatchdog', attempt: 2 },
    ]);
  });

  test('a later list does not mark the cache synced again', () => {
    const t = step(listing(3, true), { type: 'listed', attempt: 3, resourceVersion: '50', now: 0 }, CONFIG);
    expect(kinds(t.effects)).not.toContain('markSynced');
  });

  test('a failed list backs off, then lists again', () => {
    const failed = step(listing(1, false), { type: 'listFailed', attempt: 1, error: new Error('refused') }, CONFIG);
    expect(failed.state).toMatchObject({ phase: 'backingOff', then: 'list', attempt: 2, synced: false });
    expect(kinds(failed.effects)).toEqual(['log', 'scheduleRetry']);
    const retried = step(failed.state, { type: 'retryDue', attempt: 2, now: 1000 }, CONFIG);
    expect(retried.state).toMatchObject({ phase: 'listing', attempt: 3, reason: 'error' });
    expect(retried.effects).toEqual([{ kind: 'list', attempt: 3 }]);
  });

  test('every watch event re-arms the watchdog and a bookmark moves the resourceVersion', () => {
    const t = step(watching(2), { type: 'watchEvent', attempt: 2, resourceVersion: '101' }, CONFIG);
    expect(t.state).toMatchObject({ phase: 'watching', resourceVersion: '101' });
    expect(t.effects).toEqual([{ kind: 'armWatchdog', attempt: 2 }]);
  });

  test('410 Gone relists at once, without backing off', () => {
    const t = step(
      watching(2),
      { type: 'watchFailed', attempt: 2, gone: true, error: new Error('gone'), now: 5_000 },
      CONFIG,
    );
    expect(t.state).toMatchObject({ phase: 'listing', attempt: 3, reason: 'gone' });
    expect(kinds(t.effects)).toEqual(['disarmWatchdog', 'log', 'list']);
  });

  // Issue 20.14: a server that answers every watch with 410 must not be relisted in a tight loop.
  test('410 Gone as soon as a watch opened from a list just made backs off before relisting', () => {
    const t = step(
      watching(2, 0),
      { type: 'watchFailed', attempt: 2, gone: true, error: new Error('gone'), now: 10 },
      CONFIG,
    );
    expect(t.state).toMatchObject({ phase: 'backingOff', then: 'list', attempt: 3 });
    expect(kinds(t.effects)).toEqual(['disarmWatchdog', 'log', 'scheduleRetry']);
  });

  // Issue 47.6: after an API server restart, its new watch cache knows none of the old resourceVersions.
  test('410 Gone as soon as a watch resumed from an older resourceVersion opened relists at once', () => {
    const t = step(
      watching(2, 0, '120', false),
      { type: 'watchFailed', attempt: 2, gone: true, error: new Error('gone'), now: 10 },
      CONFIG,
    );
    expect(t.state).toMatchObject({ phase: 'listing', attempt: 3, reason: 'gone' });
    expect(kinds(t.effects)).toEqual(['disarmWatchdog', 'log', 'list']);
  });

  test('a watch opened from a list carries that mark; one resumed after a backoff does not', () => {
    const listed = run(listing(1), { type: 'listed', attempt: 1, resourceVersion: '100', now: 0 });
    expect(listed.state).toMatchObject({ phase: 'watching', fromList: true });
    const resumed = run(
      listed.state,
      { type: 'watchFailed', attempt: 2, gone: false, error: new Error('reset'), now: 5_000 },
      { type: 'retryDue', attempt: 3, now: 6_000 },
    );
    expect(resumed.state).toMatchObject({ phase: 'watching', fromList: false, resourceVersion: '100' });
  });

  test('a failed watch backs off, then watches again from the last resourceVersion', () => {
    const failed = run(watching(2, 0, '120'), {
      type: 'watchFailed',
      attempt: 2,
      gone: false,
      error: new Error('reset'),
      now: 10,
    });
    expect(failed.state).toMatchObject({ phase: 'backingOff', then: 'watch', resourceVersion: '120' });
    expect(kinds(failed.effects)).toEqual(['disarmWatchdog', 'log', 'scheduleRetry']);
    const retried = run(failed.state, { type: 'retryDue', attempt: 3, now: 900 });
    expect(retried.state).toMatchObject({ phase: 'watching', attempt: 4, resourceVersion: '120', since: 900 });
    expect(kinds(retried.effects)).toEqual(['watch', 'armWatchdog']);
  });

  test('a watch that ran healthily resets the backoff when it fails', () => {
    const t = step(
      watching(2, 0),
      { type: 'watchFailed', attempt: 2, gone: false, error: new Error('x'), now: 60_000 },
      CONFIG,
    );
    expect(kinds(t.effects)).toContain('resetBackoff');
  });

  test('the watchdog abandons a silent watch and relists', () => {
    const t = step(watching(2), { type: 'watchdogFired', attempt: 2 }, CONFIG);
    expect(t.state).toMatchObject({ phase: 'listing', attempt: 3, reason: 'stalled' });
    expect(t.effects).toEqual([
      { kind: 'log', level: 'warn', msg: 'watch delivered nothing; relisting' },
      { kind: 'abortWatch' },
      { kind: 'disarmWatchdog' },
      { kind: 'list', attempt: 3 },
    ]);
  });

  test('a watch the server closes normally is resumed at once from where it ended', () => {
    const t = step(watching(2, 0, '130'), { type: 'watchClosed', attempt: 2, now: 300_000 }, CONFIG);
    expect(t.state).toMatchObject({ phase: 'watching', attempt: 3, resourceVersion: '130', since: 300_000 });
    expect(kinds(t.effects)).toEqual(['resetBackoff', 'watch', 'armWatchdog']);
  });

  test('a watch closed as soon as it opened counts as a failure and backs off', () => {
    const t = step(watching(2, 1000), { type: 'watchClosed', attempt: 2, now: 1500 }, CONFIG);
    expect(t.state).toMatchObject({ phase: 'backingOff', then: 'watch' });
    expect(kinds(t.effects)).toContain('scheduleRetry');
  });

  test('the periodic relist abandons the watch and lists; while backing off it turns the retry into a list', () => {
    const t = step(watching(2), { type: 'relistDue' }, CONFIG);
    expect(t.state).toMatchObject({ phase: 'listing', reason: 'periodic' });
    expect(kinds(t.effects)).toEqual(['abortWatch', 'disarmWatchdog', 'list']);
    const waiting: WatcherState = {
      phase: 'backingOff',
      attempt: 5,
      then: 'watch',
      resourceVersion: '9',
      synced: true,
    };
    expect(step(waiting, { type: 'relistDue' }, CONFIG).state).toMatchObject({ then: 'list' });
  });

  test('inputs from an abandoned attempt change nothing', () => {
    const state = watching(4);
    for (const input of [
      { type: 'watchEvent', attempt: 2, resourceVersion: '1' },
      { type: 'watchFailed', attempt: 3, gone: true, error: null, now: 0 },
      { type: 'watchdogFired', attempt: 2 },
      { type: 'watchClosed', attempt: 3, now: 0 },
      { type: 'listed', attempt: 3, resourceVersion: '7', now: 0 },
    ] as const satisfies readonly WatcherInput[]) {
      expect(step(state, input, CONFIG)).toEqual({ state, effects: [] });
    }
  });

  test('resync re-delivers only once the cache is synced', () => {
    expect(step(listing(1, false), { type: 'resyncDue' }, CONFIG).effects).toEqual([]);
    expect(step(watching(2), { type: 'resyncDue' }, CONFIG).effects).toEqual([{ kind: 'resync' }]);
  });

  test('stop shuts everything down from any phase, and a stopped watcher ignores everything', () => {
    for (const state of [{ phase: 'idle' } as const, listing(1), watching(2)]) {
      expect(step(state, { type: 'stop' }, CONFIG)).toEqual({
        state: { phase: 'stopped' },
        effects: [{ kind: 'shutdown' }],
      });
    }
    expect(step({ phase: 'stopped' }, { type: 'start', now: 0 }, CONFIG).effects).toEqual([]);
  });
});
