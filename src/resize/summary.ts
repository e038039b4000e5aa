// The CloneSet's status.resize (docs/architecture.md §4.2 Status, conditions and printer columns)
// from the resize views of its pods: a count per
// state, `resizing` (proposed + inProgress + deferred: resizes that may still finish, the
// RESIZING printer column), and the unfinished pods, oldest `since` first (pods without one
// last, then by name), at most MAX_RESIZE_STATUS_PODS of them; `pods` is left out when empty.
// Owns that shape and order. Must not: do I/O, decide outcomes, or drop counts — the counts cover
// every pod even when the list is cut.
import { MAX_RESIZE_STATUS_PODS, type CloneSetResizePod, type CloneSetResizeStatus } from '../api/types.js';
import type { ResizeView } from './view.js';

export interface ResizeSummaryEntry {
  name: string;
  view: Readonly<ResizeView>;
}

/** Epoch ms of an RFC 3339 time, or +Infinity when absent or unreadable (sorts last). */
function sinceKey(since: string | undefined): number {
  const t = since === undefined ? Number.NaN : Date.parse(since);
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
}

export function summarizeResizes(entries: readonly ResizeSummaryEntry[]): CloneSetResizeStatus {
  const counts = { Proposed: 0, InProgress: 0, Deferred: 0, Infeasible: 0 };
  const unfinished: { pod: CloneSetResizePod; key: number }[] = [];
  for (const { name, view } of entries) {
    if (view.done || view.state === undefined) continue;
    counts[view.state] += 1;
    const pod: CloneSetResizePod = { name, state: view.state };
    if (view.reason) pod.reason = view.reason;
    if (view.message) pod.message = view.message;
    if (view.since) pod.since = view.since;
    unfinished.push({ pod, key: sinceKey(view.since) });
  }
  unfinished.sort((a, b) =>
    a.key === b.key ? (a.pod.name < b.pod.name ? -1 : a.pod.name > b.pod.name ? 1 : 0) : a.key < b.key ? -1 : 1,
  );

  const status: CloneSetResizeStatus = {
    resizing: counts.Proposed + counts.InProgress + counts.Deferred,
    proposed: counts.Proposed,
    inProgress: counts.InProgress,
    deferred: counts.Deferred,
    infeasible: counts.Infeasible,
  };
  if (unfinished.length > 0) status.pods = unfinished.slice(0, MAX_RESIZE_STATUS_PODS).map((u) => u.pod);
  return status;
}
