// Which CloneSets a change of a namespace's admission limits wakes. A CloneSet whose pod writes
// the API server refused (a ResourceQuota full, a LimitRange it breaks) backs off, up to 1000 s;
// when the quota or limit range that refused it changes or goes, it is looked at at once instead
// of after its backoff (docs/decisions/0013-bounded-work.md). Only spec changes and deletions
// wake: a quota's status moves with every pod of its namespace, and that must not become a loop.
// Must not: read the API or decide anything about the CloneSets it wakes.
import { sameJSON } from '../../api/json.js';
import { ConditionReasons } from '../../api/reasons.js';
import { CloneSetConditionTypes as Conditions } from '../../api/types.js';
import type { KubeObject, WireCloneSet } from '../../api/wire.js';
import type { InformerHandler, KeyQueue } from '../../api/handler.js';

/** An object of the namespace's admission limits, as cached: its spec is what matters. */
export type AdmissionLimit = KubeObject & { spec?: unknown };

const REFUSAL_CONDITIONS: ReadonlySet<string> = new Set([Conditions.FailedScale, Conditions.FailedUpdate]);
const REFUSAL_REASONS: ReadonlySet<string> = new Set([ConditionReasons.ApiRefused, ConditionReasons.ApiRejected]);

/** The CloneSet says the API server refuses its pod writes. */
export const writesRefused = (cs: WireCloneSet): boolean =>
  (cs.status?.conditions ?? []).some(
    (c) => REFUSAL_CONDITIONS.has(c.type) && c.status === 'True' && REFUSAL_REASONS.has(c.reason ?? ''),
  );

/** Keeps what the handler compares: the spec (a quota's status is rewritten with every pod). */
export const trimAdmissionLimit = (obj: AdmissionLimit): AdmissionLimit => ({
  metadata: {
    name: obj.metadata?.name,
    namespace: obj.metadata?.namespace,
    resourceVersion: obj.metadata?.resourceVersion,
  },
  spec: obj.spec,
});

/**
 * Wakes the keys `refusedIn(namespace)` names when a ResourceQuota or LimitRange of that namespace
 * is created, deleted, or has its spec changed.
 */
export function wakeRefusedOnLimitChange(
  queue: KeyQueue,
  refusedIn: (namespace: string) => readonly string[],
): InformerHandler<AdmissionLimit> {
  const wake = (obj: AdmissionLimit): void => {
    for (const key of refusedIn(obj.metadata?.namespace ?? '')) queue.add(key);
  };
  return {
    onAdd: wake,
    onUpdate: (old, obj) => {
      if (!sameJSON(old.spec, obj.spec)) wake(obj);
    },
    onDelete: wake,
  };
}
