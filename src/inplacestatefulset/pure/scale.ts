// An InPlaceStatefulSet's scale decisions, as the native StatefulSet controller makes them
// (docs/decisions/0088-one-engine-two-kinds-a-kind-is-a-profile.md): the wanted ordinals get a pod
// each, an ended pod is deleted so its name comes back, and the pods outside the wanted ordinals go,
// highest first. `OrderedReady` creates the lowest missing ordinal only once every lower one is
// Running, Ready and available, and removes one pod at a time once every wanted one is;
// `Parallel` does all of it at once. A new pod below the partition (by position) takes the current
// revision, as the native controller's does. Pure. Must not: choose which pods update (the engine's
// update order does) or take pods out of service for an update.
import type { Pod } from '../../api/wire.js';
import { countsAsAvailable } from '../../workload/pure/pod-state.js';
import type { IdentityScaleInput, IdentityScalePlan } from '../../workload/pure/kind.js';
import type { RolloutLimits } from '../../workload/pure/limits.js';
import type { PodSummary } from '../../workload/pure/pod-state.js';
import { ordinalOf, reservedRanges, wantedOrdinals } from './ordinals.js';
import { statefulSpecOf } from './view.js';

const NOTHING: IdentityScalePlan = {
  create: 0,
  createAtCurrentRevision: 0,
  missing: 0,
  delete: [],
  cancelDelete: [],
  createIds: [],
  replace: [],
};

const nameOf = (pod: Pod): string => pod.metadata?.name ?? '';
const hasEnded = (pod: Pod): boolean => pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';

/** The set's pods by ordinal, and whether the pod of an ordinal serves (Running, available, not terminating). */
interface Slots {
  readonly wanted: readonly number[];
  readonly byOrdinal: ReadonlyMap<number, Pod>;
  readonly serving: (ordinal: number) => boolean;
  readonly ordered: boolean;
  readonly limits: RolloutLimits;
  /** Wanted ordinals whose pod exists and does not serve. */
  readonly unavailable: number;
  readonly summaryOf: (pod: Pod) => PodSummary | undefined;
}

function slotsOf(input: IdentityScaleInput): Slots {
  const { workload, pods } = input;
  const spec = statefulSpecOf(workload);
  const setName = workload.metadata?.name ?? '';
  const byOrdinal = new Map<number, Pod>();
  for (const pod of pods) {
    const ordinal = ordinalOf(nameOf(pod), setName);
    if (ordinal !== undefined) byOrdinal.set(ordinal, pod);
  }
  const summaryByName = new Map(input.summaries.map((s) => [s.name, s]));
  const serving = (ordinal: number): boolean => {
    const summary = summaryByName.get(nameOf(byOrdinal.get(ordinal) ?? {}));
    return summary !== undefined && !summary.terminating && summary.phase === 'Running' && countsAsAvailable(summary);
  };
  const wanted = wantedOrdinals(spec.start, workload.spec.replicas ?? 1, reservedRanges(spec.reserveOrdinals));
  return {
    wanted,
    byOrdinal,
    serving,
    ordered: spec.podManagementPolicy !== 'Parallel',
    limits: input.limits,
    unavailable: wanted.filter((o) => byOrdinal.has(o) && !serving(o)).length,
    summaryOf: (pod) => summaryByName.get(nameOf(pod)),
  };
}

export function planOrdinalScale(input: IdentityScaleInput): IdentityScalePlan {
  const slots = slotsOf(input);
  const { wanted, byOrdinal, ordered } = slots;
  const ended = wanted.flatMap((o) => {
    const pod = byOrdinal.get(o);
    return pod && hasEnded(pod) && !pod.metadata?.deletionTimestamp ? [nameOf(pod)] : [];
  });
  if (ended.length > 0) {
    const replace = (ordered ? ended.slice(0, 1) : ended).map((name) => ({ name, why: 'ended' as const }));
    return { ...NOTHING, replace };
  }
  const missing = wanted.filter((o) => !byOrdinal.has(o));
  if (missing.length > 0) return creating(slots, missing);
  const condemned = condemning(slots, input);
  return condemned.delete.length > 0 ? condemned : specified(slots);
}

