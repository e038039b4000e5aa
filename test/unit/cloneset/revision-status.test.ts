import { describe, expect, it } from '@jest/globals';
import { canonicalJSON } from '../../../src/api/json.js';
import { findEqualRevision, nextRevisionNumber, revisionsToPrune, templateHash } from '../../../src/cloneset/revision.js';
import { matchesSelector, selectorString } from '../../../src/cloneset/selector.js';
import { computeStatus, type StatusInput } from '../../../src/cloneset/status.js';
import type { PodSummary } from '../../../src/cloneset/pod-state.js';

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
  it('makes the update revision current once every pod runs it and is ready', () => {
    const s = computeStatus(input([pod('a', 'r2', true), pod('b', 'r2', true), pod('c', 'r2', true)]));
    expect(s.currentRevision).toBe('r2');
    expect(s.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('RolloutComplete');
  });
  it('reports ProgressDeadlineExceeded when nothing moved for progressDeadlineSeconds', () => {
    const pods = [pod('a', 'r1', true), pod('b', 'r2', false), pod('c', 'r1', true)];
    const first = computeStatus(input(pods, { progressDeadlineSeconds: 60 }));
    const later = computeStatus(input(pods, { progressDeadlineSeconds: 60, previous: first, now: Date.parse('2026-01-01T00:02:00Z') }));
    expect(later.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
  });
  it('sets and clears FailedScale', () => {
    const failed = computeStatus(input([], { conditions: { FailedScale: { status: 'True', reason: 'ScaleFailed', message: 'quota' } } }));
    expect(failed.conditions?.find((c) => c.type === 'FailedScale')?.message).toBe('quota');
    const cleared = computeStatus(input([], { previous: failed, conditions: { FailedScale: null } }));
    expect(cleared.conditions?.find((c) => c.type === 'FailedScale')).toBeUndefined();
  });
});
