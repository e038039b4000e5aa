import { describe, expect, it } from '@jest/globals';
import { MAX_RESIZE_STATUS_PODS } from '../../../src/api/types.js';
import { decideResizeOutcome, type ResizeOutcome, type ResizeOutcomeStrategy } from '../../../src/resize/outcome.js';
import type { ResizeView } from '../../../src/resize/view.js';
import { summarizeResizes } from '../../../src/resize/summary.js';

/** The expected fields that have a value; those given as undefined must be absent. */
const defined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();
const at = (secondsFromNow: number) => NOW + secondsFromNow * 1000;

const ifPossible: ResizeOutcomeStrategy = {
  type: 'InPlaceIfPossible',
  deferredTimeoutSeconds: 300,
  inProgressTimeoutSeconds: 3600,
  onTimeout: 'Recreate',
  onInfeasible: 'Recreate',
};
const waiting: ResizeOutcomeStrategy = { ...ifPossible, onTimeout: 'Wait', onInfeasible: 'Wait' };
const inPlaceOnly: ResizeOutcomeStrategy = { ...ifPossible, type: 'InPlaceOnly' };
const reCreate: ResizeOutcomeStrategy = { ...ifPossible, type: 'ReCreate' };

const outcomes: [string, ResizeView, ResizeOutcomeStrategy, Partial<ResizeOutcome>][] = [
  ['a done resize needs nothing', { done: true }, ifPossible, { action: 'none' }],
  ['a pod with nothing pending needs nothing', { done: false }, ifPossible, { action: 'none' }],
  [
    'Proposed for 100s of 300s waits until 300s after it began',
    { state: 'Proposed', since: ago(100), done: false },
    ifPossible,
    { action: 'wait', nextCheckAt: at(200) },
  ],
  [
    'Proposed for 300s times out like Deferred',
    { state: 'Proposed', reason: 'NoAgentResponse', since: ago(300), done: false },
    ifPossible,
    { action: 'recreate', reason: 'ProposedTimeout' },
  ],
  [
    'Proposed past its timeout with onTimeout Wait is blocked',
    { state: 'Proposed', since: ago(301), done: false },
    waiting,
    { action: 'blocked', reason: 'ProposedTimeout' },
  ],
  [
    'InPlaceOnly never recreates a timed-out Proposed pod',
    { state: 'Proposed', since: ago(10_000), done: false },
    inPlaceOnly,
    { action: 'blocked', reason: 'ProposedTimeout' },
  ],
  [
    'a Proposed pod with no known start waits one deferred timeout from now',
    { state: 'Proposed', done: false },
    ifPossible,
    { action: 'wait', nextCheckAt: at(300) },
  ],
  [
    'Deferred for 100s of 300s waits until 300s after it began',
    { state: 'Deferred', since: ago(100), done: false },
    ifPossible,
    { action: 'wait', nextCheckAt: at(200) },
  ],
  [
    'Deferred for 299s still waits, one second more',
    { state: 'Deferred', since: ago(299), done: false },
    ifPossible,
    { action: 'wait', nextCheckAt: at(1) },
  ],
  [
    'Deferred for exactly 300s has timed out',
    { state: 'Deferred', since: ago(300), done: false },
    ifPossible,
    { action: 'recreate', reason: 'DeferredTimeout' },
  ],
  [
    'Deferred for 301s with onTimeout Recreate recreates the pod',
    {
      state: 'Deferred',
      reason: 'Deferred',
      message: "Node didn't have enough resource: cpu",
      since: ago(301),
      done: false,
    },
    ifPossible,
    {
      action: 'recreate',
      reason: 'DeferredTimeout',
      message: "resize Deferred for 301s (deferredTimeoutSeconds 300): Node didn't have enough resource: cpu",
    },
  ],
  [
    'Deferred past its timeout with onTimeout Wait is blocked',
    { state: 'Deferred', since: ago(301), done: false },
    waiting,
    { action: 'blocked', reason: 'DeferredTimeout', nextCheckAt: undefined },
  ],
  [
    'InProgress for 30 minutes of 60 waits until the hour is up',
    { state: 'InProgress', since: ago(1800), done: false },
    ifPossible,
    { action: 'wait', nextCheckAt: at(1800) },
  ],
  [
    'InProgress for 2 hours with onTimeout Recreate recreates the pod',
    { state: 'InProgress', since: ago(7200), done: false },
    ifPossible,
    { action: 'recreate', reason: 'InProgressTimeout' },
  ],
  [
    'InProgress with a kubelet Error times out like any InProgress and names the error',
    {
      state: 'InProgress',
      reason: 'Error',
      message: 'memory limit (10240) below current usage',
      since: ago(3600),
      done: false,
    },
    waiting,
    {
      action: 'blocked',
      reason: 'InProgressTimeout',
      message:
        'resize InProgress for 3600s (inProgressTimeoutSeconds 3600): Error: memory limit (10240) below current usage',
    },
  ],
  [
    'the InProgress timer is measured from since, not from the Deferred timeout',
    { state: 'InProgress', since: ago(400), done: false },
    ifPossible,
    { action: 'wait', nextCheckAt: at(3200) },
  ],
  [
    'Infeasible with onInfeasible Recreate recreates the pod at once',
    {
      state: 'Infeasible',
      message: "Node didn't have enough capacity: cpu, requested: 64000, capacity: 4000",
      since: ago(1),
      done: false,
    },
    ifPossible,
    {
      action: 'recreate',
      reason: 'Infeasible',
      message:
        "resize is infeasible on this node: Node didn't have enough capacity: cpu, requested: 64000, capacity: 4000",
    },
  ],
  [
    'Infeasible with onInfeasible Wait is blocked',
    { state: 'Infeasible', since: ago(1), done: false },
    waiting,
    { action: 'blocked', reason: 'Infeasible' },
  ],
  [
    'InPlaceOnly never recreates an Infeasible pod, even when told to',
    { state: 'Infeasible', since: ago(1), done: false },
    inPlaceOnly,
    { action: 'blocked', reason: 'Infeasible' },
  ],
  [
    'InPlaceOnly never recreates a timed-out Deferred pod',
    { state: 'Deferred', since: ago(10_000), done: false },
    inPlaceOnly,
    { action: 'blocked', reason: 'DeferredTimeout' },
  ],
  [
    'InPlaceOnly never recreates a timed-out InProgress pod',
    { state: 'InProgress', since: ago(10_000), done: false },
    inPlaceOnly,
    { action: 'blocked', reason: 'InProgressTimeout' },
  ],
  [
    'InPlaceOnly still waits out the timer first',
    { state: 'Deferred', since: ago(10), done: false },
    inPlaceOnly,
    { action: 'wait', nextCheckAt: at(290) },
  ],
  ['ReCreate follows the configured action', { state: 'Infeasible', done: false }, reCreate, { action: 'recreate' }],
  [
    'a Deferred pod with no known start (legacy form) waits one timeout from now',
    { state: 'Deferred', done: false },
    ifPossible,
    { action: 'wait', nextCheckAt: at(300) },
  ],
  [
    'an unreadable since counts as unknown',
    { state: 'InProgress', since: 'yesterday', done: false },
    ifPossible,
    { action: 'wait', nextCheckAt: at(3600) },
  ],
  [
    'a zero timeout acts at once',
    { state: 'Deferred', since: ago(0), done: false },
    { ...ifPossible, deferredTimeoutSeconds: 0 },
    { action: 'recreate', reason: 'DeferredTimeout' },
  ],
];

