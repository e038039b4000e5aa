// A thin REST client for the Kubernetes API: paths in, wire JSON out (objects keep the shape the
// API server sends, the same the watch delivers). Every request Tailor makes goes through here so
// it is counted (rest_client_requests_total), has a deadline, honours the caller's AbortSignal, and
// fails with a KubeApiError that names the request, the server's message and, for a request that
// got no answer, the cause. Owns: requests, deadlines, the write fence and the write guard.
// Must not: retry, cache, or interpret objects; callers decide what a failure means.
import { setMaxListeners } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';

import type { KubeList, KubeObject } from '../api/wire.js';
import { KubeApiError, withRetryAfterHeader, WriteRefusedError, type KubeStatus } from './pure/api-error.js';

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

/** Metadata only where the server can transform the answer so, else the whole object. */
const METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

const patchContentType: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

export const isNotFound = (err: unknown): boolean => err instanceof KubeApiError && err.statusCode === 404;
export const isForbidden = (err: unknown): boolean => err instanceof KubeApiError && err.statusCode === 403;
export const isConflict = (err: unknown): boolean => err instanceof KubeApiError && err.statusCode === 409;
export const isAlreadyExists = (err: unknown): boolean =>
  err instanceof KubeApiError && err.statusCode === 409 && err.reason === 'AlreadyExists';
export const isGone = (err: unknown): boolean => err instanceof KubeApiError && err.statusCode === 410;
/** The request got no answer within its deadline. */
export const isTimeout = (err: unknown): boolean =>
  err instanceof KubeApiError && err.statusCode === 0 && err.cause instanceof DeadlineExceededError;

/** The reason a request was aborted at its deadline (the `cause` of the KubeApiError). */
export class DeadlineExceededError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`deadline of ${timeoutMs} ms exceeded`);
    this.name = 'DeadlineExceededError';
  }
}

/** The write was refused by the client's write guard, unsent. */
export const isWriteRefused = (err: unknown): boolean =>
  err instanceof KubeApiError && err.statusCode === 0 && err.cause instanceof WriteRefusedError;

/** Per-call options of the convenience methods. */
export interface CallOptions {
  /** Deadline of this request; default the client's requestTimeoutMs. */
  timeoutMs?: number;
  /** Aborts the request; the KubeApiError's cause is the signal's reason. */
  signal?: AbortSignal;
}

export interface KubeClientOptions {
  /** Default deadline of every request (of a watch: until its headers arrive). Default 30 s. */
  requestTimeoutMs?: number;
  /** Connections to the API server at once; more requests wait for one. Default 64. */
  maxSockets?: number;
  /**
   * Asked synchronously right before each write (POST, PUT, PATCH, DELETE) is sent and again
   * when it gets its socket: an Error refuses the write, unsent, with a WriteRefusedError cause.
   */
  writeGuard?: () => Error | undefined;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * How long a kept-alive socket may sit idle before this side closes it: well under the API
 * server's 90 s idle timeout, so a request never goes out on a socket the server is closing. A
 * request in flight is not cut by it: Node closes only the agent's free sockets on this timeout.
 */
const IDLE_SOCKET_MS = 60_000;

/** Called once per completed request; the metrics module counts them. */
export type RequestObserver = (method: string, code: string, host: string) => void;

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** The Accept header; default plain JSON (the whole object). */
  accept?: string;
  /**
   * Deadline of the whole exchange, response body included. Default the client's
   * requestTimeoutMs. 0: no overall deadline (a stream), but the headers must still arrive
   * within requestTimeoutMs.
   */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * What the client needs of a kubeconfig: the server, and the TLS material and headers of each
 * request. client-node's KubeConfig fits; so does the controller's lighter loader (cli/kubeconfig.ts).
 */
export interface KubeAuth {
  getCurrentCluster(): { server: string } | null;
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}

/**
 * Deadlines: a plain request's deadline covers the whole exchange, body included (default
 * `requestTimeoutMs`, 30 s). A streaming request (`timeoutMs: 0`, e.g. a watch) must get its
 * response headers within `requestTimeoutMs`; after that only the caller's signal ends it. A
 * request waiting for a socket of a full pool is within its deadline too: an abort or the deadline
 * fails it at once, and the pool drops it unsent when a socket frees up.
 * The write guard (`writeGuard`, e.g. the leader's "is my lease still valid") is asked right
 * before a write is sent and again when it gets its socket; a refusal fails it unsent
 * (WriteRefusedError), decided on the spot rather than by a timer a busy loop may run late
 * (docs/decisions/0040-monotonic-leadership-write-guard-and-the-lease-connection.md).
 */
export class KubeClient {
  private agent: http.Agent | undefined;
  private readonly server: URL;
  private readonly fenced = new AbortController();
  readonly requestTimeoutMs: number;
  private readonly maxSockets: number;
  private readonly writeGuard: (() => Error | undefined) | undefined;

