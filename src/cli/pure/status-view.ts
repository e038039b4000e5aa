// The rollout status of one CloneSet as `kubectl tailor status` shows it, as a view model built
// from the CloneSet and its pods: counts, per-pod revision / readiness / in-place / resize state,
// what blocks the rollout and why, and a verdict (buildStatusView). Its text is status-render.ts.
// Pure: no I/O, no clock (`now` comes in), no process state. Must not: render text, decide exit
// codes, poll, or write to a terminal (plugin.ts does).
import type { RolloutDriver } from './driver.js';
import { defaultUpdateStrategy } from '../../api/defaults.js';
import {
  LABEL_CONTROLLER_REVISION_HASH,
  RESIZE_STATES,
  type CloneSetCondition,
  type ResizeState,
} from '../../api/types.js';
import { podCountsAsReady, whyPodCannotStart } from '../../workload/pure/pod-summary.js';
import { readUpdateState } from '../../inplace/pure/plan.js';
import { readinessGateCondition } from '../../inplace/pure/readiness-gate.js';
import { ProgressingReasons } from '../../api/reasons.js';
import type { Pod, Wire, WireCloneSet } from '../../api/wire.js';
import { podResizeView } from '../../resize/state.js';

export type Verdict = 'complete' | 'blocked' | 'progressing';

/** In-place update state from the InPlaceUpdateReady condition: False = Updating, True after an update = Done. */
export type InPlaceState = 'Updating' | 'Done' | '-';

export interface PodLine {
  name: string;
  /** Revision without the `<clone>-` prefix; "" when the pod has no revision label. */
  revision: string;
  /** Runs the CloneSet's update revision. */
  updated: boolean;
  ready: boolean;
  inPlace: InPlaceState;
  /** The pod's resize state (podResizeView); '-' when nothing is pending. */
  resize: ResizeState | '-';
  /** The resize's reason/message and age, when a resize is pending. */
  resizeDetail?: string;
  /** Something a person should look at: terminating, unschedulable, a container failing to start. */
  problem?: string;
  terminating: boolean;
}

export interface Blocker {
  /** Where it comes from: a condition type, or `pod <name>`. */
  source: string;
  reason: string;
  message: string;
  /**
   * May clear by itself on the controller's next attempt (FailedUpdate from an API error rather
   * than NotInPlaceUpdatable). A waiting caller should see it persist before calling it final.
   */
  transient: boolean;
}

export interface StatusView {
  namespace: string;
  name: string;
  strategy: string;
  generation: number;
  observedGeneration: number;
  /** spec.replicas. */
  desired: number;
  /** Pods that must run the update revision for the rollout to count as done (partition aware). */
  target: number;
  replicas: number;
  ready: number;
  updated: number;
  updatedReady: number;
  updateRevision: string;
  paused: boolean;
  /** Unfinished resizes by state, counted from the pods and status.resize (the larger of the two). */
  resize: Record<ResizeState, number>;
  pods: PodLine[];
  blockers: Blocker[];
  /** Not verdict-changing, but likely why a rollout is slow: failing containers, unschedulable pods, failed scaling. */
  warnings: string[];
  verdict: Verdict;
  /** One line saying why the verdict is what it is, kubectl rollout status style. */
  message: string;
  /** The controller that drives the workload's batches (driver.ts), when one does. */
  driver?: RolloutDriver;
}

type WireStatus = NonNullable<WireCloneSet['status']>;
type WireCondition = Wire<CloneSetCondition>;

const condition = (conditions: WireCondition[] | undefined, type: string): WireCondition | undefined =>
  conditions?.find((c) => c.type === type);

export function shortRevision(revision: string | undefined, cloneSetName: string): string {
  if (!revision) return '';
  return revision.startsWith(`${cloneSetName}-`) ? revision.slice(cloneSetName.length + 1) : revision;
}

