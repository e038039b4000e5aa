import { describe, expect, it } from '@jest/globals';
import { canonicalJSON } from '../../../../src/api/json.js';
import {
  findEqualRevision,
  nextRevisionNumber,
  revisionName,
  revisionsToPrune,
  templateHash,
  workloadOfRevision,
} from '../../../../src/workload/pure/revision.js';
import { matchesSelector, selectorString } from '../../../../src/workload/pure/selector.js';
import { computeStatus, type StatusInput } from '../../../../src/workload/pure/status.js';
import type { PodSummary } from '../../../../src/workload/pure/pod-state.js';
import type { CloneSetStatus } from '../../../../src/api/types.js';

describe('revisions', () => {
  it('hash equal templates equally whatever their key order', () => {
    expect(templateHash({ a: 1, b: { c: 2, d: 3 } })).toBe(templateHash({ b: { d: 3, c: 2 }, a: 1 }));
  });
  it('hash differently after a collision', () => {
    expect(templateHash({ a: 1 }, 1)).not.toBe(templateHash({ a: 1 }, 0));
  });
  it('produce label-safe 10-character hashes', () => {
    expect(templateHash({ x: 'y' })).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{10}$/);
  });
  it.each<[string, string | undefined]>([
    [revisionName('web', templateHash({ x: 'y' })), 'web'],
    [revisionName('web-a', templateHash({ x: 'y' })), 'web-a'],
    ['web-1', undefined],
    ['web-abcdefghij', undefined],
    [`-${templateHash({ x: 'y' })}`, undefined],
  ])('read the workload of revision %s back from its name', (name, workload) => {
    expect(workloadOfRevision(name)).toBe(workload);
  });
  const revisions = [
    { name: 'r1', revision: 1, data: canonicalJSON({ image: 'v1' }) },
    { name: 'r2', revision: 2, data: canonicalJSON({ image: 'v2' }) },
    { name: 'r3', revision: 3, data: canonicalJSON({ image: 'v3' }) },
  ];
  it('find the revision holding an earlier template, for a rollback', () => {
    expect(findEqualRevision(revisions, canonicalJSON({ image: 'v1' }))?.name).toBe('r1');
    expect(nextRevisionNumber(revisions)).toBe(4);
  });
  it.each([
    [0, new Set(['r3']), ['r1', 'r2']],
    [1, new Set(['r3']), ['r1']],
    [10, new Set(['r3']), []],
    [0, new Set(['r1', 'r3']), ['r2']],
  ])('prune history beyond limit %i keeping live revisions', (limit, live, pruned) => {
    expect(revisionsToPrune(revisions, live, limit)).toEqual(pruned);
  });
});

describe('selectors', () => {
  const selector = {
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['a', 'b'] },
      { key: 'old', operator: 'DoesNotExist' },
    ],
  };
  it.each([
    [{ app: 'web', tier: 'a' }, true],
    [{ app: 'web', tier: 'c' }, false],
    [{ app: 'web', tier: 'a', old: 'x' }, false],
    [{ app: 'api', tier: 'a' }, false],
  ])('match %j → %s', (labels, expected) => {
    expect(matchesSelector(labels, selector)).toBe(expected);
  });
  it('print in the form kubectl and the HPA accept', () => {
    expect(selectorString(selector)).toBe('app=web,tier in (a,b),!old');
  });
});

