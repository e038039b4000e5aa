import { describe, expect, it } from '@jest/globals';
import type { CloneSetStatus } from '../../../../src/api/types.js';
import fc from 'fast-check';
import {
  withFailures,
  STATUS_COUNTS_INTERVAL_MS,
  STATUS_GATHER_MS,
  statusChangeIsUrgent,
  statusWriteAt,
} from '../../../../src/workload/pure/status.js';

const base: CloneSetStatus = {
  observedGeneration: 3,
  replicas: 10,
  readyReplicas: 9,
  updatedReplicas: 4,
  currentRevision: 'web-a',
  updateRevision: 'web-b',
  collisionCount: 0,
  labelSelector: 'app=web',
  resize: { resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 0 },
  conditions: [
    {
      type: 'Progressing',
      status: 'True',
      reason: 'CloneSetUpdated',
      message: 'CloneSet is progressing',
      lastUpdateTime: '2026-01-01T00:00:00Z',
    },
    {
      type: 'Reconciling',
      status: 'True',
      reason: 'RolloutInProgress',
      message: 'rolling out revision web-b: 4 of 10 pods updated, 3 available',
    },
  ],
};
const progressing = (over: Record<string, string>) => [{ ...base.conditions![0]!, ...over }, base.conditions![1]!];
const reconciling = (over: Record<string, string>) => [base.conditions![0]!, { ...base.conditions![1]!, ...over }];

const rows: [string, Partial<CloneSetStatus>, boolean][] = [
  ['ready and updated counts moving can wait', { readyReplicas: 10, updatedReplicas: 5 }, false],
  [
    "Progressing's last-progress clock can wait",
    { conditions: progressing({ lastUpdateTime: '2026-01-01T00:00:05Z' }) },
    false,
  ],
  [
    'status.resize counts can wait',
    { resize: { resizing: 3, proposed: 0, inProgress: 3, deferred: 0, infeasible: 0 } },
    false,
  ],
  ['a newly observed generation goes out at once', { observedGeneration: 4 }, true],
  ['a new update revision goes out at once', { updateRevision: 'web-c' }, true],
  ['the rollout completing (currentRevision) goes out at once', { currentRevision: 'web-b' }, true],
  ['a collision goes out at once', { collisionCount: 1 }, true],
  [
    'Progressing turning to CloneSetAvailable goes out at once',
    { conditions: progressing({ reason: 'CloneSetAvailable', message: 'CloneSet is available' }) },
    true,
  ],
  [
    'a ProgressDeadlineExceeded goes out at once',
    { conditions: progressing({ status: 'False', reason: 'ProgressDeadlineExceeded' }) },
    true,
  ],
  [
    "Reconciling's counts moving (its message alone) can wait",
    { conditions: reconciling({ message: 'rolling out revision web-b: 5 of 10 pods updated, 4 available' }) },
    false,
  ],
  [
    'Reconciling turning False (rollout complete) goes out at once',
    {
      conditions: reconciling({
        status: 'False',
        reason: 'Complete',
        message: 'all 10 pods run revision web-b and are available',
      }),
    },
    true,
  ],
  [
    'Stalled turning True goes out at once',
    {
      conditions: [
        ...base.conditions!,
        { type: 'Stalled', status: 'True', reason: 'ProgressDeadlineExceeded', message: 'timed out' },
      ],
    },
    true,
  ],
  [
    'a new failure condition goes out at once',
    {
      conditions: [
        ...base.conditions!,
        { type: 'FailedScale', status: 'True', reason: 'ApiRefused', message: 'create pods: 403' },
      ],
    },
    true,
  ],
];

