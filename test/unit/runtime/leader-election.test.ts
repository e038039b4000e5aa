// LeaderElector against an in-memory Lease API with the API server's optimistic concurrency
// (a write whose resourceVersion is stale gets 409), under Jest's fake timers: the durations
// nest as client-go requires, a leader whose renewals hang or fail stops leading exactly at the
// renew deadline (before anyone else may take over), a lease held by another is waited out, and
// release never erases a lease written by someone else. Every deadline runs on the monotonic
// clock (Jest fakes performance.now; jest.setSystemTime steps only the wall clock): a renewal
// counts from when its round began, a wall-clock step changes nothing, and writes are refused
// the instant the renew deadline has passed even if no timer has run since (a stalled loop).
import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import type { CallOptions } from '../../../src/runtime/kube-client.js';
import { KubeApiError } from '../../../src/runtime/pure/api-error.js';
import { DeadlineExceededError } from '../../../src/runtime/kube-client.js';
import {
  LeaderElector,
  validateLeaderElectionTimings,
  type LeaderElectionOptions,
} from '../../../src/runtime/leader-election.js';
import { silentLogger } from '../../../src/runtime/logger.js';

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}
interface Lease {
  metadata: { resourceVersion: string };
  spec: LeaseSpec;
}

/**
 * One Lease with resourceVersion preconditions; `mode` makes every request hang or fail, or
 * answer after `latencyMs` (within the caller's deadline, like a real server).
 */
class FakeLeaseApi {
  lease: Lease | undefined;
  mode: 'ok' | 'hang' | 'fail' | 'slow' = 'ok';
  latencyMs = 0;
  pending = 0;
  private rv = 0;

  /** Another replica writing the lease (bumps the resourceVersion). */
  writeAsOther(spec: LeaseSpec): void {
    this.lease = { metadata: { resourceVersion: String(++this.rv) }, spec: { ...this.lease?.spec, ...spec } };
  }

  async get<T>(path: string, _query?: unknown, call?: CallOptions): Promise<T> {
    await this.answer('GET', path, call);
    if (!this.lease) throw new KubeApiError('GET', path, 404, { reason: 'NotFound' });
    return structuredClone(this.lease) as T;
  }

  async create<T>(path: string, body: unknown, call?: CallOptions): Promise<T> {
    await this.answer('POST', path, call);
    if (this.lease) throw new KubeApiError('POST', path, 409, { reason: 'AlreadyExists' });
    this.lease = { metadata: { resourceVersion: String(++this.rv) }, spec: { ...(body as { spec: LeaseSpec }).spec } };
    return structuredClone(this.lease) as T;
  }

  async patch<T>(path: string, body: unknown, _type: string, _query?: unknown, call?: CallOptions): Promise<T> {
    await this.answer('PATCH', path, call);
    const patch = body as { metadata?: { resourceVersion?: string }; spec: LeaseSpec };
    if (!this.lease) throw new KubeApiError('PATCH', path, 404, { reason: 'NotFound' });
    const precondition = patch.metadata?.resourceVersion;
    if (precondition !== undefined && precondition !== this.lease.metadata.resourceVersion) {
      throw new KubeApiError('PATCH', path, 409, { reason: 'Conflict' });
    }
    const spec: LeaseSpec = { ...this.lease.spec, ...patch.spec };
    if (patch.spec.holderIdentity === null) delete spec.holderIdentity;
    this.lease = { metadata: { resourceVersion: String(++this.rv) }, spec };
    return structuredClone(this.lease) as T;
  }

  /** Answers at once, fails with 500, answers after latencyMs, or hangs until the caller's deadline or abort. */
  private async answer(method: string, path: string, call?: CallOptions): Promise<void> {
    if (this.mode === 'ok') return;
    if (this.mode === 'fail') throw new KubeApiError(method, path, 500, { reason: 'InternalError' });
    const answerAfterMs = this.mode === 'slow' ? this.latencyMs : undefined;
    this.pending += 1;
    try {
      await new Promise<void>((resolve, reject) => {
        const timeoutMs = call?.timeoutMs ?? 30_000;
        const timers: NodeJS.Timeout[] = [];
        const settle = (error?: KubeApiError): void => {
          for (const timer of timers) clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        };
        timers.push(
          setTimeout(
            () => settle(new KubeApiError(method, path, 0, undefined, { cause: new DeadlineExceededError(timeoutMs) })),
            timeoutMs,
          ),
        );
        if (answerAfterMs !== undefined) timers.push(setTimeout(() => settle(), answerAfterMs));
        call?.signal?.addEventListener('abort', () =>
          settle(new KubeApiError(method, path, 0, undefined, { cause: call.signal?.reason })),
        );
      });
    } finally {
      this.pending -= 1;
    }
  }
}