/** kubectl-style age: 45s, 3m, 2h, 5d. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 2 * 3600) return `${Math.floor(s / 60)}m`;
  if (s < 2 * 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function podProblem(pod: Pod): string | undefined {
  if (pod.metadata?.deletionTimestamp) return 'Terminating';
  const cannotStart = whyPodCannotStart(pod);
  if (cannotStart) return cannotStart;
  if (pod.status?.phase === 'Failed') return `Failed${pod.status.reason ? `: ${pod.status.reason}` : ''}`;
  return undefined;
}

function inPlaceState(pod: Pod): InPlaceState {
  const gate = readinessGateCondition(pod);
  if (gate?.status === 'False') return 'Updating';
  const state = readUpdateState(pod);
  if (gate?.status === 'True' && state && state.revision === pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH])
    return 'Done';
  return '-';
}

/** Pods needing attention first, then pods still moving, then settled ones; by name within each. */
function podRank(p: PodLine): number {
  if (p.resize === 'Infeasible' || (p.problem && !p.terminating)) return 0;
  if (!p.updated || !p.ready || p.inPlace === 'Updating' || p.resize !== '-' || p.terminating) return 1;
  return 2;
}

/** What the pods themselves show: one line each, resize counts, Infeasible pods, problems. */
interface PodReading {
  lines: PodLine[];
  resize: Record<ResizeState, number>;
  unfinished: number;
  infeasible: { name: string; message: string }[];
  warnings: string[];
}

function readPods(pods: readonly Pod[], cloneSet: string, updateRevision: string, now: number): PodReading {
  const out: PodReading = {
    lines: [],
    resize: { Proposed: 0, InProgress: 0, Deferred: 0, Infeasible: 0 },
    unfinished: 0,
    infeasible: [],
    warnings: [],
  };
  for (const pod of pods) {
    const podName = pod.metadata?.name ?? '';
    const revision = pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH];
    const terminating = !!pod.metadata?.deletionTimestamp;
    const view = podResizeView(pod);
    const line: PodLine = {
      name: podName,
      revision: shortRevision(revision, cloneSet),
      updated: !!updateRevision && revision === updateRevision,
      ready: podCountsAsReady(pod),
      inPlace: inPlaceState(pod),
      resize: view.state ?? '-',
      terminating,
    };
    const detail = view.state ? resizeDetail(view, now) : '';
    if (detail) line.resizeDetail = detail;
    const problem = podProblem(pod);
    if (problem) line.problem = problem;
    out.lines.push(line);
    if (terminating) continue;
    if (view.state) out.resize[view.state]++;
    if (!view.done) out.unfinished++;
    if (view.state === 'Infeasible')
      out.infeasible.push({ name: podName, message: view.message ?? 'the node can never fit the new resources' });
    if (problem) out.warnings.push(`pod ${podName}: ${problem}`);
  }
  out.lines.sort((a, b) => podRank(a) - podRank(b) || a.name.localeCompare(b.name));
  return out;
}

function resizeDetail(view: ReturnType<typeof podResizeView>, now: number): string {
  const age = view.since ? formatAge(now - Date.parse(view.since)) : undefined;
  const said = [view.reason && view.reason !== view.state ? view.reason : undefined, view.message]
    .filter(Boolean)
    .join(': ');
  return [said, age ? `for ${age}` : undefined].filter(Boolean).join(', ');
}

/** A True condition of `type` as a blocker. */
function conditionBlocker(
  status: WireStatus,
  type: string,
  transient: (reason: string) => boolean,
): Blocker | undefined {
  const c = condition(status.conditions, type);
  if (c?.status !== 'True') return undefined;
  const reason = c.reason ?? type;
  return { source: type, reason, message: c.message ?? '', transient: transient(reason) };
}

/**
 * What blocks the rollout, judged only on status that describes the current spec: failed
 * updates, ResizeBlocked, RolloutBlocked (may clear when pods turn ready), Infeasible resizes the
 * strategy waits on, a missed progress deadline.
 */
