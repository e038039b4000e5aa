import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import { Registry } from 'prom-client';
import { RuntimeMetrics } from '../../../src/runtime/metrics.js';
import { WorkQueue } from '../../../src/runtime/workqueue.js';
import { metricValue } from './metric-values.js';

/** Resolves with the key get() hands out right now, or 'blocked' if it would wait. */
async function getNow(queue: WorkQueue): Promise<string | undefined> {
  return Promise.race([queue.get(), new Promise<'blocked'>((resolve) => setImmediate(() => resolve('blocked')))]);
}

/** Every key get() hands out until it would block, each marked done at once. */
async function drainReady(queue: WorkQueue): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) {
    const key = await queue.get();
    if (key === undefined) {
      break;
    }
    keys.push(key);
    queue.done(key);
  }
  return keys;
}

describe('WorkQueue', () => {
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  test('hands keys out in the order they were added', async () => {
    const queue = new WorkQueue();
    queue.add('b');
    queue.add('a');
    queue.add('c');

    expect(await drainReady(queue)).toEqual(['b', 'a', 'c']);
  });

  test('a key added twice before it is taken is queued once', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a');

    expect(queue.len()).toBe(2);
    expect(await drainReady(queue)).toEqual(['a', 'b']);
  });

  test('a key being processed is not handed out again until it is done', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    expect(await queue.get()).toBe('a');

    queue.add('a');

    expect(queue.len()).toBe(0);
    expect(await getNow(queue)).toBe('blocked');
  });

  test('a key added while it is processed is handed out again after done, once', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    queue.add('a');

    const waiting = queue.get();
    queue.done('a');

    expect(await waiting).toBe('a');
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  test('a key not added again while processed is gone after done', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    expect(await queue.get()).toBe('a');

    queue.done('a');

    expect(queue.len()).toBe(0);
    expect(await getNow(queue)).toBe('blocked');
  });

  test('a waiting get() receives the next key added', async () => {
    const queue = new WorkQueue();
    const first = queue.get();
    const second = queue.get();

    queue.add('a');
    queue.add('b');

    expect([await first, await second]).toEqual(['a', 'b']);
    expect(queue.len()).toBe(0);
  });

  test('addAfter makes the key available only once the delay has passed', async () => {
    const queue = new WorkQueue();
    queue.addAfter('a', 100);

    await jest.advanceTimersByTimeAsync(99);
    expect(queue.len()).toBe(0);

    await jest.advanceTimersByTimeAsync(1);
    expect(await drainReady(queue)).toEqual(['a']);
  });

  test('addBatched hands out the changes of one window as one key, the window opening with the first', async () => {
    const queue = new WorkQueue();
    queue.addBatched('a', 50);
    await jest.advanceTimersByTimeAsync(30);
    queue.addBatched('a', 50); // within the window: does not move it
    await jest.advanceTimersByTimeAsync(19);
    expect(queue.len()).toBe(0);

    await jest.advanceTimersByTimeAsync(1);
    expect(await drainReady(queue)).toEqual(['a']);
    await jest.advanceTimersByTimeAsync(100);
    expect(queue.len()).toBe(0);
  });

  test('addBatched leaves a key that is already ready, or due sooner, as it is; a zero window adds at once', async () => {
    const queue = new WorkQueue();
    queue.add('ready');
    queue.addBatched('ready', 50);
    queue.addAfter('sooner', 10);
    queue.addBatched('sooner', 50);
    queue.addBatched('now', 0);
    expect(await drainReady(queue)).toEqual(['ready', 'now']);

    await jest.advanceTimersByTimeAsync(10);
    expect(await drainReady(queue)).toEqual(['sooner']);
    await jest.advanceTimersByTimeAsync(100);
    expect(queue.len()).toBe(0);
  });

  test('addBatched counts an add once handed out, never a retry', async () => {
    const registry = new Registry();
    const queue = new WorkQueue({ name: 'w', metrics: new RuntimeMetrics(registry).forWorkQueue('w') });
    queue.addBatched('a', 50);
    await jest.advanceTimersByTimeAsync(50);
    expect(await metricValue(registry, 'workqueue_retries_total', { name: 'w' })).toBe(0);
    expect(await metricValue(registry, 'workqueue_adds_total', { name: 'w' })).toBe(1);
  });

  test('addAfter with a zero delay adds at once', () => {
    const queue = new WorkQueue();
    queue.addAfter('a', 0);

    expect(queue.len()).toBe(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('when a key is added after twice, the earlier deadline wins and it runs once', async () => {
    const queue = new WorkQueue();
    queue.addAfter('late-then-early', 1000);
    queue.addAfter('late-then-early', 100);
    queue.addAfter('early-then-late', 100);
    queue.addAfter('early-then-late', 1000);

    await jest.advanceTimersByTimeAsync(100);
    expect((await drainReady(queue)).sort()).toEqual(['early-then-late', 'late-then-early']);

    await jest.advanceTimersByTimeAsync(1000);
    expect(queue.len()).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('delayed keys become available in deadline order, whatever the order they were added in', async () => {
    const queue = new WorkQueue();
    queue.addAfter('c', 300);
    queue.addAfter('a', 100);
    queue.addAfter('d', 400);
    queue.addAfter('b', 200);

    await jest.advanceTimersByTimeAsync(400);

    expect(await drainReady(queue)).toEqual(['a', 'b', 'c', 'd']);
  });

  test('a delayed key that is already queued is not queued twice', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.addAfter('a', 10);

    await jest.advanceTimersByTimeAsync(10);

    expect(queue.len()).toBe(1);
  });

  test('retryFailedNow brings keys backing off after failures forward, keeps their counts, and leaves planned waits alone', async () => {
    const queue = new WorkQueue();
    // An outage: 'failing' failed 12 times, its next try 20 s away; 'planned' waits on purpose.
    for (let i = 0; i < 12; i++) queue.addRateLimited('failing');
    queue.addAfter('planned', 60_000);
    queue.forget('planned');
    await jest.advanceTimersByTimeAsync(1);
    expect(queue.len()).toBe(0);

    expect(queue.retryFailedNow()).toBe(1);
    await jest.advanceTimersByTimeAsync(0);
    expect(await drainReady(queue)).toEqual(['failing']);
    expect(queue.numRequeues('failing')).toBe(12);
    // A failure after that backs off further, from where it was.
    queue.addRateLimited('failing');
    await jest.advanceTimersByTimeAsync(5 * 2 ** 12 - 1);
    expect(queue.len()).toBe(0);
    await jest.advanceTimersByTimeAsync(60_000);
    expect((await drainReady(queue)).sort()).toEqual(['failing', 'planned']);
  });

  test('addRateLimited delays a key by its growing per-key backoff, and forget resets it', async () => {
    const queue = new WorkQueue();

    queue.addRateLimited('a');
    await jest.advanceTimersByTimeAsync(4);
    expect(queue.len()).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(await drainReady(queue)).toEqual(['a']);

    queue.addRateLimited('a');
    await jest.advanceTimersByTimeAsync(9);
    expect(queue.len()).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(await drainReady(queue)).toEqual(['a']);
    expect(queue.numRequeues('a')).toBe(2);

    queue.forget('a');
    expect(queue.numRequeues('a')).toBe(0);
  });

  test('after shutDown, keys already queued are still handed out, then get resolves undefined', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('b');

    queue.shutDown();

    expect(queue.shuttingDown).toBe(true);
    expect(await drainReady(queue)).toEqual(['a', 'b']);
    expect(await queue.get()).toBeUndefined();
  });

  test('shutDown wakes every idle get() with undefined', async () => {
    const queue = new WorkQueue();
    const waiting = [queue.get(), queue.get()];

    queue.shutDown();

    expect(await Promise.all(waiting)).toEqual([undefined, undefined]);
  });

  test('adds after shutDown are ignored and leave no timers', async () => {
    const queue = new WorkQueue();
    queue.shutDown();

    queue.add('a');
    queue.addAfter('b', 100);
    queue.addRateLimited('c');
    await jest.advanceTimersByTimeAsync(1000);

    expect(queue.len()).toBe(0);
    expect(queue.numRequeues('c')).toBe(0);
    expect(await queue.get()).toBeUndefined();
    expect(jest.getTimerCount()).toBe(0);
  });

  test('shutDown cancels delayed adds still waiting', async () => {
    const queue = new WorkQueue();
    queue.addAfter('a', 100);

    queue.shutDown();
    await jest.advanceTimersByTimeAsync(100);

    expect(jest.getTimerCount()).toBe(0);
    expect(await queue.get()).toBeUndefined();
  });

  test('shutDownWithDrain resolves only once every handed-out key is done', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('b');
    await queue.get();
    await queue.get();
    let drained = false;

    const draining = queue.shutDownWithDrain().then(() => {
      drained = true;
    });
    queue.done('a');
    await jest.advanceTimersByTimeAsync(0);
    expect(drained).toBe(false);

    queue.done('b');
    await draining;
    expect(drained).toBe(true);
  });

  test('shutDownWithDrain resolves at once when nothing is being processed', async () => {
    const queue = new WorkQueue();

    await expect(queue.shutDownWithDrain()).resolves.toBeUndefined();
  });

  test('a plain shutDown ends a pending shutDownWithDrain', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    await queue.get();
    const draining = queue.shutDownWithDrain();

    queue.shutDown();

    await expect(draining).resolves.toBeUndefined();
  });

  test('metrics hooks report depth, adds, queue and work durations, and retries', async () => {
    const registry = new Registry();
    const metrics = new RuntimeMetrics(registry);
    const queue = new WorkQueue({ name: 'clonesets', metrics: metrics.forWorkQueue('clonesets') });
    const labels = { name: 'clonesets' };

    queue.add('a');
    queue.add('a');
    queue.add('b');
    expect(await metricValue(registry, 'workqueue_depth', labels)).toBe(2);

    await jest.advanceTimersByTimeAsync(2000);
    const key = await queue.get();
    await jest.advanceTimersByTimeAsync(3000);
    queue.done(key ?? '');
    queue.addRateLimited('c');

    expect(await metricValue(registry, 'workqueue_depth', labels)).toBe(1);
    expect(await metricValue(registry, 'workqueue_adds_total', labels)).toBe(2);
    expect(await metricValue(registry, 'workqueue_retries_total', labels)).toBe(1);
    expect(await metricValue(registry, 'workqueue_queue_duration_seconds', labels, '_sum')).toBe(2);
    expect(await metricValue(registry, 'workqueue_work_duration_seconds', labels, '_sum')).toBe(3);
    queue.shutDown();
  });
});
