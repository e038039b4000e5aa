// KubeClient against a local HTTP server that answers late, never, or only half: every request
// ends at its deadline or at the caller's abort with the cause attached, a watch-style stream
// lives past the deadline once its headers arrived, and a fenced client writes nothing more.
// A request waiting for a socket of a full pool ends at its own deadline, and a write whose
// guard refuses it (leadership expired) never reaches the server, even one already queued.
// Real sockets and short real delays: Node's HTTP stack does not run under Jest's fake timers.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeApiError } from '../../../src/runtime/pure/api-error.js';
import {
  DeadlineExceededError,
  KubeClient,
  isTimeout,
  isWriteRefused,
  linkSignals,
  type KubeClientOptions,
} from '../../../src/runtime/kube-client.js';

let server: http.Server;
let baseUrl = '';
const writesSeen: string[] = [];
const openResponses = new Set<http.ServerResponse>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    openResponses.add(res);
    res.on('close', () => openResponses.delete(res));
    const path = req.url ?? '';
    if (req.method !== 'GET') writesSeen.push(`${req.method} ${path}`);
    if (path.startsWith('/never')) return; // no headers, ever
    if (path.startsWith('/half')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items": [');
      return; // the body never ends
    }
    if (path.startsWith('/delayed')) {
      setTimeout(() => res.writeHead(200).end('{}'), 300);
      return;
    }
    if (path.startsWith('/slow-write')) {
      setTimeout(() => res.writeHead(200).end('{}'), 150);
      return;
    }
    if (path.startsWith('/stream')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      let n = 0;
      const timer = setInterval(() => res.write(`{"n":${n++}}\n`), 20);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of openResponses) res.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(requestTimeoutMs = 100, options: Omit<KubeClientOptions, 'requestTimeoutMs'> = {}): KubeClient {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: baseUrl, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'local', user: 'u' }],
    currentContext: 'c',
  });
  return new KubeClient(kc, undefined, { requestTimeoutMs, ...options });
}

async function failure(promise: Promise<unknown>): Promise<KubeApiError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof KubeApiError) return err;
    throw new Error('expected a KubeApiError', { cause: err });
  }
  throw new Error('expected the request to fail');
}

describe('KubeClient deadlines and cancellation', () => {
  test('a request the server never answers fails at the client deadline, naming the deadline as its cause', async () => {
    const c = client(100);
    const started = Date.now();
    const err = await failure(c.get('/never'));
    c.close();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(isTimeout(err)).toBe(true);
    expect(err.cause).toBeInstanceOf(DeadlineExceededError);
    expect(err.message).toContain('deadline of 100 ms exceeded');
  });

  test('a per-call deadline overrides the client default', async () => {
    const c = client(10_000);
    const started = Date.now();
    const err = await failure(c.get('/never', undefined, { timeoutMs: 50 }));
    c.close();
    expect(Date.now() - started).toBeLessThan(2000);
    expect((err.cause as DeadlineExceededError).timeoutMs).toBe(50);
  });

  test('the deadline covers the body too: a response that stops half way fails at the deadline', async () => {
    const c = client(100);
    const err = await failure(c.list('/half'));
    c.close();
    expect(isTimeout(err)).toBe(true);
  });

  test("the caller's abort ends the request at once, with the caller's reason as the cause", async () => {
    const c = client(10_000);
    const abort = new AbortController();
    const pending = failure(c.get('/never', undefined, { signal: abort.signal }));
    const reason = new Error('lease lost');
    setTimeout(() => abort.abort(reason), 20);
    const err = await pending;
    c.close();
    expect(err.cause).toBe(reason);
    expect(isTimeout(err)).toBe(false);
  });

  test('an already aborted signal fails the request without sending it', async () => {
    const c = client();
    const before = writesSeen.length;
    const err = await failure(c.create('/things', {}, { signal: AbortSignal.abort(new Error('shutting down')) }));
    c.close();
    expect((err.cause as Error).message).toBe('shutting down');
    expect(writesSeen.length).toBe(before);
  });

  test('a stream outlives the request deadline once its headers arrived, and ends when its caller aborts', async () => {
    // A deadline loaded CI machines meet for the headers, and a stream read for well past it.
    const c = client(400);
    const abort = new AbortController();
    const response = await c.request('GET', '/stream', { timeoutMs: 0, signal: abort.signal });
    let lines = 0;
    const read = (async (): Promise<void> => {
      for await (const chunk of response.body) lines += String(chunk).split('\n').length - 1;
    })();
    await new Promise((r) => setTimeout(r, 1000));
    abort.abort(new Error('informer stopped'));
    await expect(read).rejects.toThrow('informer stopped');
    c.close();
    expect(lines).toBeGreaterThan(3);
  });

  test('a fenced client aborts the write in flight and refuses later writes, but still reads', async () => {
    const c = client(10_000);
    const inFlight = failure(c.patch('/slow-write', {}, 'merge'));
    setTimeout(() => c.fence(new Error('lost the lease')), 20);
    const err = await inFlight;
    expect((err.cause as Error).message).toBe('lost the lease');
    const before = writesSeen.length;
    const refused = await failure(c.delete('/pods/x'));
    expect((refused.cause as Error).message).toBe('lost the lease');
    expect(writesSeen.length).toBe(before);
    await expect(c.get('/ok')).resolves.toEqual({ ok: true });
    c.close();
  });
});