function findBlockers(
  status: WireStatus,
  waitsOnInfeasible: boolean,
  reading: PodReading,
  resize: Record<ResizeState, number>,
): Blocker[] {
  const blockers = [
    conditionBlocker(status, 'FailedUpdate', (reason) => reason !== 'NotInPlaceUpdatable'),
    conditionBlocker(status, 'ResizeBlocked', () => false),
    conditionBlocker(status, 'RolloutBlocked', () => true),
  ].filter((b): b is Blocker => b !== undefined);
  if (waitsOnInfeasible) {
    const named = (pod: string): boolean => blockers.some((b) => b.message.includes(`${pod}:`));
    const fromStatus = (status.resize?.pods ?? [])
      .filter((p) => p.state === 'Infeasible')
      .map((p) => ({ name: p.name, message: p.message ?? 'the node can never fit the new resources' }));
    const seen = new Set<string>();
    for (const p of [...reading.infeasible, ...fromStatus]) {
      if (seen.has(p.name) || named(p.name)) continue;
      seen.add(p.name);
      blockers.push({
        source: `pod ${p.name}`,
        reason: 'Infeasible',
        message: `resize Infeasible: ${p.message}`,
        transient: false,
      });
    }
    if (blockers.length === 0 && resize.Infeasible > 0) {
      blockers.push({
        source: 'status.resize',
        reason: 'Infeasible',
        message: `${resize.Infeasible} pod(s) have an Infeasible resize`,
        transient: false,
      });
    }
  }
  const progressing = condition(status.conditions, 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === ProgressingReasons.DeadlineExceeded) {
    blockers.push({
      source: 'Progressing',
      reason: ProgressingReasons.DeadlineExceeded,
      message: progressing.message ?? '',
      transient: false,
    });
  }
  return blockers;
}

interface Progress {
  desired: number;
  target: number;
  replicas: number;
  updated: number;
  updatedReady: number;
  unfinishedResizes: number;
  paused: boolean;
}

/** Still moving: what the rollout waits for, first thing first. */
function progressMessage(p: Progress, resize: Record<ResizeState, number>): string {
  const pausedNote = p.paused ? 'rollout paused (updateStrategy.paused); ' : '';
  if (p.replicas < p.desired)
    return `${pausedNote}waiting for rollout to finish: ${p.replicas} of ${p.desired} pods exist`;
  if (p.updated < p.target)
    return `${pausedNote}waiting for rollout to finish: ${p.updated} of ${p.target} pods updated`;
  if (p.updatedReady < p.target)
    return `${pausedNote}waiting for rollout to finish: ${p.updatedReady} of ${p.target} updated pods are ready`;
  if (p.replicas > p.desired)
    return `waiting for rollout to finish: ${p.replicas - p.desired} old pod(s) pending termination`;
  if (p.unfinishedResizes > 0)
    return `waiting for ${p.unfinishedResizes} resize(s) to finish (${resizeCounts(resize) || 'node not caught up'})`;
  return `waiting for rollout to finish: ${p.updatedReady} of ${p.replicas} updated pods are ready`;
}

/** Per state, the larger of what the pods show and what status.resize counts. */
function largerResizeCounts(
  fromPods: Record<ResizeState, number>,
  fromStatus: WireStatus['resize'] | undefined,
): Record<ResizeState, number> {
  const counted = {
    Proposed: fromStatus?.proposed,
    InProgress: fromStatus?.inProgress,
    Deferred: fromStatus?.deferred,
    Infeasible: fromStatus?.infeasible,
  };
  return Object.fromEntries(
    RESIZE_STATES.map((state) => [state, Math.max(fromPods[state], counted[state] ?? 0)]),
  ) as Record<ResizeState, number>;
}

/** A failed scale first; Infeasible pods the strategy will recreate last. */
function addWarnings(
  warnings: string[],
  failedScale: CloneSetCondition | undefined,
  toBeRecreated: readonly { name: string }[],
): void {
  if (failedScale?.status === 'True')
    warnings.unshift(`FailedScale (${failedScale.reason ?? 'FailedScale'}): ${failedScale.message ?? ''}`);
  for (const p of toBeRecreated)
    warnings.push(
      `pod ${p.name}: resize Infeasible; resizeStrategy.onInfeasible Recreate replaces the pod with the new resources`,
    );
}

function progressOf(
  status: WireStatus,
  spec: Pick<Progress, 'desired' | 'target' | 'paused'>,
  unfinishedResizes: number,
): Progress {
  return {
    ...spec,
    replicas: status.replicas ?? 0,
    updated: status.updatedReplicas ?? 0,
    updatedReady: status.updatedReadyReplicas ?? 0,
    unfinishedResizes,
  };
}

/**
 * complete, blocked or progressing, with the sentence that says why. `complete`: the controller
 * observed the latest generation, every desired pod (or, when a partition holds pods back,
 * expectedUpdatedReplicas of them) runs the update revision and is ready, and no resize is
 * unfinished; `blocked`: FailedUpdate True, ResizeBlocked True, an Infeasible resize the strategy
 * waits on, or Progressing False ProgressDeadlineExceeded; otherwise `progressing`. Status written
 * for an older generation is never judged blocked or complete: it describes a spec the user has
 * since changed.
 */