describe('status', () => {
  const pod = (name: string, revision: string, ready: boolean): PodSummary => ({
    name,
    revision,
    nodeName: 'n',
    phase: 'Running',
    ready,
    available: ready,
  });
  const input = (pods: PodSummary[], over: Partial<StatusInput> = {}): StatusInput => ({
    generation: 3,
    replicas: 3,
    pods,
    currentRevision: 'r1',
    updateRevision: 'r2',
    collisionCount: 0,
    expectedUpdatedReplicas: 3,
    labelSelector: 'app=web',
    previous: undefined,
    paused: false,
    resize: { resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 0 },
    conditions: {},
    now: Date.parse('2026-01-01T00:00:00Z'),
    ...over,
  });

  it('counts replicas by readiness and revision', () => {
    const s = computeStatus(input([pod('a', 'r1', true), pod('b', 'r2', true), pod('c', 'r2', false)]));
    expect(s).toMatchObject({
      observedGeneration: 3,
      replicas: 3,
      readyReplicas: 2,
      updatedReplicas: 2,
      updatedReadyReplicas: 1,
      currentRevision: 'r1',
    });
  });
  it('makes the update revision current once every pod runs it, ready or not (as Kruise)', () => {
    const s = computeStatus(input([pod('a', 'r2', true), pod('b', 'r2', true), pod('c', 'r2', false)]));
    expect(s.currentRevision).toBe('r2');
  });
  it('reports ProgressDeadlineExceeded when nothing moved for progressDeadlineSeconds', () => {
    const pods = [pod('a', 'r1', true), pod('b', 'r2', false), pod('c', 'r1', true)];
    const first = computeStatus(input(pods, { progressDeadlineSeconds: 60 }));
    const later = computeStatus(
      input(pods, { progressDeadlineSeconds: 60, previous: first, now: Date.parse('2026-01-01T00:02:00Z') }),
    );
    expect(later.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
    });
  });
  it('sets and clears FailedScale', () => {
    const failed = computeStatus(
      input([], { conditions: { FailedScale: { status: 'True', reason: 'ScaleFailed', message: 'quota' } } }),
    );
    expect(failed.conditions?.find((c) => c.type === 'FailedScale')?.message).toBe('quota');
    const cleared = computeStatus(input([], { previous: failed, conditions: { FailedScale: null } }));
    expect(cleared.conditions?.find((c) => c.type === 'FailedScale')).toBeUndefined();
  });
});