  constructor(
    readonly config: KubeAuth,
    private readonly observe: RequestObserver = () => undefined,
    options: KubeClientOptions = {},
  ) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    if (!(this.requestTimeoutMs > 0))
      throw new RangeError(`requestTimeoutMs must be > 0, got ${this.requestTimeoutMs}`);
    this.maxSockets = options.maxSockets ?? 64;
    if (!(Number.isInteger(this.maxSockets) && this.maxSockets > 0))
      throw new RangeError(`maxSockets must be a positive integer, got ${this.maxSockets}`);
    this.writeGuard = options.writeGuard;
    // Every write in flight listens on the fence; hundreds at once are normal, not a leak.
    setMaxListeners(0, this.fenced.signal);
  }

  /**
   * Aborts every write (POST, PUT, PATCH, DELETE) in flight and fails every later one at once
   * with `reason` as the cause. Reads are unaffected. Cannot be undone: fence a client only when
   * the process is leaving (a lost lease), so it cannot keep writing whatever its reconcilers do.
   */
  fence(reason: Error): void {
    if (!this.fenced.signal.aborted) this.fenced.abort(reason);
  }

  get host(): string {
    return this.server.host;
  }

  async get<T>(path: string, query?: RequestOptions['query'], call?: CallOptions): Promise<T> {
    return this.json<T>('GET', path, { query, ...call });
  }

  async list<T>(path: string, query?: RequestOptions['query'], call?: CallOptions): Promise<KubeList<T>> {
    return this.json<KubeList<T>>('GET', path, { query, ...call });
  }

  async create<T>(path: string, body: unknown, call?: CallOptions): Promise<T> {
    return this.json<T>('POST', path, { body, ...call });
  }

  async patch<T>(
    path: string,
    body: unknown,
    type: PatchType,
    query?: RequestOptions['query'],
    call?: CallOptions,
  ): Promise<T> {
    return this.json<T>('PATCH', path, { body, contentType: patchContentType[type], query, ...call });
  }

  /**
   * A patch whose answer is only the object's metadata (PartialObjectMetadata), for a caller that
   * reads nothing else of it (the resourceVersion its expectations wait for): a pod's answer is
   * half its size, and every in-place pod is three such writes. A server that cannot answer so
   * sends the whole object, which has the same metadata.
   */
  async patchMetadata(path: string, body: unknown, type: PatchType): Promise<KubeObject> {
    return this.json<KubeObject>('PATCH', path, { body, contentType: patchContentType[type], accept: METADATA_ONLY });
  }

  async delete<T>(path: string, body?: unknown, call?: CallOptions): Promise<T> {
    return this.json<T>('DELETE', path, { body, ...call });
  }

