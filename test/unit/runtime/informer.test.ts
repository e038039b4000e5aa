// The informer driver under Jest's fake timers, against a scripted API: lists answer from an
// in-memory collection, and each watch is a stream the test writes events into (or leaves
// silent, or fails). Asserts the end state — the cache, what the handlers saw, which requests
// were made — after each kind of trouble: a silent watch (the watchdog relists), 410 Gone, a
// broken watch (backoff, then resume from the last resourceVersion), the periodic resync, stop.
import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import { Backoff } from '../../../src/runtime/backoff.js';
import { Informer, type InformerOptions } from '../../../src/runtime/informer.js';
import type { RequestOptions } from '../../../src/runtime/kube-client.js';
import type { KubeList, KubeObject } from '../../../src/api/wire.js';
import { KubeApiError } from '../../../src/runtime/pure/api-error.js';
import { silentLogger } from '../../../src/runtime/logger.js';

type Obj = KubeObject & { data?: string };

/** A watch response body the test scripts line by line; aborting the request ends it. */
class ScriptedStream implements AsyncIterable<Buffer> {
  private readonly items: (Buffer | Error | null)[] = [];
  private wake: (() => void) | undefined;
  constructor(signal: AbortSignal | undefined) {
    signal?.addEventListener('abort', () => this.push(new Error('aborted')));
  }
  event(type: string, object: Obj): void {
    this.push(Buffer.from(`${JSON.stringify({ type, object })}\n`));
  }
  end(): void {
    this.push(null);
  }
  fail(error: Error): void {
    this.push(error);
  }
  private push(item: Buffer | Error | null): void {
    this.items.push(item);
    this.wake?.();
  }
  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      while (this.items.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
      const item = this.items.shift()!;
      if (item === null) return;
      if (item instanceof Error) throw item;
      yield item;
    }
  }
}

/** The server side: a collection with resourceVersions, list answers, and the watches opened. */
class ScriptedApi {
  readonly objects = new Map<string, Obj>();
  readonly watches: { resourceVersion: string; stream: ScriptedStream }[] = [];
  lists = 0;
  private rv = 100;

  put(name: string, data: string): Obj {
    const obj: Obj = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: 'ns', name, resourceVersion: String(++this.rv) },
      data,
    };
    this.objects.set(name, obj);
    return obj;
  }

  drop(name: string): Obj | undefined {
    const obj = this.objects.get(name);
    this.objects.delete(name);
    this.rv += 1;
    return obj;
  }

  get latest(): ScriptedStream {
    return this.watches[this.watches.length - 1]!.stream;
  }

  async list<T>(): Promise<KubeList<T>> {
    this.lists += 1;
    return {
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: String(this.rv) },
      items: [...this.objects.values()].map((o) => structuredClone(o)) as T[],
    };
  }

  async request(
    _method: string,
    _path: string,
    options: RequestOptions = {},
  ): Promise<{ statusCode: number; headers: Record<string, string>; body: NodeJS.ReadableStream }> {
    const stream = new ScriptedStream(options.signal);
    this.watches.push({ resourceVersion: String(options.query?.['resourceVersion']), stream });
    return { statusCode: 200, headers: {}, body: stream as unknown as NodeJS.ReadableStream };
  }
}

const NO_EVENT_MS = 30_000;

function informerOn(
  api: ScriptedApi,
  options: Pick<InformerOptions<Obj>, 'resyncPeriodMs' | 'pageSize' | 'transform'> = {},
): { informer: Informer<Obj>; seen: string[] } {
  const informer = new Informer<Obj>({
    name: 'configmaps',
    client: api,
    path: '/api/v1/namespaces/ns/configmaps',
    noEventTimeoutMs: NO_EVENT_MS,
    relistIntervalMs: 0,
    backoff: new Backoff({ initialDelayMs: 1000, jitter: 0 }),
    logger: silentLogger(),
    ...options,
  });
  const seen: string[] = [];
  informer.addHandler({
    onAdd: (o) => void seen.push(`add ${o.metadata?.name}`),
    onUpdate: (_, o) => void seen.push(`update ${o.metadata?.name}`),
    onDelete: (o) => void seen.push(`delete ${o.metadata?.name}`),
  });
  return { informer, seen };
}

