// A thin REST client for the Kubernetes API: paths in, wire JSON out. Every request Tailor makes
// goes through here so it is counted (rest_client_requests_total), carries an explicit content
// type for patches, and fails with a KubeApiError that names the request and the server's message.
// Objects keep the shape the API server sends (timestamps are strings), the same shape the watch
// delivers, so the informer cache holds one consistent form.
// Must not: retry, cache, or interpret objects; callers decide what a failure means.
import type * as k8s from '@kubernetes/client-node';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';

/** A client-node model type as it travels on the wire: Date fields arrive as RFC 3339 strings. */
export type Wire<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

export type Pod = Wire<k8s.V1Pod>;
export type Node = Wire<k8s.V1Node>;
export type ObjectMeta = Wire<k8s.V1ObjectMeta>;

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';
const patchContentType: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** The API server's Status body, when it sent one. */
export interface KubeStatus {
  kind?: 'Status';
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: { field?: string; message?: string; reason?: string }[] };
}

/** A request the API server refused or that never reached it. */
export class KubeApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly statusCode: number,
    readonly status: KubeStatus | undefined,
    options?: { cause?: unknown },
  ) {
    super(`${method} ${path}: ${statusCode || 'no response'} ${status?.reason ?? ''} ${status?.message ?? ''}`.trim(), options);
    this.name = 'KubeApiError';
  }
  get reason(): string | undefined {
    return this.status?.reason;
  }
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeApiError && err.statusCode === 404;
export const isConflict = (err: unknown): boolean => err instanceof KubeApiError && err.statusCode === 409;
export const isAlreadyExists = (err: unknown): boolean =>
  err instanceof KubeApiError && err.statusCode === 409 && err.reason === 'AlreadyExists';
export const isGone = (err: unknown): boolean => err instanceof KubeApiError && err.statusCode === 410;

/** Called once per completed request; the metrics module counts them. */
export type RequestObserver = (method: string, code: string, host: string) => void;

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Abort the request (and a streaming response) after this long. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export class KubeClient {
  private agent: http.Agent | undefined;
  private readonly server: URL;

  constructor(
    readonly config: k8s.KubeConfig,
    private readonly observe: RequestObserver = () => undefined,
  ) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
  }

  get host(): string {
    return this.server.host;
  }

  async get<T>(path: string, query?: RequestOptions['query']): Promise<T> {
    return this.json<T>('GET', path, { query });
  }

  async list<T>(path: string, query?: RequestOptions['query']): Promise<KubeList<T>> {
    return this.json<KubeList<T>>('GET', path, { query });
  }

  async create<T>(path: string, body: unknown): Promise<T> {
    return this.json<T>('POST', path, { body });
  }

  async patch<T>(path: string, body: unknown, type: PatchType, query?: RequestOptions['query']): Promise<T> {
    return this.json<T>('PATCH', path, { body, contentType: patchContentType[type], query });
  }

  async delete<T>(path: string, body?: unknown): Promise<T> {
    return this.json<T>('DELETE', path, { body });
  }

  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.request(method, path, options);
    const text = await readAll(response.body);
    if (response.statusCode >= 300) {
      throw new KubeApiError(method, path, response.statusCode, parseStatus(text));
    }
    return (text ? JSON.parse(text) : undefined) as T;
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
    const agent = (this.agent ??= plain
      ? new http.Agent({ keepAlive: true, maxSockets: 64 })
      : new https.Agent({
          keepAlive: true,
          maxSockets: 64,
          ca: auth.ca,
          cert: auth.cert,
          key: auth.key,
          ...(auth.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: auth.rejectUnauthorized }),
        }));
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const headers: Record<string, string> = { Accept: 'application/json' };
    for (const [key, value] of Object.entries(auth.headers ?? {})) {
      if (typeof value === 'string' || typeof value === 'number') headers[key] = String(value);
    }
    if (auth.auth) headers['Authorization'] = `Basic ${Buffer.from(auth.auth).toString('base64')}`;
    if (payload) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    return new Promise((resolve, reject) => {
      const req = (plain ? http : https).request(url, { method, agent, headers, signal: options.signal }, (res) => {
        this.observe(method, String(res.statusCode ?? 0), this.server.host);
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      if (options.timeoutMs) {
        req.setTimeout(options.timeoutMs, () => req.destroy(new Error(`timed out after ${options.timeoutMs} ms`)));
      }
      req.on('error', (err) => {
        this.observe(method, '<error>', this.server.host);
        reject(new KubeApiError(method, path, 0, undefined, { cause: err }));
      });
      req.end(payload);
    });
  }

  /** Closes idle keep-alive sockets so a stopping process has no open handles. */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }
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
