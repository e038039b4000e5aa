// How every outcome of an agent round ends (src/agent/pure/conclude.ts): the one status it records,
// the metric result it counts (and whether only when the status changed), the event, and what the
// work queue does next. A table over every outcome kind, and properties that hold for all.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { AgentReasons, AgentVerdicts } from '../../../../src/api/reasons.js';
import { conclude, type ResizeOutcome } from '../../../../src/agent/pure/conclude.js';
import { RETRY_NOT_RUNNING_MS, RETRY_REFUSED_MS } from '../../../../src/agent/pure/decide.js';

const applied = { app: { cpu: '500m', memory: '128Mi' } } as never;

describe('an agent round ends in one status, one metric and one next step', () => {
  it.each<[string, ResizeOutcome, Record<string, unknown>]>([
    [
      'nothing to do writes no status and counts nothing',
      { kind: 'nothing', why: 'no request' },
      { status: undefined, metric: undefined, result: undefined },
    ],
    [
      'nothing to do yet looks again after its delay',
      { kind: 'nothing', why: 'waiting', retryAfterMs: 250 },
      { status: undefined, result: { requeueAfterMs: 250 } },
    ],
    [
      'a Deferred verdict is recorded and counted only when it changes the status',
      { kind: 'report', status: { state: 'Deferred', reason: 'NodeFull', message: 'no room' }, retryAfterMs: 30_000 },
      {
        status: { state: 'Deferred', reason: 'NodeFull', message: 'no room' },
        metric: { result: 'deferred', onlyIfWritten: true },
        event: undefined,
        result: { requeueAfterMs: 30_000 },
      },
    ],
    [
      'a verdict that the kubelet resizes is counted as kubelet',
      { kind: 'report', status: { state: '', reason: AgentVerdicts.KubeletResizes } },
      { metric: { result: 'kubelet', onlyIfWritten: true }, result: undefined },
    ],
    [
      'what was applied found in place is recorded again and counted as nothing new',
      { kind: 'verified', applied },
      { status: { state: '', applied }, metric: undefined, result: undefined },
    ],
    [
      'containers not running yet are InProgress and looked at again soon',
      { kind: 'notRunning', missing: ['app', 'side'] },
      {
        status: {
          state: 'InProgress',
          reason: AgentReasons.ContainerNotRunning,
          message: 'container app, side is not running',
        },
        metric: undefined,
        result: { requeueAfterMs: RETRY_NOT_RUNNING_MS },
      },
    ],
    [
      'an update the runtime accepted but the cgroup does not show is an error, retried with backoff',
      { kind: 'notActuated', container: 'app', resource: 'memory' },
      {
        status: expect.objectContaining({ state: 'InProgress', reason: AgentReasons.NotActuated }),
        metric: { result: 'error', onlyIfWritten: false },
        result: { requeue: true },
      },
    ],
    [
      'a memory limit below usage is refused, counted, and retried later',
      { kind: 'refused', message: 'pod cgroup p: limit 1 is not above usage 2' },
      {
        status: {
          state: 'InProgress',
          reason: AgentReasons.MemoryLimitBelowUsage,
          message: 'pod cgroup p: limit 1 is not above usage 2',
        },
        metric: { result: 'refused', onlyIfWritten: false },
        result: { requeueAfterMs: RETRY_REFUSED_MS },
      },
    ],
    [
      'an applied resize records what was applied and counts applied',
      { kind: 'applied', applied, changed: true, steps: 3 },
      { status: { state: '', applied }, metric: { result: 'applied', onlyIfWritten: false }, result: undefined },
    ],
    [
      'an applied resize that changed nothing counts unchanged',
      { kind: 'applied', applied, changed: false, steps: 0 },
      { metric: { result: 'unchanged', onlyIfWritten: false } },
    ],
    [
      'a failure is recorded as InProgress/Error and fails the round',
      { kind: 'failed', message: 'cri: unavailable', cause: new Error('unavailable') },
      {
        status: { state: 'InProgress', reason: AgentReasons.Error, message: 'cri: unavailable' },
        metric: { result: 'error', onlyIfWritten: false },
        error: 'cri: unavailable',
      },
    ],
  ])('%s', (_name, outcome, expected) => {
    const end: Record<string, unknown> = { ...conclude(outcome) };
    for (const [field, value] of Object.entries(expected)) expect(end[field]).toEqual(value);
  });

  it('a refusal reported is said in a Warning event on the pod', () => {
    const end = conclude({
      kind: 'report',
      status: { state: 'Infeasible', reason: AgentVerdicts.NotInRevision, message: 'not in the revision' },
    });
    expect(end.event?.reason).toBe(`Resize${AgentVerdicts.NotInRevision}`);
    expect(end.event?.message).toContain('not in the revision');
  });

  it('every outcome that writes a status names a state, and only a failure fails the round', () => {
    const outcome = fc.oneof(
      fc.record({ kind: fc.constant('nothing' as const), why: fc.string() }),
      fc.record({ kind: fc.constant('notRunning' as const), missing: fc.array(fc.string(), { minLength: 1 }) }),
      fc.record({ kind: fc.constant('notActuated' as const), container: fc.string(), resource: fc.string() }),
      fc.record({ kind: fc.constant('refused' as const), message: fc.string() }),
      fc.record({
        kind: fc.constant('applied' as const),
        applied: fc.constant(applied),
        changed: fc.boolean(),
        steps: fc.nat(),
      }),
      fc.record({ kind: fc.constant('failed' as const), message: fc.string(), cause: fc.constant(undefined) }),
    );
    fc.assert(
      fc.property(outcome, (o) => {
        const end = conclude(o);
        if (end.status) expect(['', 'InProgress', 'Deferred', 'Infeasible']).toContain(end.status.state);
        expect(end.error !== undefined).toBe(o.kind === 'failed');
      }),
    );
  });
});