/**
 * Wanted pods labelled for deletion are deleted, highest ordinal first, and come back under their
 * names; one that serves goes only while fewer than maxUnavailable wanted pods are out of service
 * (Advanced StatefulSet's specified delete; the partition does not hold it back).
 */
function specified({ wanted, byOrdinal, limits, unavailable, serving, summaryOf }: Slots): IdentityScalePlan {
  let out = unavailable;
  const replace: IdentityScalePlan['replace'][number][] = [];
  for (const ordinal of [...wanted].reverse()) {
    const pod = byOrdinal.get(ordinal);
    const summary = pod && summaryOf(pod);
    if (!pod || !summary?.specifiedDelete || summary.terminating) continue;
    if (serving(ordinal)) {
      if (out >= limits.maxUnavailable) break;
      out++;
    }
    replace.push({ name: nameOf(pod), why: 'specified' });
  }
  return { ...NOTHING, replace };
}

/**
 * The creates of one round: under OrderedReady the lowest missing ordinal once every lower one
 * serves; under Parallel the missing ones, as many as scaleStrategy.maxUnavailable leaves after
 * the wanted pods already out of service.
 */
function creating(slots: Slots, missing: readonly number[]): IdentityScalePlan {
  const { wanted, ordered, serving, limits } = slots;
  const { partition } = limits;
  const first = missing[0]!;
  const ready = !ordered || wanted.filter((o) => o < first).every(serving);
  const room = Math.max(0, limits.scaleMaxUnavailable - slots.unavailable);
  const creates = !ready ? [] : ordered ? [first] : missing.slice(0, room);
  // The lowest `partition` positions stay on the current revision (partition counts pods kept, decision 88).
  const position = new Map(wanted.map((o, i) => [o, i]));
  const atCurrent = creates.filter((o) => position.get(o)! < partition);
  const atUpdate = creates.filter((o) => position.get(o)! >= partition);
  return {
    ...NOTHING,
    create: creates.length,
    createAtCurrentRevision: atCurrent.length,
    missing: missing.length,
    createIds: [...atCurrent, ...atUpdate].map(String),
  };
}

/**
 * Pods outside the wanted ordinals (or with a name of no ordinal) leave, highest ordinal first:
 * all at once under Parallel. Under OrderedReady one at a time, once nothing terminates and every
 * wanted pod serves; a condemned pod that does not serve goes only when it is the lowest such pod,
 * as the native controller's "first unhealthy pod", so a set whose pods all fail stops shrinking.
 */
function condemning(slots: Slots, input: IdentityScaleInput): IdentityScalePlan {
  const setName = input.workload.metadata?.name ?? '';
  const ordinal = (pod: Pod): number => ordinalOf(nameOf(pod), setName) ?? -1;
  const wantedSet = new Set(slots.wanted);
  const condemned = input.pods
    .filter((p) => !p.metadata?.deletionTimestamp && !wantedSet.has(ordinal(p)))
    .sort((a, b) => ordinal(b) - ordinal(a));
  if (condemned.length === 0) return NOTHING;
  if (!slots.ordered) return { ...NOTHING, delete: condemned.map(nameOf) };
  const settled = !input.pods.some((p) => p.metadata?.deletionTimestamp) && slots.wanted.every(slots.serving);
  const target = condemned[0]!;
  const serves = (pod: Pod): boolean => slots.serving(ordinal(pod));
  const firstUnhealthy = [...condemned].reverse().find((p) => !serves(p));
  const mayGo = serves(target) || target === firstUnhealthy;
  return settled && mayGo ? { ...NOTHING, delete: [nameOf(target)] } : NOTHING;
}