// Issue 22: the Progressing condition of OpenKruise's CloneSet, reason for reason and message for
// message (its e2e compares conditions whole). Rows after Kruise v1.9.1's status test table.
describe('Progressing follows Kruise', () => {
  const T0 = Date.parse('2026-01-01T00:00:00Z');
  const pods = (updatedAvailable: number, old: number, updatedUnready = 0): PodSummary[] => [
    ...Array.from({ length: updatedAvailable }, (_, i): PodSummary => ({
      name: `n${i}`,
      revision: 'r2',
      nodeName: 'n',
      phase: 'Running',
      ready: true,
      available: true,
    })),
    ...Array.from({ length: updatedUnready }, (_, i): PodSummary => ({
      name: `u${i}`,
      revision: 'r2',
      nodeName: 'n',
      phase: 'Running',
      ready: false,
      available: false,
    })),
    ...Array.from({ length: old }, (_, i): PodSummary => ({
      name: `o${i}`,
      revision: 'r1',
      nodeName: 'n',
      phase: 'Running',
      ready: true,
      available: true,
    })),
  ];
  const statusOf = (over: Partial<StatusInput>): CloneSetStatus =>
    computeStatus({
      generation: 1,
      replicas: 4,
      pods: pods(0, 4),
      currentRevision: 'r1',
      updateRevision: 'r2',
      collisionCount: 0,
      expectedUpdatedReplicas: 4,
      labelSelector: 'app=web',
      previous: undefined,
      progressDeadlineSeconds: 600,
      paused: false,
      resize: { resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 0 },
      conditions: {},
      now: T0,
      ...over,
    });
  const progressingOf = (s: CloneSetStatus) => {
    const c = s.conditions?.find((x) => x.type === 'Progressing');
    return c && { status: c.status, reason: c.reason, message: c.message };
  };

  it.each([
    ['no progressDeadlineSeconds: no condition', { progressDeadlineSeconds: undefined }, undefined],
    ['progressDeadlineSeconds MaxInt32: no condition', { progressDeadlineSeconds: 2147483647 }, undefined],
    ['a rollout starting', {}, { status: 'True', reason: 'CloneSetUpdated', message: 'CloneSet is progressing' }],
    [
      'every pod updated and available',
      { pods: pods(4, 0) },
      { status: 'True', reason: 'CloneSetAvailable', message: 'CloneSet is available' },
    ],
    [
      'paused mid-rollout',
      { paused: true, pods: pods(1, 3) },
      { status: 'True', reason: 'CloneSetPaused', message: 'CloneSet is paused' },
    ],
    [
      'the pods a partition lets through updated and available',
      { expectedUpdatedReplicas: 1, pods: pods(1, 3) },
      {
        status: 'True',
        reason: 'ProgressPartitionAvailable',
        message: 'CloneSet has been paused due to partition ready',
      },
    ],
    [
      'a partition whose pods are updated but not yet available',
      { expectedUpdatedReplicas: 1, pods: pods(0, 3, 1) },
      { status: 'True', reason: 'CloneSetUpdated', message: 'CloneSet is progressing' },
    ],
    [
      'available wins over paused',
      { paused: true, pods: pods(4, 0) },
      { status: 'True', reason: 'CloneSetAvailable', message: 'CloneSet is available' },
    ],
  ] as [string, Partial<StatusInput>, object | undefined][])('%s', (_, over, expected) => {
    expect(progressingOf(statusOf(over))).toEqual(expected);
  });

  it('times out when nothing moved for progressDeadlineSeconds, with the revision in the message', () => {
    const first = statusOf({ pods: pods(1, 3) });
    const stalled = statusOf({ pods: pods(1, 3), previous: first, now: T0 + 601_000 });
    expect(progressingOf(stalled)).toEqual({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'CloneSet revision r2 has timed out progressing',
    });
    // Another kind's message names that kind (the InPlaceStatefulSet's view keeps its kind).
    const ofSet = statusOf({ pods: pods(1, 3), previous: first, now: T0 + 601_000, kind: 'InPlaceStatefulSet' });
    expect(progressingOf(ofSet)?.message).toBe('InPlaceStatefulSet revision r2 has timed out progressing');
    // Exceeded stays exceeded for this revision, even once a count moves...
    expect(progressingOf(statusOf({ pods: pods(2, 2), previous: stalled, now: T0 + 700_000 }))?.reason).toBe(
      'ProgressDeadlineExceeded',
    );
    // ...until it completes, or (where Tailor differs on purpose) a new revision starts a new deadline.
    expect(progressingOf(statusOf({ pods: pods(4, 0), previous: stalled, now: T0 + 700_000 }))?.reason).toBe(
      'CloneSetAvailable',
    );
    expect(
      progressingOf(statusOf({ updateRevision: 'r3', pods: pods(0, 4), previous: stalled, now: T0 + 700_000 }))?.reason,
    ).toBe('CloneSetUpdated');
  });

  it('counts the deadline from the last progress, not from when the rollout began', () => {
    const first = statusOf({ pods: pods(1, 3) });
    const moved = statusOf({ pods: pods(2, 2), previous: first, now: T0 + 500_000 });
    expect(progressingOf(statusOf({ pods: pods(2, 2), previous: moved, now: T0 + 900_000 }))?.reason).toBe(
      'CloneSetUpdated',
    );
    expect(progressingOf(statusOf({ pods: pods(2, 2), previous: moved, now: T0 + 1_101_000 }))?.reason).toBe(
      'ProgressDeadlineExceeded',
    );
  });

  it('an OnDelete rollout, waiting for people to delete pods, never times out', () => {
    const first = statusOf({ onDelete: true, pods: pods(1, 3) });
    expect(
      progressingOf(statusOf({ onDelete: true, pods: pods(1, 3), previous: first, now: T0 + 86_400_000 }))?.reason,
    ).toBe('CloneSetUpdated');
  });

  it('a partition held on purpose never times out', () => {
    const held = statusOf({ expectedUpdatedReplicas: 1, pods: pods(1, 3) });
    expect(
      progressingOf(statusOf({ expectedUpdatedReplicas: 1, pods: pods(1, 3), previous: held, now: T0 + 86_400_000 }))
        ?.reason,
    ).toBe('ProgressPartitionAvailable');
  });
});
