import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import {
  Controller,
  SlowRetryError,
  TerminalError,
  WakeByError,
  isTerminalError,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../../../src/runtime/controller.js';
import { RuntimeMetrics } from '../../../src/runtime/metrics.js';
import { metricValue } from './metric-values.js';

interface LogLine {
  level: number;
  msg: string;
  key?: string;
  err?: { message?: string };
  keys?: string[];
}

interface Harness {
  controller: Controller;
  registry: Registry;
  logs: LogLine[];
  reconcileTotal(result: string): Promise<number | undefined>;
}

const PINO_ERROR = 50;
const PINO_WARN = 40;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function startController(reconcile: Reconciler, concurrency = 1): Harness {
  const registry = new Registry();
  const logs: LogLine[] = [];
  const logger = pino(
    { level: 'debug' },
    {
      write(line: string): void {
        logs.push(JSON.parse(line) as LogLine);
      },
    },
  );
  const controller = new Controller({
    name: 'cloneset',
    concurrency,
    reconcile,
    logger,
    metrics: new RuntimeMetrics(registry),
  });
  controller.start();
  return {
    controller,
    registry,
    logs,
    reconcileTotal: async (result) =>
      metricValue(registry, 'controller_runtime_reconcile_total', { controller: 'cloneset', result }),
  };
}

describe('Controller', () => {
  let running: Controller | undefined;

  beforeEach(() => {
    // p-queue frees a worker slot through queueMicrotask; faking it would stall the loop between ticks.
    jest.useFakeTimers({ doNotFake: ['queueMicrotask'] });
  });
  afterEach(async () => {
    const stopping = running?.stop(0);
    await jest.advanceTimersByTimeAsync(0);
    await stopping;
    running = undefined;
    jest.useRealTimers();
  });

  test('a result with requeueAfterMs runs the key again after that delay', async () => {
    const runsAt: number[] = [];
    const harness = startController(async (): Promise<ReconcileResult> => {
      runsAt.push(performance.now());
      return runsAt.length === 1 ? { requeueAfterMs: 1000 } : undefined;
    });
    running = harness.controller;

    harness.controller.queue.add('ns/web');
    await jest.advanceTimersByTimeAsync(999);
    expect(runsAt).toEqual([0]);

    await jest.advanceTimersByTimeAsync(1);
    expect(runsAt).toEqual([0, 1000]);
    expect(await harness.reconcileTotal('requeue_after')).toBe(1);
    expect(await harness.reconcileTotal('success')).toBe(1);
  });

  test('a failing key is retried with growing delays, and its backoff is forgotten once it succeeds', async () => {
    const runsAt: number[] = [];
    const harness = startController(async (): Promise<ReconcileResult> => {
      runsAt.push(performance.now());
      if (runsAt.length <= 3) {
        throw new Error('conflict');
      }
    });
    running = harness.controller;

    harness.controller.queue.add('ns/web');
    await jest.advanceTimersByTimeAsync(100);

    expect(runsAt).toEqual([0, 5, 15, 35]);
    expect(harness.controller.queue.numRequeues('ns/web')).toBe(0);
    expect(await harness.reconcileTotal('error')).toBe(3);
    expect(await harness.reconcileTotal('success')).toBe(1);
    expect(
      await metricValue(harness.registry, 'controller_runtime_reconcile_errors_total', { controller: 'cloneset' }),
    ).toBe(3);
    expect(harness.logs.filter((line) => line.level === PINO_ERROR && line.key === 'ns/web')).toHaveLength(3);
  });

  test('every reconcile gets a reconcile ID of its own, and the error line of a failed one names it', async () => {
    const ids: string[] = [];
    const harness = startController(async (_key, context): Promise<ReconcileResult> => {
      ids.push(context.reconcileId);
      if (ids.length === 1) throw new Error('conflict');
    });
    running = harness.controller;

    harness.controller.queue.add('ns/web');
    await jest.advanceTimersByTimeAsync(100);

    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    const errors = harness.logs.filter((line) => line.level === PINO_ERROR) as (LogLine & { reconcileId?: string })[];
    expect(errors.map((line) => line.reconcileId)).toEqual([ids[0]]);
  });

  test('requeue: true runs the key again after its rate-limited backoff', async () => {
    const runsAt: number[] = [];
    const harness = startController(async (): Promise<ReconcileResult> => {
      runsAt.push(performance.now());
      return runsAt.length <= 2 ? { requeue: true } : undefined;
    });
    running = harness.controller;

    harness.controller.queue.add('ns/web');
    await jest.advanceTimersByTimeAsync(100);

    expect(runsAt).toEqual([0, 5, 15]);
    expect(await harness.reconcileTotal('requeue')).toBe(2);
    expect(await harness.reconcileTotal('success')).toBe(1);
  });

  test('a TerminalError is counted as an error and not retried, also when it is the cause of another error', async () => {
    const calls = new Map<string, number>();
    const harness = startController(async (key): Promise<ReconcileResult> => {
      calls.set(key, (calls.get(key) ?? 0) + 1);
      const terminal = new TerminalError('selector does not match template labels');
      throw key === 'ns/direct' ? terminal : new Error('reconcile failed', { cause: terminal });
    });
    running = harness.controller;

    harness.controller.queue.add('ns/direct');
    harness.controller.queue.add('ns/wrapped');
    await jest.advanceTimersByTimeAsync(2_000_000);

    expect(Object.fromEntries(calls)).toEqual({ 'ns/direct': 1, 'ns/wrapped': 1 });
    expect(await harness.reconcileTotal('error')).toBe(2);
    expect(
      await metricValue(harness.registry, 'controller_runtime_terminal_reconcile_errors_total', {
        controller: 'cloneset',
      }),
    ).toBe(2);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('a SlowRetryError runs the key again only after retryAfterMs, also as the cause of another error, and counts as an error', async () => {
    const runsAt: number[] = [];
    const harness = startController((): Promise<ReconcileResult> => {
      runsAt.push(performance.now());
      return Promise.reject(new Error('create pods: 422 Invalid', { cause: new SlowRetryError('rejected', 300_000) }));
    });
    running = harness.controller;

    harness.controller.queue.add('ns/web');
    await jest.advanceTimersByTimeAsync(299_999);
    expect(runsAt).toEqual([0]);
    await jest.advanceTimersByTimeAsync(1);
    expect(runsAt).toEqual([0, 300_000]);
    expect(await harness.reconcileTotal('error')).toBe(2);
  });

  test('a WakeByError backs off as any failure and also runs the key at its wake time when the backoff would be later', async () => {
    const runsAt: number[] = [];
    const harness = startController((): Promise<ReconcileResult> => {
      const now = performance.now();
      runsAt.push(now);
      // As a held refusal does: the wake is one moment, 60 s after the first failure.
      return Promise.reject(
        new Error('patch: 403', { cause: new WakeByError('refused', Math.max(100, 60_000 - now)) }),
      );
    });
    running = harness.controller;

    harness.controller.queue.add('ns/web');
    await jest.advanceTimersByTimeAsync(60_000);
    // 5 ms doubling: runs up to 40,955 ms, then the next backoff (81,915 ms) is later than the wake.
    expect(runsAt.filter((t) => t > 40_000)).toEqual([40_955, 60_000]);
  });

  test('a thrown non-Error value, or a synchronous throw, does not stop the worker loop', async () => {
    const reconciled: string[] = [];
    const harness = startController((key): Promise<ReconcileResult> => {
      reconciled.push(key);
      switch (key) {
        // Non-Error rejections on purpose: the controller must survive what a careless reconciler throws.
        case 'ns/string':
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
          return Promise.reject('boom');
        case 'ns/undefined':
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
          return Promise.reject(undefined);
        case 'ns/sync':
          throw new Error('thrown before any promise existed');
        default:
          return Promise.resolve();
      }
    });
    running = harness.controller;

    for (const key of ['ns/string', 'ns/undefined', 'ns/sync', 'ns/fine']) {
      harness.controller.queue.add(key);
    }
    await jest.advanceTimersByTimeAsync(0);

    expect(reconciled.slice(0, 4)).toEqual(['ns/string', 'ns/undefined', 'ns/sync', 'ns/fine']);
    expect(await harness.reconcileTotal('success')).toBe(1);
    const errorMessages = harness.logs.filter((line) => line.level === PINO_ERROR).map((line) => line.err?.message);
    expect(errorMessages).toEqual(
      expect.arrayContaining([expect.stringContaining('"boom"'), expect.stringContaining('undefined')]),
    );

    await jest.advanceTimersByTimeAsync(5);
    expect(reconciled.filter((key) => key === 'ns/string')).toHaveLength(2);
  });

  test('no more than `concurrency` reconciles run at once', async () => {
    let runningNow = 0;
    let mostAtOnce = 0;
    const finished: string[] = [];
    const harness = startController(async (key): Promise<ReconcileResult> => {
      runningNow += 1;
      mostAtOnce = Math.max(mostAtOnce, runningNow);
      await sleep(100);
      runningNow -= 1;
      finished.push(key);
    }, 2);
    running = harness.controller;

    for (let index = 0; index < 6; index += 1) {
      harness.controller.queue.add(`ns/web-${index}`);
    }
    await jest.advanceTimersByTimeAsync(150);
    expect(harness.controller.inFlight.size).toBe(2);

    await jest.advanceTimersByTimeAsync(200);
    expect(mostAtOnce).toBe(2);
    expect(finished).toHaveLength(6);
    expect(harness.controller.queue.len()).toBe(0);
  });

  test('the same key is never reconciled twice at once, and changes made meanwhile are reconciled after', async () => {
    const activeKeys = new Set<string>();
    let overlapped = false;
    let runs = 0;
    const harness = startController(async (key): Promise<ReconcileResult> => {
      overlapped ||= activeKeys.has(key);
      activeKeys.add(key);
      runs += 1;
      await sleep(100);
      activeKeys.delete(key);
    }, 4);
    running = harness.controller;

    harness.controller.queue.add('ns/web');
    await jest.advanceTimersByTimeAsync(10);
    harness.controller.queue.add('ns/web');
    harness.controller.queue.add('ns/web');
    await jest.advanceTimersByTimeAsync(50);
    expect(harness.controller.inFlight.size).toBe(1);

    await jest.advanceTimersByTimeAsync(500);
    expect(overlapped).toBe(false);
    expect(runs).toBe(2);
  });

  test('stop waits for in-flight reconciles that finish within the grace period, and takes no new keys', async () => {
    const finished: string[] = [];
    const started: string[] = [];
    const harness = startController(async (key): Promise<ReconcileResult> => {
      started.push(key);
      await sleep(500);
      finished.push(key);
    }, 1);

    harness.controller.queue.add('ns/in-flight');
    harness.controller.queue.add('ns/queued');
    await jest.advanceTimersByTimeAsync(10);
    let stopped = false;
    const stopping = harness.controller.stop(1000).then(() => {
      stopped = true;
    });
    harness.controller.queue.add('ns/after-stop');

    await jest.advanceTimersByTimeAsync(489);
    expect(stopped).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await stopping;

    expect(stopped).toBe(true);
    expect(performance.now()).toBe(500);
    expect(finished).toEqual(['ns/in-flight']);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(started).toEqual(['ns/in-flight']);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('stop gives up after the grace period and aborts the signal of reconciles still running', async () => {
    let seenSignal: AbortSignal | undefined;
    const harness = startController(async (_key, context: ReconcileContext): Promise<ReconcileResult> => {
      seenSignal = context.signal;
      await new Promise<void>((resolve) => {
        context.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    });

    harness.controller.queue.add('ns/stuck');
    await jest.advanceTimersByTimeAsync(10);
    const stopping = harness.controller.stop(1000);
    await jest.advanceTimersByTimeAsync(1000);
    await stopping;

    expect(performance.now()).toBe(1010);
    expect(seenSignal?.aborted).toBe(true);
    const warning = harness.logs.find((line) => line.level === PINO_WARN);
    expect(warning?.keys).toEqual(['ns/stuck']);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('cancel aborts the signal of running reconciles at once with its reason, and takes no more keys', async () => {
    let seenReason: unknown;
    const started: string[] = [];
    const harness = startController(async (key, context: ReconcileContext): Promise<ReconcileResult> => {
      started.push(key);
      await new Promise<void>((resolve) => {
        context.signal.addEventListener(
          'abort',
          () => {
            seenReason = context.signal.reason;
            resolve();
          },
          { once: true },
        );
      });
    });

    harness.controller.queue.add('ns/acting');
    await jest.advanceTimersByTimeAsync(10);
    const reason = new Error('lost the lease');
    const cancelling = harness.controller.cancel(reason);
    harness.controller.queue.add('ns/later');
    await jest.advanceTimersByTimeAsync(0);
    await cancelling;

    expect(performance.now()).toBe(10);
    expect(seenReason).toBe(reason);
    expect(started).toEqual(['ns/acting']);
    expect(harness.controller.queue.shuttingDown).toBe(true);
  });

  test('stop drops pending requeues and leaves no timers behind', async () => {
    const harness = startController(async (): Promise<ReconcileResult> => ({ requeueAfterMs: 60_000 }));

    harness.controller.queue.add('ns/web');
    await jest.advanceTimersByTimeAsync(0);
    expect(jest.getTimerCount()).toBe(1);

    await harness.controller.stop(1000);

    expect(jest.getTimerCount()).toBe(0);
    expect(harness.controller.queue.shuttingDown).toBe(true);
  });

  test('a controller starts only once', () => {
    const harness = startController(async (): Promise<ReconcileResult> => undefined);
    running = harness.controller;

    expect(() => harness.controller.start()).toThrow(/starts once/);
  });

  test('a concurrency below 1 is rejected', () => {
    expect(
      () =>
        new Controller({
          name: 'cloneset',
          concurrency: 0,
          reconcile: async (): Promise<ReconcileResult> => undefined,
          logger: pino({ level: 'silent' }),
        }),
    ).toThrow(RangeError);
  });

  test('isTerminalError looks through the cause chain and nothing else', () => {
    expect(isTerminalError(new TerminalError('bad spec'))).toBe(true);
    expect(isTerminalError(new Error('outer', { cause: new Error('mid', { cause: new TerminalError('x') }) }))).toBe(
      true,
    );
    expect(isTerminalError(new Error('plain'))).toBe(false);
    expect(isTerminalError('TerminalError')).toBe(false);
  });
});
