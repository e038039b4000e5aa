// What a failed write means for the workload: a message that stays the same for as long as the
// refusal does (so the condition carrying it is written once, not once per attempt), and whether
// retrying soon can help. Pure. Must not: log, emit or decide the backoff itself.
import { KubeApiError } from '../../runtime/pure/api-error.js';
import { errorMessage } from '../../api/errors.js';

export interface FailureInfo {
  /** For people; the same for the same refusal, whatever pod it was about. */
  message: string;
  /** Retrying before something else changes cannot succeed (invalid object, namespace going away). */
  permanent: boolean;
}

/**
 * Describes `err` from an attempt to `what` (e.g. "create pods"). Names in `volatile` (generated
 * pod names) are replaced by `<pod>` so two attempts at the same thing read the same.
 */
export function describeFailure(what: string, err: unknown, volatile: readonly string[] = []): FailureInfo {
  const scrub = (text: string): string => volatile.reduce((t, name) => (name ? t.split(name).join('<pod>') : t), text);
  if (err instanceof KubeApiError) {
    const status = err.status;
    const code = err.statusCode;
    const detail = status?.message ?? (err.cause instanceof Error ? err.cause.message : 'no response');
    return {
      message: scrub(`${what}: ${code || 'no response'}${status?.reason ? ` ${status.reason}` : ''}: ${detail}`),
      permanent: isPermanent(err),
    };
  }
  return { message: scrub(`${what}: ${errorMessage(err)}`), permanent: false };
}

/**
 * 400 and 422 say the object itself is wrong; a 403 or 404 because the namespace is being
 * deleted or is gone cannot change either. Quota refusals (403 "exceeded quota"), conflicts,
 * throttling and server errors may pass and are not permanent.
 */
function isPermanent(err: KubeApiError): boolean {
  if (err.statusCode === 400 || err.statusCode === 422) return true;
  const message = err.status?.message ?? '';
  const terminating =
    /being terminated/.test(message) ||
    err.status?.details?.causes?.some((c) => c.reason === 'NamespaceTerminating') === true;
  if (err.statusCode === 403 && terminating) return true;
  return err.statusCode === 404 && err.method === 'POST';
}