describe('which status changes are written at once', () => {
  it.each(rows)('%s', (_name, change, urgent) => {
    expect(statusChangeIsUrgent(base, { ...base, ...change })).toBe(urgent);
  });

  it('treats a CloneSet without status as urgent', () => {
    expect(statusChangeIsUrgent(undefined, base)).toBe(true);
  });

  it('treats a changed message of a blocking condition as urgent', () => {
    const blocked = (message: string): CloneSetStatus => ({
      ...base,
      conditions: [...base.conditions!, { type: 'RolloutBlocked', status: 'True', reason: 'MaxUnavailable', message }],
    });
    expect(statusChangeIsUrgent(blocked('1 pod(s) out of service: a'), blocked('1 pod(s) out of service: b'))).toBe(
      true,
    );
  });
});

describe('when a status that differs is written', () => {
  const now = 100_000;
  it.each<[string, { lastWriteAt?: number; differsSince: number }, boolean, number]>([
    [
      'an urgent change: at once, however recent the last write',
      { lastWriteAt: now - 10, differsSince: now },
      true,
      now,
    ],
    [
      'a count change just seen, long after the last write: gathered for a moment',
      { lastWriteAt: now - 60_000, differsSince: now },
      false,
      now + 500,
    ],
    ['a count change just seen, no write since start: gathered for a moment', { differsSince: now }, false, now + 500],
    ['a count change gathered long enough: now', { lastWriteAt: now - 60_000, differsSince: now - 500 }, false, now],
    [
      'a count change soon after a write: a second after that write',
      { lastWriteAt: now - 200, differsSince: now },
      false,
      now + 800,
    ],
  ])('%s', (_name, clock, urgent, expected) => {
    expect(statusWriteAt(clock, urgent, now)).toBe(expected);
  });

  it('never holds a change back more than a second after a round first saw it', () => {
    fc.assert(
      fc.property(
        fc.nat(100_000),
        fc.nat(100_000),
        fc.nat(5_000),
        fc.boolean(),
        (lastWriteAt, gap, seenAgo, urgent) => {
          // A difference is first seen after the last write (a write clears it).
          const differsSince = lastWriteAt + gap;
          const at = statusWriteAt({ lastWriteAt, differsSince }, urgent, differsSince + seenAgo);
          expect(at).toBeLessThanOrEqual(Math.max(differsSince + seenAgo, differsSince + STATUS_COUNTS_INTERVAL_MS));
          expect(at).toBeGreaterThanOrEqual(urgent ? differsSince + seenAgo : differsSince + STATUS_GATHER_MS);
        },
      ),
    );
  });
});

describe('a failed write folded into the round status', () => {
  const NOW_MS = Date.parse('2026-11-28T10:05:00Z');
  const refused = { status: 'True' as const, reason: 'ApiRefused', message: 'expand claim data-web-0: 403 Forbidden' };
  const stored = (since: string, status: 'True' | 'False' = 'True'): CloneSetStatus => ({
    conditions: [{ type: 'FailedUpdate', ...refused, status, lastTransitionTime: since, lastUpdateTime: since }],
  });
  const since = (s: CloneSetStatus): string | undefined =>
    s.conditions?.find((c) => c.type === 'FailedUpdate')?.lastTransitionTime;

  it.each<[string, CloneSetStatus | undefined, string]>([
    ['a refusal that goes on keeps when it began', stored('2026-11-28T10:00:00Z'), '2026-11-28T10:00:00Z'],
    ['a new refusal begins now', undefined, '2026-11-28T10:05:00Z'],
    ['one after a cleared refusal begins now', stored('2026-11-28T10:00:00Z', 'False'), '2026-11-28T10:05:00Z'],
  ])('%s', (...[, before, expected]) => {
    // The plan comes without the failure condition: the planner clears it every round.
    expect(since(withFailures({ conditions: [] }, before, { FailedUpdate: refused }, NOW_MS))).toBe(expected);
  });

  it('leaves the plan alone for a condition the round does not fail', () => {
    const plan: CloneSetStatus = { conditions: [] };
    expect(withFailures(plan, stored('2026-11-28T10:00:00Z'), { FailedRevision: null }, NOW_MS).conditions).toEqual([]);
  });
});
