import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { Controller, SlowRetryError, type ReconcileResult } from '../../../src/runtime/controller.js';
import { RuntimeMetrics } from '../../../src/runtime/metrics.js';
import { metricValue } from './metric-values.js';

describe('a reconcile that fails with a SlowRetryError', () => {
  let controller: Controller | undefined;
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask'] });
  });
  afterEach(async () => {
    const stopping = controller?.stop(0);
    await jest.advanceTimersByTimeAsync(0);
    await stopping;
    jest.useRealTimers();
  });

  test('runs again only after retryAfterMs, also as the cause of another error, and counts as an error', async () => {
    const registry = new Registry();
    const runsAt: number[] = [];
    controller = new Controller({
      name: 'cloneset',
      concurrency: 1,
      logger: pino({ level: 'silent' }),
      metrics: new RuntimeMetrics(registry),
      reconcile: (): Promise<ReconcileResult> => {
        runsAt.push(performance.now());
        return Promise.reject(new Error('create pods: 422 Invalid', { cause: new SlowRetryError('rejected', 300_000) }));
      },
    });
    controller.start();
    controller.queue.add('ns/web');
    await jest.advanceTimersByTimeAsync(299_999);
    expect(runsAt).toEqual([0]);
    await jest.advanceTimersByTimeAsync(1);
    expect(runsAt).toEqual([0, 300_000]);
    expect(await metricValue(registry, 'controller_runtime_reconcile_total', { controller: 'cloneset', result: 'error' })).toBe(2);
  });
});
