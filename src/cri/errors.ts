// A failed CRI call, as one error type for every RPC: the call, the container, sandbox or image it
// was about, the gRPC code in Go's spelling (what kubelet logs show) and whether a retry can help.
// Owns: the error type and the code names. Must not: retry, log or talk to the runtime.

/** gRPC status codes, spelled as Go's codes.Code.String() (what kubelet logs show). */
export type CriCode =
  | 'OK'
  | 'Canceled'
  | 'Unknown'
  | 'InvalidArgument'
  | 'DeadlineExceeded'
  | 'NotFound'
  | 'AlreadyExists'
  | 'PermissionDenied'
  | 'ResourceExhausted'
  | 'FailedPrecondition'
  | 'Aborted'
  | 'OutOfRange'
  | 'Unimplemented'
  | 'Internal'
  | 'Unavailable'
  | 'DataLoss'
  | 'Unauthenticated';

const CODE_NAMES: readonly CriCode[] = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/** Codes after which the same call may succeed later: the runtime is down, slow or busy. */
const RETRYABLE: ReadonlySet<CriCode> = new Set<CriCode>([
  'Unavailable',
  'DeadlineExceeded',
  'ResourceExhausted',
  'Aborted',
]);

export function criCodeName(code: number): CriCode {
  return CODE_NAMES[code] ?? 'Unknown';
}

/** A failed CRI call. `message` reads: `CRI <call> (container <id>) on <endpoint>: <Code>: <runtime message>`. */
export class CriError extends Error {
  override readonly name = 'CriError';
  /** The RPC, e.g. "UpdateContainerResources". */
  readonly call: string;
  /** The container the call was about, when it was about one. */
  readonly containerId: string | undefined;
  /** The sandbox the call was about, when it was about one. */
  readonly podSandboxId: string | undefined;
  readonly code: CriCode;
  /** What the runtime (or the channel) said, without our prefix. */
  readonly details: string;
  readonly endpoint: string;

  constructor(init: {
    call: string;
    code: CriCode;
    details: string;
    endpoint: string;
    containerId?: string | undefined;
    podSandboxId?: string | undefined;
    image?: string | undefined;
    cause?: unknown;
  }) {
    const subject =
      init.containerId !== undefined
        ? ` (container ${init.containerId})`
        : init.podSandboxId !== undefined
          ? ` (sandbox ${init.podSandboxId})`
          : init.image !== undefined
            ? ` (image ${init.image})`
            : '';
    const hint = RETRYABLE.has(init.code) ? ' (retryable)' : '';
    super(`CRI ${init.call}${subject} on ${init.endpoint}: ${init.code}: ${init.details}${hint}`, {
      cause: init.cause,
    });
    this.call = init.call;
    this.code = init.code;
    this.details = init.details;
    this.endpoint = init.endpoint;
    this.containerId = init.containerId;
    this.podSandboxId = init.podSandboxId;
  }

  /** True when retrying the same call later can succeed (runtime unreachable, slow or busy). */
  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}
