// The upkeep of every CloneSet round (planner.ts): finished in-place updates settled or withdrawn,
// the next container batch of an update under way (decision 21), the gate held False for a hook
// that marks pods not ready, new pods' gates marked ready, and stale resize requests rerouted to
// the kubelet. Pure. Must not: take a pod out of service (the planner's budget decides that).
import type { LifecycleState } from '../../api/types.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../api/types.js';
import type { Pod } from '../../api/wire.js';
import { rfc3339Seconds } from '../../api/time.js';
import {
  planNextContainerBatch,
  readUpdateState,
  RESTART_OVERDUE_MS,
  restartRequestedAt,
  settleInPlaceUpdate,
  type Settlement,
} from '../../inplace/pure/plan.js';
import { needsReadinessGateCondition, readinessGateCondition } from '../../inplace/pure/readiness-gate.js';
import { heldNotReady, lifecycleStateOf, notReadyWrite } from './lifecycle.js';
import { rerouteToKubelet } from './resizes.js';
import { backendOf, earliest, nameOf } from './plan-input.js';
import type { Round } from './round.js';

/** Every round: settle finished in-place updates, mark new pods' gates, reroute stale requests. */
export function planUpkeep(round: Round): void {
  const selected = new Set(round.update.toUpdate);
  // A pod this round already deletes, moves or updates gets no gate write (settle, next batch,
  // gate ready) besides: the two could race (a hook's gate False against a settle's True). It
  // waits for the next round, which that write's own watch event starts.
  const written = new Set(round.intents.flatMap((i) => ('pod' in i ? [nameOf(i.pod)] : [])));
  const deleted = new Set(round.intents.flatMap((i) => (i.kind === 'delete' ? [nameOf(i.pod)] : [])));
  for (const pod of round.pods) {
    if (!deleted.has(nameOf(pod))) planReroute(round, pod);
    if (written.has(nameOf(pod)) || planHoldNotReady(round, pod)) continue;
    const settlement = planSettlement(round, pod, selected.has(nameOf(pod)));
    if (settlement === 'pending') planPendingUpdate(round, pod, selected.has(nameOf(pod)));
    if (!pod.metadata?.deletionTimestamp && needsReadinessGateCondition(pod))
      round.intents.push({ kind: 'markGateReady', pod });
  }
}

/** A resize request the agent holds for a pod whose kubelet now resizes: sent to the kubelet instead. */
function planReroute(round: Round, pod: Pod): void {
  const reroute = rerouteToKubelet(pod, backendOf(round.input, pod));
  if (reroute && !pod.metadata?.deletionTimestamp) round.intents.push({ kind: 'reroute', pod, ...reroute });
}

/** A hook that marks the pod not ready holds the gate False every round, not only at the move. True: held. */
function planHoldNotReady(round: Round, pod: Pod): boolean {
  const state = lifecycleStateOf(pod);
  if (
    !heldNotReady(round.cs.spec.lifecycle, state) ||
    pod.metadata?.deletionTimestamp ||
    readinessGateCondition(pod)?.status === 'False'
  )
    return false;
  const at = rfc3339Seconds(round.input.now);
  round.intents.push({
    kind: 'holdNotReady',
    pod,
    state: state as LifecycleState,
    at,
    notReady: notReadyWrite(state, at),
  });
  return true;
}

/** Finishes (or withdraws) the pod's in-place update when it is done; returns where the update stands. */
function planSettlement(round: Round, pod: Pod, selected: boolean): Settlement {
  let settlement = settleInPlaceUpdate(pod, selected);
  // A hook that marks the pod not ready holds the gate False itself: nothing to withdraw.
  if (settlement === 'undrain' && heldNotReady(round.cs.spec.lifecycle, lifecycleStateOf(pod))) settlement = 'none';
  if (settlement === 'complete' || settlement === 'undrain') round.intents.push({ kind: 'settle', pod, settlement });
  return settlement;
}

/** An in-place update under way: its next container batch (decision 0021), and a look again when a restart is overdue. */
function planPendingUpdate(round: Round, pod: Pod, selected: boolean): void {
  const { now } = round.input;
  if (!selected) {
    const podTemplate = round.input.revisions.templates.get(
      pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '',
    );
    const nextBatch = planNextContainerBatch(pod, podTemplate, now, backendOf(round.input, pod));
    if (nextBatch) round.intents.push({ kind: 'patch', pod, step: nextBatch });
  }
  // Look again when a restart still waiting would be overdue, to say so (RolloutBlocked).
  const update = readUpdateState(pod);
  const overdueAt = (update ? restartRequestedAt(update) : NaN) + RESTART_OVERDUE_MS;
  if (overdueAt > now) round.wakeAt = earliest(round.wakeAt, overdueAt);
}