describe('decideResizeOutcome applies the resize strategy', () => {
  it.each(outcomes)('%s', (_name, view, strategy, expected) => {
    const got = decideResizeOutcome(view, strategy, NOW);
    expect(got).toMatchObject(defined(expected));
    for (const [key, value] of Object.entries(expected)) if (value === undefined) expect(got).not.toHaveProperty(key);
  });
});

describe('summarizeResizes builds status.resize', () => {
  it('an empty CloneSet has zero counts and no pods list', () => {
    expect(summarizeResizes([])).toEqual({ resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 0 });
  });

  it('done pods and pods with nothing pending are neither counted nor listed', () => {
    expect(
      summarizeResizes([
        { name: 'a', view: { done: true } },
        { name: 'b', view: { done: false } },
      ]),
    ).toEqual({ resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 0 });
  });

  it('counts each state, and resizing is proposed + inProgress + deferred without infeasible', () => {
    const status = summarizeResizes([
      { name: 'p1', view: { state: 'Proposed', done: false } },
      { name: 'i1', view: { state: 'InProgress', since: ago(10), done: false } },
      { name: 'i2', view: { state: 'InProgress', since: ago(20), done: false } },
      { name: 'd1', view: { state: 'Deferred', since: ago(30), done: false } },
      { name: 'x1', view: { state: 'Infeasible', since: ago(40), done: false } },
      { name: 'ok', view: { done: true } },
    ]);
    expect(status).toMatchObject({ resizing: 4, proposed: 1, inProgress: 2, deferred: 1, infeasible: 1 });
    expect(status.pods).toHaveLength(5);
  });

  it('lists pods oldest since first, pods without since last, ties by name', () => {
    const status = summarizeResizes([
      { name: 'no-since-b', view: { state: 'Proposed', done: false } },
      { name: 'new', view: { state: 'InProgress', since: ago(5), done: false } },
      { name: 'no-since-a', view: { state: 'Deferred', done: false } },
      { name: 'old', view: { state: 'Deferred', since: ago(500), done: false } },
      { name: 'tie-b', view: { state: 'Infeasible', since: ago(50), done: false } },
      { name: 'tie-a', view: { state: 'Infeasible', since: '2025-06-01T11:59:10.000Z', done: false } },
    ]);
    expect(status.pods?.map((p) => p.name)).toEqual(['old', 'tie-a', 'tie-b', 'new', 'no-since-a', 'no-since-b']);
  });

  it('keeps reason, message and since and leaves out fields that have no value', () => {
    const status = summarizeResizes([
      {
        name: 'web-1',
        view: {
          state: 'Infeasible',
          reason: 'Infeasible',
          message: "Node didn't have enough capacity: memory",
          since: ago(60),
          done: false,
        },
      },
      { name: 'web-2', view: { state: 'Proposed', done: false } },
    ]);
    expect(status.pods).toEqual([
      {
        name: 'web-1',
        state: 'Infeasible',
        reason: 'Infeasible',
        message: "Node didn't have enough capacity: memory",
        since: ago(60),
      },
      { name: 'web-2', state: 'Proposed' },
    ]);
  });

  it(`bounds the list to ${MAX_RESIZE_STATUS_PODS} oldest pods while the counts cover every pod`, () => {
    const entries = Array.from({ length: 60 }, (_, i) => ({
      name: `web-${String(i).padStart(2, '0')}`,
      view: { state: 'Deferred' as const, since: ago(1000 - i), done: false },
    }));
    const status = summarizeResizes(entries.reverse());
    expect(status.deferred).toBe(60);
    expect(status.resizing).toBe(60);
    expect(status.pods).toHaveLength(MAX_RESIZE_STATUS_PODS);
    expect(status.pods?.[0]?.name).toBe('web-00');
    expect(status.pods?.at(-1)?.name).toBe('web-49');
  });
});
