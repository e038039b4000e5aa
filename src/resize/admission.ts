// The API server's own verdict on a resize (Kubernetes ≥ 1.36): its PodResizeValidator admission
// refuses a `pods/resize` whose requests exceed the node's allocatable, or on a node whose OS
// cannot resize, with 403 Forbidden and a status cause naming why (NodeCapacity,
// UnsupportedPlatform). That is the node's Infeasible, said before the kubelet sees it: such a
// resize is never retried; the CloneSet's onInfeasible decides (docs/decisions/0014-resize-refused-at-admission.md).
// Pure. Must not: do I/O or decide the outcome.
import { rfc3339Seconds } from '../api/time.js';
import type { ResizeRefusal } from '../api/types.js';

/** Status causes (their `reason` on the wire) that make a refused resize Infeasible. */
const INFEASIBLE_CAUSES: ReadonlySet<string> = new Set(['NodeCapacity', 'UnsupportedPlatform']);

/** What of the API server's answer this reads: its code and Status. */
export interface RefusedAnswer {
  statusCode: number;
  status?: { message?: string; details?: { causes?: { reason?: string; message?: string }[] } } | undefined;
}

/** The refusal when the API server refused the resize for good; undefined for any other failure. */
export function infeasibleAtAdmission(answer: RefusedAnswer, now: number): ResizeRefusal | undefined {
  if (answer.statusCode !== 403) return undefined;
  const cause = answer.status?.details?.causes?.find((c) => INFEASIBLE_CAUSES.has(c.reason ?? ''))?.reason;
  if (cause === undefined) return undefined;
  return {
    cause,
    message: (answer.status?.message ?? 'refused at admission').slice(0, 1024),
    at: rfc3339Seconds(now),
  };
}