const TIMINGS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

function elector(
  api: FakeLeaseApi,
  identity = 'me',
  clock: Pick<LeaderElectionOptions, 'monotonicNow'> = {},
): { elector: LeaderElector; started: () => number; stopped: () => number } {
  let started = 0;
  let stopped = 0;
  const e = new LeaderElector({
    client: api,
    namespace: 'ns',
    name: 'lease',
    identity,
    ...TIMINGS,
    ...clock,
    logger: silentLogger(),
    onStartedLeading: () => void (started += 1),
    onStoppedLeading: () => void (stopped += 1),
  });
  return { elector: e, started: () => started, stopped: () => stopped };
}

/** An elector that has just taken the free lease. */
async function leading(api: FakeLeaseApi): Promise<ReturnType<typeof elector>> {
  const started = elector(api);
  started.elector.start();
  await jest.advanceTimersByTimeAsync(0);
  expect(started.elector.isLeader()).toBe(true);
  return started;
}

beforeEach(() => {
  jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
});
afterEach(() => {
  jest.useRealTimers();
});

describe('leader election timings', () => {
  test('a renew deadline not shorter than the lease duration is rejected', () => {
    expect(() => validateLeaderElectionTimings(10_000, 10_000, 2_000)).toThrow(
      'must be shorter than the lease duration',
    );
    const options = {
      client: new FakeLeaseApi(),
      namespace: 'ns',
      name: 'lease',
      identity: 'me',
      logger: silentLogger(),
    };
    const callbacks = { onStartedLeading: () => undefined, onStoppedLeading: () => undefined };
    expect(
      () => new LeaderElector({ ...options, ...callbacks, leaseDurationMs: 5_000, renewDeadlineMs: 10_000 }),
    ).toThrow(RangeError);
  });

  test('a renew deadline that leaves no room for a jittered retry is rejected, and so is a zero duration', () => {
    expect(() => validateLeaderElectionTimings(15_000, 2_000, 2_000)).toThrow('1.2 × the retry period');
    expect(() => validateLeaderElectionTimings(15_000, 10_000, 0)).toThrow('retry period must be > 0');
    expect(() => validateLeaderElectionTimings(15_000, 10_000, 2_000)).not.toThrow();
  });
});

