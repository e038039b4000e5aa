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