  /** One request and its whole response body, within the request's deadline. */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const timeoutMs = options.timeoutMs || this.requestTimeoutMs;
    const deadline = new Deadline(timeoutMs);
    const { signal, dispose } = linkSignals(deadline.signal, options.signal);
    try {
      const response = await this.request(method, path, { ...options, timeoutMs, signal });
      let text: string;
      try {
        text = await readAll(response.body);
      } catch (err) {
        throw new KubeApiError(method, path, 0, undefined, { cause: signal.aborted ? signal.reason : err });
      }
      if (response.statusCode >= 300) {
        throw new KubeApiError(
          method,
          path,
          response.statusCode,
          withRetryAfterHeader(parseStatus(text), response.headers['retry-after']),
        );
      }
      return (text ? JSON.parse(text) : undefined) as T;
    } finally {
      deadline.clear();
      dispose();
    }
  }

  /** Starts a request and resolves with the response stream once headers arrive. */
  async request(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<{ statusCode: number; headers: IncomingHttpHeaders; body: NodeJS.ReadableStream }> {
    const url = new URL(this.server.toString().replace(/\/$/, '') + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const auth: https.RequestOptions = {};
    await this.config.applyToHTTPSOptions(auth);
    // A plain-HTTP server (kubectl proxy, a local stand-in API) is valid in a kubeconfig too.
    const plain = this.server.protocol === 'http:';
    // An idle kept-alive socket is closed on this side after IDLE_SOCKET_MS: the API server closes
    // one idle for 90 s, and a request sent on it at that moment dies as "socket hang up", unanswered.
    const agent = (this.agent ??= plain
      ? new http.Agent({ keepAlive: true, maxSockets: this.maxSockets, timeout: IDLE_SOCKET_MS })
      : new https.Agent({
          keepAlive: true,
          maxSockets: this.maxSockets,
          timeout: IDLE_SOCKET_MS,
          ca: auth.ca,
          cert: auth.cert,
          key: auth.key,
          ...(auth.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: auth.rejectUnauthorized }),
        }));
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const headers = requestHeaders(auth, options, payload);
    // Until the headers arrive: the caller's signal, the fence for writes, and a deadline.
    const isWrite = WRITE_METHODS.has(method);
    const headersDeadline = new Deadline(options.timeoutMs || this.requestTimeoutMs);
    const fence = isWrite ? this.fenced.signal : undefined;
    const untilHeaders = linkSignals(headersDeadline.signal, options.signal, fence);
    const signal = untilHeaders.signal;
    const stream = linkSignals(options.signal, fence);
    const streamSignal = stream.signal;
    return new Promise((resolve, reject) => {
      let settled = false;
      // Ends the request without a response. Disposing `untilHeaders` detaches its signal from
      // every source, so the request's abort listener can never fire after this.
      const fail = (cause: unknown): void => {
        if (settled) return;
        settled = true;
        headersDeadline.clear();
        untilHeaders.dispose();
        stream.dispose();
        this.observe(method, '<error>', this.server.host);
        if (cause instanceof DeadlineExceededError) this.dropIdleSockets();
        reject(new KubeApiError(method, path, 0, undefined, { cause }));
      };
      if (signal.aborted) return fail(signal.reason);
      const refusal = isWrite ? this.refuseWrite() : undefined;
      if (refusal) return fail(refusal);
      const req = (plain ? http : https).request(url, { method, agent, headers }, (res) => {
        if (settled) {
          res.destroy();
          return;
        }
        settled = true;
        headersDeadline.clear();
        untilHeaders.dispose();
        // From here the stream lives as long as the caller wants (a plain request's json() holds
        // its own deadline around the body); a later abort ends the stream with the reason.
        const endStream = (): void =>
          void res.destroy(streamSignal.reason instanceof Error ? streamSignal.reason : new Error('aborted'));
        if (streamSignal.aborted) endStream();
        else {
          streamSignal.addEventListener('abort', endStream, { once: true });
          res.once('close', () => {
            streamSignal.removeEventListener('abort', endStream);
            stream.dispose();
          });
        }
        this.observe(method, String(res.statusCode ?? 0), this.server.host);
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      const onAbort = (): void => {
        req.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        // At once: a request still waiting for a socket would otherwise report only when it got one.
        fail(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => fail(signal.aborted ? signal.reason : err));
      if (!isWrite) {
        req.end(payload);
        return;
      }
      // A write's bytes leave only once it has a socket and the guard still allows it: a write
      // that waited behind a full pool past the deadline is dropped here, unsent.
      req.once('socket', () => {
        const late = this.refuseWrite();
        if (!late) {
          req.end(payload);
          return;
        }
        req.destroy(late);
        fail(late);
      });
    });
  }

  /** The write guard's refusal, if any, as the cause of a failed write. */
  private refuseWrite(): WriteRefusedError | undefined {
    const reason = this.writeGuard?.();
    return reason ? new WriteRefusedError(reason) : undefined;
  }

  /** Closes idle keep-alive sockets so a stopping process has no open handles. */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }

  /**
   * A request that got no answer within its deadline may have died on a connection the network
   * or a hung server silently dropped; the idle kept-alive ones share its path and are as likely
   * dead. They are closed, so the next request (a Lease renewal's retry) opens a fresh connection
   * instead of losing another deadline to the next dead one. Requests in flight keep theirs.
   */
  private dropIdleSockets(): void {
    for (const sockets of Object.values(this.agent?.freeSockets ?? {})) for (const s of sockets ?? []) s.destroy();
  }
}

/** A deadline as an AbortSignal whose timer is cleared when the work is done (fake-timer friendly). */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  constructor(timeoutMs: number) {
    this.timer = setTimeout(() => this.controller.abort(new DeadlineExceededError(timeoutMs)), timeoutMs);
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  clear(): void {
    clearTimeout(this.timer);
  }
}

/**
 * One signal that aborts, with the first reason, when any of `signals` does; `dispose()` detaches
 * it from them. Written out rather than AbortSignal.any so that a long-lived source (the fence,
 * a controller's signal) holds no reference to a finished request's signal.
 */
export function linkSignals(...signals: (AbortSignal | undefined)[]): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const sources = signals.filter((s): s is AbortSignal => s !== undefined);
  const onAbort = (event: Event): void => {
    dispose();
    controller.abort((event.target as AbortSignal).reason);
  };
  const dispose = (): void => {
    for (const s of sources) s.removeEventListener('abort', onAbort);
  };
  const already = sources.find((s) => s.aborted);
  if (already) controller.abort(already.reason);
  else for (const s of sources) s.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, dispose };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function parseStatus(text: string): KubeStatus | undefined {
  try {
    const parsed = JSON.parse(text) as KubeStatus;
    return typeof parsed === 'object' && parsed !== null ? parsed : { message: text };
  } catch {
    return text ? { message: text.slice(0, 500) } : undefined;
  }
}

/** A request's headers: what it accepts, the kubeconfig's auth, and its body's type and length. */
function requestHeaders(
  auth: https.RequestOptions,
  options: Pick<RequestOptions, 'accept' | 'contentType'>,
  payload: Buffer | undefined,
): Record<string, string> {
  const headers: Record<string, string> = { Accept: options.accept ?? 'application/json' };
  for (const [key, value] of Object.entries(auth.headers ?? {})) {
    if (typeof value === 'string' || typeof value === 'number') headers[key] = String(value);
  }
  if (auth.auth) headers['Authorization'] = `Basic ${Buffer.from(auth.auth).toString('base64')}`;
  if (payload) {
    headers['Content-Type'] = options.contentType ?? 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  return headers;
}