describe('LeaderElector', () => {
  test('a candidate takes a free lease and renews it every retry period', async () => {
    const api = new FakeLeaseApi();
    const { elector: e, started } = await leading(api);
    expect(e.isLeader()).toBe(true);
    expect(started()).toBe(1);
    const firstRenew = api.lease?.spec.renewTime;
    await jest.advanceTimersByTimeAsync(TIMINGS.retryPeriodMs);
    expect(api.lease?.spec.holderIdentity).toBe('me');
    expect(api.lease?.spec.renewTime).not.toBe(firstRenew);
    expect(started()).toBe(1);
    await e.stop();
  });

  test('a leader whose renewals hang stops leading at the renew deadline, aborting the hung request, before the lease expires for others', async () => {
    const api = new FakeLeaseApi();
    const { elector: e, stopped } = await leading(api);
    api.mode = 'hang';
    const lastRenew = Date.now();
    await jest.advanceTimersByTimeAsync(TIMINGS.renewDeadlineMs - 1);
    expect(e.isLeader()).toBe(true);
    expect(api.pending).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(e.isLeader()).toBe(false);
    expect(stopped()).toBe(1);
    expect(api.pending).toBe(0);
    expect(Date.now() - lastRenew).toBeLessThan(TIMINGS.leaseDurationMs);
    // Stopped for good: no more rounds, no second report.
    api.mode = 'ok';
    await jest.advanceTimersByTimeAsync(TIMINGS.leaseDurationMs * 2);
    expect(e.isLeader()).toBe(false);
    expect(stopped()).toBe(1);
    await e.stop();
  });

  test('a leader whose renewals fail keeps leading until the renew deadline, then stops', async () => {
    const api = new FakeLeaseApi();
    const { elector: e, stopped } = await leading(api);
    api.mode = 'fail';
    await jest.advanceTimersByTimeAsync(TIMINGS.renewDeadlineMs - 1);
    expect(e.isLeader()).toBe(true);
    await jest.advanceTimersByTimeAsync(1);
    expect(e.isLeader()).toBe(false);
    expect(stopped()).toBe(1);
    await e.stop();
  });

  test('one failed renewal within the deadline does not end leadership', async () => {
    const api = new FakeLeaseApi();
    const { elector: e, stopped } = await leading(api);
    api.mode = 'fail';
    await jest.advanceTimersByTimeAsync(TIMINGS.retryPeriodMs * 2);
    api.mode = 'ok';
    await jest.advanceTimersByTimeAsync(TIMINGS.renewDeadlineMs * 2);
    expect(e.isLeader()).toBe(true);
    expect(stopped()).toBe(0);
    await e.stop();
  });

  test("a hung renewal is abandoned at the client's request deadline, and the next round renews in time", async () => {
    const api = Object.assign(new FakeLeaseApi(), { requestTimeoutMs: 3_000 });
    const { elector: e, stopped } = await leading(api);
    api.mode = 'hang';
    await jest.advanceTimersByTimeAsync(TIMINGS.retryPeriodMs + 2_999);
    expect(api.pending).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(api.pending).toBe(0);
    api.mode = 'ok';
    await jest.advanceTimersByTimeAsync(TIMINGS.renewDeadlineMs * 2);
    expect(e.isLeader()).toBe(true);
    expect(stopped()).toBe(0);
    await e.stop();
  });

  test('a lease held by another is taken only after the lease duration has passed since it last changed', async () => {
    const api = new FakeLeaseApi();
    api.writeAsOther({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: 'r1', leaseTransitions: 3 });
    const { elector: e } = elector(api);
    e.start();
    await jest.advanceTimersByTimeAsync(10_000);
    api.writeAsOther({ renewTime: 'r2' }); // the other replica renews once more, then dies
    await jest.advanceTimersByTimeAsync(14_000);
    expect(e.isLeader()).toBe(false);
    await jest.advanceTimersByTimeAsync(4_000);
    expect(e.isLeader()).toBe(true);
    expect(api.lease?.spec.holderIdentity).toBe('me');
    expect(api.lease?.spec.leaseTransitions).toBe(4);
    await e.stop();
  });

  test('stop() releases the lease it holds so a successor need not wait it out', async () => {
    const api = new FakeLeaseApi();
    const { elector: e, stopped } = elector(api);
    e.start();
    await jest.advanceTimersByTimeAsync(TIMINGS.retryPeriodMs * 3);
    await e.stop();
    expect(api.lease?.spec.holderIdentity).toBeUndefined();
    expect(api.lease?.spec.leaseDurationSeconds).toBe(1);
    expect(stopped()).toBe(0);
  });

  test('stop() never erases a lease another replica wrote after this one last renewed', async () => {
    const api = new FakeLeaseApi();
    const { elector: e } = await leading(api);
    api.writeAsOther({ holderIdentity: 'newer-leader', renewTime: 'later' });
    await e.stop();
    expect(api.lease?.spec.holderIdentity).toBe('newer-leader');
    expect(api.lease?.spec.renewTime).toBe('later');
  });

  test('stop() leaves no timer behind', async () => {
    const api = new FakeLeaseApi();
    const { elector: e } = await leading(api);
    await e.stop();
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('LeaderElector on the monotonic clock', () => {
  test("a renewal answered late keeps leadership only until its round's start plus the renew deadline", async () => {
    const api = new FakeLeaseApi();
    const { elector: e, stopped } = await leading(api);
    const leadingSince = performance.now();
    api.mode = 'slow';
    api.latencyMs = 3_000;
    // The round that starts one retry period later is answered 6 s after it started (GET, PATCH).
    const roundStartedAt = leadingSince + TIMINGS.retryPeriodMs;
    const renewedBefore = api.lease?.spec.renewTime;
    await jest.advanceTimersByTimeAsync(TIMINGS.retryPeriodMs + 2 * api.latencyMs);
    expect(api.lease?.spec.renewTime).not.toBe(renewedBefore);
    api.mode = 'hang';
    await jest.advanceTimersByTimeAsync(roundStartedAt + TIMINGS.renewDeadlineMs - 1 - performance.now());
    expect(e.isLeader()).toBe(true);
    await jest.advanceTimersByTimeAsync(1);
    expect(e.isLeader()).toBe(false);
    expect(stopped()).toBe(1);
    await e.stop();
  });

  test('a lease taken late in its round is renewed before that round ends it, not a full retry period later', async () => {
    const api = new FakeLeaseApi();
    api.mode = 'slow';
    api.latencyMs = 4_500;
    const candidate = elector(api);
    candidate.elector.start();
    // GET and create answered 9 s after the round began: 1 s of the renew deadline is left.
    await jest.advanceTimersByTimeAsync(2 * api.latencyMs);
    expect(candidate.elector.isLeader()).toBe(true);
    api.mode = 'ok';
    await jest.advanceTimersByTimeAsync(TIMINGS.retryPeriodMs);
    expect(candidate.elector.isLeader()).toBe(true);
    expect(candidate.stopped()).toBe(0);
    await candidate.elector.stop();
  });

  test('a forward step of the wall clock does not end leadership', async () => {
    const api = new FakeLeaseApi();
    const { elector: e, stopped } = await leading(api);
    api.mode = 'slow';
    api.latencyMs = 5;
    await jest.advanceTimersByTimeAsync(500);
    jest.setSystemTime(Date.now() + 10_000);
    await jest.advanceTimersByTimeAsync(TIMINGS.leaseDurationMs * 2);
    expect(e.isLeader()).toBe(true);
    expect(e.writeRefusal()).toBeUndefined();
    expect(stopped()).toBe(0);
    const stopping = e.stop(); // after the round in flight, answered in latencyMs
    await jest.advanceTimersByTimeAsync(api.latencyMs * 2);
    await stopping;
  });

  test('a forward step of the wall clock does not let a candidate take a lease its holder keeps renewing', async () => {
    const api = new FakeLeaseApi();
    api.writeAsOther({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: 'r0' });
    const { elector: e } = elector(api);
    e.start();
    await jest.advanceTimersByTimeAsync(500);
    let renewals = 0;
    // The holder renews half way between the candidate's rounds.
    const holder = setInterval(() => api.writeAsOther({ renewTime: `r${++renewals}` }), TIMINGS.retryPeriodMs);
    jest.setSystemTime(Date.now() + 20_000);
    await jest.advanceTimersByTimeAsync(TIMINGS.leaseDurationMs * 2);
    clearInterval(holder);
    expect(renewals).toBeGreaterThan(10);
    expect(e.isLeader()).toBe(false);
    expect(api.lease?.spec.holderIdentity).toBe('other');
    await e.stop();
  });

  test('once the renew deadline has passed, writes are refused at once, before any timer has run (a stalled event loop)', async () => {
    const api = new FakeLeaseApi();
    let stalledMs = 0;
    const { elector: e, stopped } = elector(api, 'me', { monotonicNow: () => performance.now() + stalledMs });
    e.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(e.writeRefusal()).toBeUndefined();
    stalledMs = TIMINGS.renewDeadlineMs - 1;
    expect(e.writeRefusal()).toBeUndefined();
    stalledMs = TIMINGS.renewDeadlineMs;
    expect(e.isLeader()).toBe(false);
    expect(e.writeRefusal()?.message).toMatch(/lease ns\/lease not renewed within 10000 ms/);
    // When the loop runs again, the overdue renewal round does not revive it: it stops leading.
    await jest.advanceTimersByTimeAsync(TIMINGS.retryPeriodMs);
    expect(stopped()).toBe(1);
    expect(e.writeRefusal()).toBeInstanceOf(Error);
    await e.stop();
  });

  test('a candidate refuses writes: only a leader may write', async () => {
    const api = new FakeLeaseApi();
    api.writeAsOther({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: 'r0' });
    const { elector: e } = elector(api);
    expect(e.writeRefusal()?.message).toContain('not the leader');
    e.start();
    await jest.advanceTimersByTimeAsync(TIMINGS.retryPeriodMs);
    expect(e.writeRefusal()?.message).toContain('not the leader');
    await e.stop();
  });
});