function decideVerdict(
  cs: WireCloneSet,
  blockers: readonly Blocker[],
  p: Progress,
  resize: Record<ResizeState, number>,
): { verdict: Verdict; message: string } {
  const generation = cs.metadata?.generation ?? 0;
  const observed = cs.status?.observedGeneration ?? 0;
  if (cs.status === undefined)
    return { verdict: 'progressing', message: 'waiting for the controller to report status' };
  if (observed < generation)
    return {
      verdict: 'progressing',
      message: `waiting for the controller to observe generation ${generation} (status is for ${observed})`,
    };
  if (blockers.length > 0) {
    return {
      verdict: 'blocked',
      message: blockers.map((b) => `${b.source} (${b.reason})${b.message ? `: ${b.message}` : ''}`).join('; '),
    };
  }
  const { desired, target, replicas, updatedReady } = p;
  if (
    replicas === desired &&
    updatedReady >= target &&
    (target < desired || updatedReady === replicas) &&
    p.unfinishedResizes === 0
  ) {
    const revision = shortRevision(cs.status.updateRevision ?? '', cs.metadata?.name ?? '');
    const message =
      target < desired
        ? `partitioned roll out complete: ${updatedReady} of ${desired} pods run revision ${revision} and are ready (the partition holds ${desired - target} back)`
        : `successfully rolled out: ${desired} of ${desired} pods run revision ${revision} and are ready`;
    return { verdict: 'complete', message };
  }
  return { verdict: 'progressing', message: progressMessage(p, resize) };
}

export function buildStatusView(cs: WireCloneSet, pods: readonly Pod[], now: number): StatusView {
  const name = cs.metadata?.name ?? '';
  const status = cs.status ?? {};
  const strategy = defaultUpdateStrategy(cs.spec.updateStrategy);
  const desired = cs.spec.replicas ?? 1;
  const generation = cs.metadata?.generation ?? 0;
  const observedGeneration = status.observedGeneration ?? 0;
  const stale = cs.status === undefined || observedGeneration < generation;
  const expected = status.expectedUpdatedReplicas;
  const target = expected !== undefined && expected < desired ? Math.max(0, expected) : desired;
  const updateRevision = status.updateRevision ?? '';
  const paused = strategy.paused || condition(status.conditions, 'Progressing')?.reason === 'CloneSetPaused';
  // The strategy waits on an Infeasible resize (and raises ResizeBlocked) instead of recreating the pod.
  const waitsOnInfeasible = strategy.type === 'InPlaceOnly' || strategy.resizeStrategy.onInfeasible === 'Wait';

  const reading = readPods(pods, name, updateRevision, now);
  const warnings = reading.warnings;
  const statusResize = stale ? undefined : status.resize;
  const resize = largerResizeCounts(reading.resize, statusResize);

  const blockers = stale ? [] : findBlockers(status, waitsOnInfeasible, reading, resize);
  addWarnings(
    warnings,
    stale ? undefined : condition(status.conditions, 'FailedScale'),
    waitsOnInfeasible ? [] : reading.infeasible,
  );
  const progress = progressOf(
    status,
    { desired, target, paused },
    Math.max(reading.unfinished, statusResize?.resizing ?? 0, resize.Infeasible),
  );
  const { verdict, message } = decideVerdict(cs, blockers, progress, resize);
  const { replicas, updatedReady } = progress;

  return {
    namespace: cs.metadata?.namespace ?? '',
    name,
    strategy: strategy.type,
    generation,
    observedGeneration,
    desired,
    target,
    replicas,
    ready: status.readyReplicas ?? 0,
    updated: progress.updated,
    updatedReady,
    updateRevision,
    paused,
    resize,
    pods: reading.lines,
    blockers,
    warnings,
    verdict,
    message,
  };
}

/** The view with the controller that drives the workload's batches, when one does. */
export const withDriver = (view: StatusView, driver: RolloutDriver | undefined): StatusView =>
  driver ? { ...view, driver } : view;

/** "2 InProgress, 1 Deferred": the resize states that have pods, in RESIZE_STATES order. */
export function resizeCounts(resize: Record<ResizeState, number>): string {
  return RESIZE_STATES.filter((s) => resize[s] > 0)
    .map((s) => `${resize[s]} ${s}`)
    .join(', ');
}
