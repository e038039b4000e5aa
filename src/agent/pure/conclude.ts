// What one agent resize round ends with (docs/architecture.md §3.2 An agent resize): the outcome of
// acting on decide()'s action, turned into the one status the round writes, the metric it counts,
// the event and log line it leaves and what the work queue does next. One function, so status is
// written in one place per round and every outcome is counted the same way.
// Pure. Must not: write the status, count, log or decide what to do with a pod (decide.ts does).
import type { ReconcileResult } from '../../api/handler.js';
import type { ResizeStatus } from '../../resize/agent-protocol.js';
import { AgentReasons } from '../../api/reasons.js';
import {
  RETRY_NOT_RUNNING_MS,
  RETRY_REFUSED_MS,
  isRefusal,
  reportResult,
  type ResizeResult,
  type StatusUpdate,
} from './decide.js';

/** What carrying out an Actuate action came to (resize-actuator.ts). */
export type ActuationOutcome =
  | { readonly kind: 'notRunning'; readonly missing: readonly string[] }
  | { readonly kind: 'notActuated'; readonly container: string; readonly resource: string }
  | { readonly kind: 'refused'; readonly message: string }
  | {
      readonly kind: 'applied';
      readonly applied: NonNullable<ResizeStatus['applied']>;
      readonly changed: boolean;
      readonly steps: number;
    }
  | { readonly kind: 'failed'; readonly message: string; readonly cause: unknown };

/** What a round did: nothing, a verdict reported, what was applied found still in place, or an actuation. */
export type ResizeOutcome =
  | { readonly kind: 'nothing'; readonly why: string; readonly retryAfterMs?: number }
  | { readonly kind: 'report'; readonly status: StatusUpdate; readonly retryAfterMs?: number }
  | { readonly kind: 'verified'; readonly applied: ResizeStatus['applied'] }
  | ActuationOutcome;

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn';
  readonly fields: Record<string, unknown>;
  readonly message: string;
}

/** The round's ending, for the reconciler to carry out in this order: status, metric, event, log, result. */
export interface Conclusion {
  /** The status to record; none when the round leaves the annotation as it is. */
  readonly status?: StatusUpdate;
  /** The resize counted, and whether only when the status write changed something (a verdict reported again is not counted again). */
  readonly metric?: { readonly result: ResizeResult; readonly onlyIfWritten: boolean };
  /** A Warning event on the pod, when the status was written. */
  readonly event?: { readonly reason: string; readonly message: string };
  readonly log?: LogLine & { readonly onlyIfWritten?: boolean };
  readonly result: ReconcileResult;
  /** The round failed: the reconciler throws this message, with `cause`, after recording the status. */
  readonly error?: string;
  readonly cause?: unknown;
}

const retryAfter = (ms: number | undefined): ReconcileResult => (ms ? { requeueAfterMs: ms } : undefined);

function concludeReport(status: StatusUpdate, retryAfterMs: number | undefined): Conclusion {
  const reason = status.reason ?? '';
  return {
    status,
    metric: { result: reportResult(status), onlyIfWritten: true },
    ...(isRefusal(reason)
      ? {
          event: {
            reason: `Resize${reason}`,
            message: `node agent refused the resize request: ${status.message ?? ''}`,
          },
        }
      : {}),
    log: {
      level: 'info',
      fields: { state: status.state, reason, message: status.message },
      message: 'resize not applied',
      onlyIfWritten: true,
    },
    result: retryAfter(retryAfterMs),
  };
}

function concludeActuation(outcome: ActuationOutcome): Conclusion {
  switch (outcome.kind) {
    case 'notRunning':
      return {
        status: {
          state: 'InProgress',
          reason: AgentReasons.ContainerNotRunning,
          message: `container ${outcome.missing.join(', ')} is not running`,
        },
        result: { requeueAfterMs: RETRY_NOT_RUNNING_MS },
      };
    case 'notActuated':
      return {
        status: {
          state: 'InProgress',
          reason: AgentReasons.NotActuated,
          message: `container ${outcome.container}: the runtime accepted the ${outcome.resource} update but the cgroup does not show it`,
        },
        metric: { result: 'error', onlyIfWritten: false },
        result: { requeue: true },
      };
    case 'refused':
      return {
        status: { state: 'InProgress', reason: AgentReasons.MemoryLimitBelowUsage, message: outcome.message },
        metric: { result: 'refused', onlyIfWritten: false },
        log: { level: 'warn', fields: { message: outcome.message }, message: 'resize refused' },
        result: { requeueAfterMs: RETRY_REFUSED_MS },
      };
    case 'applied':
      return {
        status: { state: '', applied: outcome.applied },
        metric: { result: outcome.changed ? 'applied' : 'unchanged', onlyIfWritten: false },
        log: { level: 'info', fields: { steps: outcome.steps, changed: outcome.changed }, message: 'resize applied' },
        result: undefined,
      };
    case 'failed':
      return {
        status: { state: 'InProgress', reason: AgentReasons.Error, message: outcome.message },
        metric: { result: 'error', onlyIfWritten: false },
        result: undefined,
        error: outcome.message,
        cause: outcome.cause,
      };
  }
}

/** The one place an outcome becomes a status, a metric, an event, a log line and the queue's next step. */
export function conclude(outcome: ResizeOutcome): Conclusion {
  switch (outcome.kind) {
    case 'nothing':
      return {
        log: { level: 'debug', fields: { why: outcome.why }, message: 'nothing to do' },
        result: retryAfter(outcome.retryAfterMs),
      };
    case 'report':
      return concludeReport(outcome.status, outcome.retryAfterMs);
    case 'verified':
      // Applied to these very containers: make sure the annotation says so (it is only a report).
      return { status: { state: '', applied: outcome.applied }, result: undefined };
    default:
      return concludeActuation(outcome);
  }
}