/** The default pool's size: this many requests in flight and the next one waits for a socket. */
const POOL_SIZE = 64;

describe('KubeClient on a full connection pool', () => {
  test('a request waiting for a socket fails at its own deadline, not when a socket frees up', async () => {
    const c = client(10_000);
    const holding = Array.from({ length: POOL_SIZE }, () => failure(c.get('/never', undefined, { timeoutMs: 1_500 })));
    const started = performance.now();
    const err = await failure(c.get('/ok', undefined, { timeoutMs: 100 }));
    const waitedMs = performance.now() - started;
    expect(isTimeout(err)).toBe(true);
    expect(waitedMs).toBeLessThan(1_000);
    await Promise.all(holding);
    c.close();
  });
});

describe('KubeClient write guard', () => {
  const leadership = (validForMs: number): (() => Error | undefined) => {
    const validUntil = performance.now() + validForMs;
    return () => (performance.now() < validUntil ? undefined : new Error('lease ns/lease not renewed within 10000 ms'));
  };

  test("a write past the guard's deadline is refused without being sent; reads go on", async () => {
    const c = client(10_000, { writeGuard: leadership(0) });
    const before = writesSeen.length;
    const err = await failure(c.patch('/pods/refused', {}, 'merge'));
    expect(isWriteRefused(err)).toBe(true);
    expect(err.message).toContain('not sent');
    expect(err.message).not.toContain('no response');
    expect(err.message).toContain('lease ns/lease not renewed within 10000 ms');
    expect(writesSeen.length).toBe(before);
    await expect(c.get('/ok')).resolves.toEqual({ ok: true });
    c.close();
  });

  test('a write within the deadline is sent', async () => {
    const c = client(10_000, { writeGuard: leadership(60_000) });
    await expect(c.create('/things/allowed', {})).resolves.toEqual({ ok: true });
    expect(writesSeen).toContain('POST /things/allowed');
    c.close();
  });

  test('a write queued for a socket is not sent if the deadline passes while it waits', async () => {
    const c = client(10_000, { writeGuard: leadership(100) });
    const holding = Array.from({ length: POOL_SIZE }, () => c.get('/delayed'));
    const queued = failure(c.patch('/pods/queued', {}, 'merge'));
    await Promise.all(holding);
    const err = await queued;
    expect(isWriteRefused(err)).toBe(true);
    expect(writesSeen).not.toContain('PATCH /pods/queued');
    c.close();
  });
});

describe('linkSignals', () => {
  test('aborts with the first reason and no longer listens to its sources once disposed', () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkSignals(a.signal, undefined, b.signal);
    b.abort(new Error('b first'));
    a.abort(new Error('a later'));
    expect((linked.signal.reason as Error).message).toBe('b first');

    const c = new AbortController();
    const other = linkSignals(c.signal);
    other.dispose();
    c.abort(new Error('after dispose'));
    expect(other.signal.aborted).toBe(false);
  });
});
