// What a failed request to the API server throws: the API server's Status body, the error of a
// request refused or never answered (KubeApiError), and the client's refusal of a write it did not
// send. Here, apart from the REST client (kube-client.ts), so a pure module can tell a refusal from
// other failures (workload/pure/failures.ts) without importing the client. Owns: those values. Pure.
// Must not: send requests, or decide what a failure means (kube-client.ts's isNotFound and the
// like, workload/pure/failures.ts).

/** The API server's Status body, when it sent one. */
export interface KubeStatus {
  kind?: 'Status';
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: { field?: string; message?: string; reason?: string }[]; retryAfterSeconds?: number };
}

/**
 * The Status with the response's Retry-After header folded into details.retryAfterSeconds when
 * the body named no wait itself (the API server sends the header with 429s and some 503s).
 */
export function withRetryAfterHeader(
  status: KubeStatus | undefined,
  header: string | string[] | undefined,
): KubeStatus | undefined {
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  if (!Number.isInteger(seconds) || seconds <= 0 || status?.details?.retryAfterSeconds !== undefined) return status;
  return { ...status, details: { ...status?.details, retryAfterSeconds: seconds } };
}

/** Longest server-named wait honoured as it is; a longer one is cut to this. */
export const MAX_SERVER_RETRY_AFTER_MS = 30_000;

/**
 * How long the API server asked the client to wait before trying again, when it answered 429 or
 * 5xx and named a wait: it is up and says when it will serve (its watch cache initializing after a
 * restart, a CRD's paths not installed yet, API Priority and Fairness rejecting), so that wait,
 * not a backoff grown through an outage, is the one to keep. Undefined for any other failure.
 */
export function serverRetryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof KubeApiError) || (error.statusCode !== 429 && error.statusCode < 500)) return undefined;
  const seconds = error.status?.details?.retryAfterSeconds;
  if (seconds === undefined || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return Math.min(seconds * 1_000, MAX_SERVER_RETRY_AFTER_MS);
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
    const cause = options?.cause;
    const detail = statusCode === 0 && cause instanceof Error ? `(${cause.message})` : '';
    // A refused write was never sent, so "no response" would mislead.
    const outcome = statusCode || (cause instanceof WriteRefusedError ? cause.message : `no response ${detail}`);
    super(
      `${method} ${path}: ${outcome} ${status?.reason ?? ''} ${status?.message ?? ''}`.replace(/\s+/g, ' ').trim(),
      options,
    );
    this.name = 'KubeApiError';
  }
  get reason(): string | undefined {
    return this.status?.reason;
  }
}

/** A write the client's write guard refused; it was never sent. */
export class WriteRefusedError extends Error {
  constructor(reason: Error) {
    super(`write refused, not sent: ${reason.message}`, { cause: reason });
    this.name = 'WriteRefusedError';
  }
}
