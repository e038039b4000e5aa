// When a batch of routine per-pod news (EventRecorder.batch: "updated in place", "resize
// completed") is written as its summary, and what the summary says. Owns the timing rule only.
// Must not: write, or hold a timer.
//
// A summary waits until the news has gone quiet (no new pod for `quietMs`) or the batch has been
// open `maxMs`, whichever is first: a rollout that updates a pod every few seconds is one summary
// (or one per `maxMs`) instead of one per fixed window, which cost a 25-pod CloneSet about 18
// event writes in the fleet bench (0.73 per pod; 0.08 now). The first pod is still an event at once, and
// status, not events, is what tells the truth within a second (decision 99).

export interface BatchTiming {
  /** The summary is written once no new pod has joined the batch for this long. */
  quietMs: number;
  /** ... or once the batch has been open this long, however busy it is. */
  maxMs: number;
}

/**
 * Quiet for 30 s: a rollout's batches ended every 8 s on average in the fleet bench's bump, and a
 * 10 s quiet time still closed and reopened the summary between many of them (measured). client-go's
 * correlator aggregates over 10 minutes; a summary is never older than half that.
 */
export const DEFAULT_BATCH_TIMING: BatchTiming = { quietMs: 30_000, maxMs: 300_000 };

export interface BatchTimes {
  openedAt: number;
  /** When the last pod new to the batch joined it (openedAt for the first). */
  lastNewsAt: number;
}

/** When the batch's summary is due. */
export const summaryDueAt = (batch: BatchTimes, timing: BatchTiming): number =>
  Math.min(batch.lastNewsAt + timing.quietMs, batch.openedAt + timing.maxMs);

/** At most this many pods are named in one summary; the rest are counted. */
export const MAX_NAMED_SUBJECTS = 20;

/** "<what>: 3 pods: b, c, d" for the pods that joined after the first; undefined when none did. */
export function summaryMessage(what: string, later: readonly string[]): string | undefined {
  if (later.length === 0) return undefined;
  const named = later.slice(0, MAX_NAMED_SUBJECTS).join(', ');
  const more = later.length > MAX_NAMED_SUBJECTS ? ` and ${later.length - MAX_NAMED_SUBJECTS} more` : '';
  return `${what}: ${later.length} ${later.length === 1 ? 'pod' : 'pods'}: ${named}${more}`;
}
