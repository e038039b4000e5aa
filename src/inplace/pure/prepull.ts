// Whether a pod about to be drained for new images should wait for its node to pull them first
// (docs/decisions/0052-images-pulled-before-the-drain.md). The node agent reports each image as
// Pulling, Pulled or Failed on its Node (api/prepull.ts); the pod leaves service only once every
// new image is Pulled, has Failed (the kubelet will say why, as without pre-pull), or has been
// pulling for longer than the timeout. A node without the report has no agent pre-pulling, and a
// node whose agent has not listed an image within ACK_GRACE_MS of the revision's creation is
// treated the same: nothing waits on what will not come.
// Pure. Must not: do I/O, or delay anything but the drain of a pod whose images change.
import { reportedPull, type PulledImages } from '../../api/prepull.js';
import { EventReasons } from '../../api/reasons.js';

/** How long after a revision appears the controller waits for the agent to list its images. */
export const ACK_GRACE_MS = 5_000;
/** Default bound on the wait for one image, from when the agent started its pull. */
export const DEFAULT_PREPULL_TIMEOUT_MS = 120_000;

export interface PrePullTarget {
  /** The report of the pod's node; undefined when no agent pre-pulls there. */
  readonly report: PulledImages | undefined;
  /** When the target revision was created (ms), when the cache has it. */
  readonly revisionCreatedAt: number | undefined;
  readonly timeoutMs: number;
}

/** An image the drain goes ahead without, and why (reported as an event on the pod). */
export interface NotPrePulled {
  readonly image: string;
  readonly reason: typeof EventReasons.ImagePrePullFailed | typeof EventReasons.ImagePrePullTimedOut;
  readonly message: string;
}

export type PrePullVerdict =
  { readonly wait: true; readonly untilMs: number } | { readonly wait: false; readonly notPrePulled: NotPrePulled[] };

/** The verdict for a pod whose drain would start now to run `images`. */
export function prePullVerdict(images: readonly string[], target: PrePullTarget, now: number): PrePullVerdict {
  const notPrePulled: NotPrePulled[] = [];
  if (target.report === undefined) return { wait: false, notPrePulled };
  let untilMs: number | undefined;
  const waitUntil = (deadline: number): void => {
    untilMs = Math.min(untilMs ?? deadline, deadline);
  };
  for (const image of new Set(images)) {
    const pull = reportedPull(target.report, image);
    if (pull === undefined) {
      const deadline = (target.revisionCreatedAt ?? now) + ACK_GRACE_MS;
      if (now < deadline) waitUntil(deadline);
      else
        notPrePulled.push({
          image,
          reason: EventReasons.ImagePrePullTimedOut,
          message: `the node's agent did not start pulling ${image}`,
        });
    } else if (pull.state === 'Failed') {
      notPrePulled.push({
        image,
        reason: EventReasons.ImagePrePullFailed,
        message: `pre-pull of ${image} failed: ${pull.message ?? 'no message'}`,
      });
    } else if (pull.state === 'Pulling') {
      // A start the controller's clock has not reached yet (node clock skew) counts from now.
      const deadline = Math.min(Date.parse(pull.since), now) + target.timeoutMs;
      if (now < deadline) waitUntil(deadline);
      else
        notPrePulled.push({
          image,
          reason: EventReasons.ImagePrePullTimedOut,
          message: `${image} not pulled within ${target.timeoutMs / 1000}s`,
        });
    }
  }
  return untilMs === undefined ? { wait: false, notPrePulled } : { wait: true, untilMs };
}