const cached = (informer: Informer<Obj>): Record<string, string | undefined> =>
  Object.fromEntries(informer.list().map((o) => [o.metadata?.name ?? '', o.data]));

let running: Informer<Obj> | undefined;
beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(async () => {
  await running?.stop();
  running = undefined;
  jest.useRealTimers();
});

async function started(
  api: ScriptedApi,
  options: { resyncPeriodMs?: number } = {},
): Promise<{ informer: Informer<Obj>; seen: string[] }> {
  const s = informerOn(api, options);
  running = s.informer;
  s.informer.start();
  await s.informer.waitForSync();
  await jest.advanceTimersByTimeAsync(0);
  return s;
}

describe('Informer', () => {
  test('turns synced after its first list and then follows watch events into the cache and the handlers', async () => {
    const api = new ScriptedApi();
    api.put('a', '1');
    const { informer, seen } = await started(api);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.phase).toBe('watching');
    api.latest.event('ADDED', api.put('b', '1'));
    api.latest.event('MODIFIED', api.put('a', '2'));
    api.latest.event('DELETED', api.drop('b')!);
    await jest.advanceTimersByTimeAsync(0);
    expect(cached(informer)).toEqual({ a: '2' });
    expect(seen).toEqual(['add a', 'add b', 'update a', 'delete b']);
  });

  test('a watch that silently stops delivering is abandoned by the watchdog, and the relist delivers what it missed', async () => {
    const api = new ScriptedApi();
    api.put('kept', '1');
    api.put('gone', '1');
    const { informer, seen } = await started(api);
    // Changes the watch never delivers.
    api.put('kept', '2');
    api.drop('gone');
    api.put('new', '1');
    await jest.advanceTimersByTimeAsync(NO_EVENT_MS - 1);
    expect(api.lists).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(api.lists).toBe(2);
    expect(informer.relists).toBe(1);
    expect(cached(informer)).toEqual({ kept: '2', new: '1' });
    expect(seen.slice(2).sort()).toEqual(['add new', 'delete gone', 'update kept']);
    expect(api.watches).toHaveLength(2);
  });

  test('events, bookmarks included, keep the watchdog from firing', async () => {
    const api = new ScriptedApi();
    const { informer } = await started(api);
    for (let i = 0; i < 5; i += 1) {
      await jest.advanceTimersByTimeAsync(NO_EVENT_MS - 1000);
      api.latest.event('BOOKMARK', { metadata: { resourceVersion: String(200 + i) } });
    }
    await jest.advanceTimersByTimeAsync(0);
    expect(api.lists).toBe(1);
    expect(informer.relists).toBe(0);
  });

  test('a 410 Gone in the watch stream relists at once', async () => {
    const api = new ScriptedApi();
    const { informer } = await started(api);
    await jest.advanceTimersByTimeAsync(5_000);
    api.put('while-gone', '1');
    api.latest.event('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } as unknown as Obj);
    await jest.advanceTimersByTimeAsync(0);
    expect(api.lists).toBe(2);
    expect(cached(informer)).toEqual({ 'while-gone': '1' });
  });

  test('a 410 Gone as soon as the watch opened relists only after the backoff (no tight loop)', async () => {
    const api = new ScriptedApi();
    await started(api);
    api.latest.event('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } as unknown as Obj);
    await jest.advanceTimersByTimeAsync(0);
    expect(api.lists).toBe(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(api.lists).toBe(2);
  });

  test('a broken watch is retried after the backoff, from the last resourceVersion it delivered', async () => {
    const api = new ScriptedApi();
    const { informer } = await started(api);
    api.latest.event('ADDED', api.put('a', '1'));
    await jest.advanceTimersByTimeAsync(0);
    const lastRv = informer.get('ns/a')?.metadata?.resourceVersion;
    api.latest.fail(new KubeApiError('WATCH', '/x', 0, undefined, { cause: new Error('ECONNRESET') }));
    await jest.advanceTimersByTimeAsync(999);
    expect(informer.phase).toBe('backingOff');
    expect(api.watches).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(api.watches).toHaveLength(2);
    expect(api.watches[1]!.resourceVersion).toBe(lastRv);
    expect(api.lists).toBe(1);
  });

  test('a watch refused with a named wait (429, Retry-After) is retried after that wait ten times, then after the backoff but never sooner than the wait', async () => {
    const api = new ScriptedApi();
    await started(api);
    const initializing = (): KubeApiError =>
      new KubeApiError('WATCH', '/x', 429, {
        reason: 'TooManyRequests',
        message: 'storage is (re)initializing',
        details: { retryAfterSeconds: 2 },
      });
    const waits: number[] = [];
    for (let failure = 0; failure < 13; failure++) {
      const opened = api.watches.length;
      api.latest.fail(initializing());
      let waited = 0;
      while (api.watches.length === opened) {
        await jest.advanceTimersByTimeAsync(500);
        waited += 500;
      }
      waits.push(waited);
    }
    // The backoff (1 s doubling) did not grow while the server named its wait; past the ten, it
    // decides, never below the 2 s named.
    expect(waits).toEqual([...Array<number>(10).fill(2_000), 2_000, 2_000, 4_000]);
  });

  test('tells its reconnect listeners once when the server answers again after a broken watch, and not before', async () => {
    const api = new ScriptedApi();
    const { informer } = await started(api);
    let reconnects = 0;
    informer.onReconnect(() => void reconnects++);
    api.latest.event('ADDED', api.put('a', '1'));
    await jest.advanceTimersByTimeAsync(0);
    expect(reconnects).toBe(0);
    api.latest.fail(new KubeApiError('WATCH', '/x', 0, undefined, { cause: new Error('ECONNREFUSED') }));
    await jest.advanceTimersByTimeAsync(999);
    expect(reconnects).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(api.watches).toHaveLength(2);
    expect(reconnects).toBe(1);
    api.latest.event('MODIFIED', api.put('a', '2'));
    await jest.advanceTimersByTimeAsync(0);
    expect(reconnects).toBe(1);
  });

  test('retryNow restarts a broken watch at once, from its last resourceVersion, and does nothing while it watches', async () => {
    const api = new ScriptedApi();
    const { informer } = await started(api);
    informer.retryNow();
    await jest.advanceTimersByTimeAsync(0);
    expect(api.watches).toHaveLength(1);
    api.latest.event('ADDED', api.put('a', '1'));
    await jest.advanceTimersByTimeAsync(0);
    // Three failures in a row: the next wait has grown to seconds.
    for (let i = 0; i < 3; i += 1) {
      api.latest.fail(new KubeApiError('WATCH', '/x', 0, undefined, { cause: new Error('ECONNREFUSED') }));
      await jest.advanceTimersByTimeAsync(10_000);
    }
    api.latest.fail(new KubeApiError('WATCH', '/x', 0, undefined, { cause: new Error('ECONNREFUSED') }));
    await jest.advanceTimersByTimeAsync(0);
    expect(informer.phase).toBe('backingOff');
    const watches = api.watches.length;
    informer.retryNow();
    await jest.advanceTimersByTimeAsync(0);
    expect(api.watches).toHaveLength(watches + 1);
    expect(api.watches.at(-1)!.resourceVersion).toBe(informer.get('ns/a')?.metadata?.resourceVersion);
    expect(informer.phase).toBe('watching');
    // The retry it replaced never fires on its own (the watchdog would only after NO_EVENT_MS).
    await jest.advanceTimersByTimeAsync(NO_EVENT_MS - 1_000);
    expect(api.watches).toHaveLength(watches + 1);
    expect(api.lists).toBe(1);
  });

  test('every resync period each cached object is delivered to the handlers again', async () => {
    const api = new ScriptedApi();
    api.put('a', '1');
    api.put('b', '1');
    const { informer, seen } = await started(api, { resyncPeriodMs: 10 * 60_000 });
    // Keep the watch alive with bookmarks so only the resync delivers anything.
    for (let minute = 1; minute <= 20; minute += 1) {
      await jest.advanceTimersByTimeAsync(60_000);
      api.latest.event('BOOKMARK', { metadata: { resourceVersion: String(300 + minute) } });
    }
    await jest.advanceTimersByTimeAsync(0);
    expect(informer.resyncs).toBe(2);
    expect(seen.filter((s) => s.startsWith('update')).sort()).toEqual(['update a', 'update a', 'update b', 'update b']);
  });

  test('stop ends the watch and leaves no timer behind', async () => {
    const api = new ScriptedApi();
    const { informer } = await started(api, { resyncPeriodMs: 60_000 });
    await informer.stop();
    running = undefined;
    expect(informer.phase).toBe('stopped');
    expect(jest.getTimerCount()).toBe(0);
  });

  test('a handler that throws does not stop the others or the informer', async () => {
    const api = new ScriptedApi();
    const s = informerOn(api);
    running = s.informer;
    s.informer.addHandler({
      onAdd: () => {
        throw new Error('bad handler');
      },
    });
    const after: string[] = [];
    s.informer.addHandler({ onAdd: (o) => void after.push(o.metadata?.name ?? '') });
    s.informer.start();
    await s.informer.waitForSync();
    api.latest.event('ADDED', api.put('x', '1'));
    await jest.advanceTimersByTimeAsync(0);
    expect(after).toEqual(['x']);
    expect(s.informer.phase).toBe('watching');
  });
});

/**
 * Lists in pages, as the API server does with `limit` and `continue`; remembers each page's query
 * and can fail one page request (an expired continue token, a dropped connection).
 */
class PagedApi extends ScriptedApi {
  readonly pages: { limit: unknown; continue: unknown }[] = [];
  failPage: number | undefined;
  private requests = 0;

  override async list<T>(_path?: string, query: RequestOptions['query'] = {}): Promise<KubeList<T>> {
    this.requests += 1;
    this.pages.push({ limit: query['limit'], continue: query['continue'] });
    if (this.failPage === this.requests)
      throw new KubeApiError('GET', '/x', 410, { reason: 'Expired', message: 'continue token expired' });
    const all = (await super.list<T>()).items;
    const limit = Number(query['limit']);
    const from = Number(query['continue'] ?? 0);
    const next = from + limit;
    return {
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: '500', ...(next < all.length ? { continue: String(next) } : {}) },
      items: all.slice(from, next),
    };
  }
}

describe('Informer: the list in pages', () => {
  const pagedInformer = (api: PagedApi, transform: (o: Obj) => Obj): Informer<Obj> => {
    const { informer } = informerOn(api, { pageSize: 2, transform });
    running = informer;
    return informer;
  };

  test('asks for pages of pageSize with the continue token until none is left, and trims each page before asking for the next', async () => {
    const api = new PagedApi();
    for (const name of ['a', 'b', 'c', 'd', 'e']) api.put(name, `${name}-full`);
    // Which page had been requested when each object was trimmed: the raw page is never kept.
    const trimmedDuringPage: Record<string, number> = {};
    const informer = pagedInformer(api, (o) => {
      trimmedDuringPage[o.metadata?.name ?? ''] = api.pages.length;
      return { ...o, data: 'trimmed' };
    });
    informer.start();
    await informer.waitForSync();
    expect(api.pages).toEqual([
      { limit: 2, continue: undefined },
      { limit: 2, continue: '2' },
      { limit: 2, continue: '4' },
    ]);
    expect(trimmedDuringPage).toEqual({ a: 1, b: 1, c: 2, d: 2, e: 3 });
    expect(informer.size()).toBe(5);
    expect(new Set(informer.list().map((o) => o.data))).toEqual(new Set(['trimmed']));
    // The watch starts from the list's resourceVersion (the last page's).
    expect(api.watches[0]?.resourceVersion).toBe('500');
  });

  test('a page that fails leaves the cache as it was; the retry lists again from the first page', async () => {
    const api = new PagedApi();
    for (const name of ['a', 'b', 'c']) api.put(name, '1');
    api.failPage = 2;
    const informer = pagedInformer(api, (o) => o);
    const added: string[] = [];
    informer.addHandler({ onAdd: (o) => void added.push(o.metadata?.name ?? '') });
    informer.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(informer.phase).toBe('backingOff');
    expect(informer.hasSynced()).toBe(false);
    expect(informer.size()).toBe(0);
    expect(added).toEqual([]);
    await jest.advanceTimersByTimeAsync(1000);
    await informer.waitForSync();
    expect(api.pages.map((p) => p.continue)).toEqual([undefined, '2', undefined, '2']);
    expect(added).toEqual(['a', 'b', 'c']);
  });
});
