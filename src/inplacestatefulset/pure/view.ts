// An InPlaceStatefulSet as the workload engine reads it (workload/pure/kind.ts `view`): the
// CloneSet shape with every default applied, its StatefulSet fields mapped onto the engine's
// (decision 88): `rollingUpdate.podUpdatePolicy` is the update type, `OnDelete` the CloneSet's
// OnDelete, `rollingUpdate.{partition, maxUnavailable, paused, inPlaceUpdateStrategy,
// minReadySeconds}` their CloneSet namesakes, no surge, and the update order highest ordinal first
// unless `unorderedUpdate.priorityStrategy` says otherwise. The identity fields (`serviceName`,
// `ordinals`, `reserveOrdinals`, `podManagementPolicy`) stay in the spec for statefulSpecOf.
// Pure. Must not: perform I/O.
import {
  LABEL_POD_INDEX,
  ROLLING_UPDATE_DEFAULTS,
  withStatefulDefaults,
  type InPlaceStatefulSet,
  type InPlaceStatefulSetSpec,
  type StatefulUpdateStrategy,
} from '../../api/stateful-types.js';
import type { CloneSetUpdateStrategy, IntOrString, UpdatePriorityStrategy } from '../../api/types.js';
import type { Wire, WireCloneSet } from '../../api/wire.js';
import { defaulted, type DefaultedWireCloneSet } from '../../workload/pure/pods.js';

export type WireInPlaceStatefulSet = Wire<InPlaceStatefulSet>;

/** The native order: the pod with the highest `apps.kubernetes.io/pod-index` first. */
export const HIGHEST_ORDINAL_FIRST: UpdatePriorityStrategy = { orderPriority: [{ orderedKey: LABEL_POD_INDEX }] };

export function statefulView(object: WireCloneSet): DefaultedWireCloneSet {
  // Defaulting touches spec fields only, none of them dates: the wire object reads as the typed one.
  const set = withStatefulDefaults(object as unknown as InPlaceStatefulSet) as unknown as WireInPlaceStatefulSet;
  const { updateStrategy, scaleStrategy, minReadySeconds, ...spec } = set.spec;
  const rolling = updateStrategy?.rollingUpdate ?? {};
  const engine = {
    apiVersion: set.apiVersion,
    kind: set.kind,
    metadata: set.metadata,
    ...(set.status ? { status: set.status } : {}),
    spec: {
      ...spec,
      minReadySeconds: rolling.minReadySeconds ?? minReadySeconds ?? 0,
      scaleStrategy:
        scaleStrategy?.maxUnavailable !== undefined
          ? { maxUnavailable: roundedDown(scaleStrategy.maxUnavailable, spec.replicas ?? 1) }
          : {},
      updateStrategy: engineStrategy(updateStrategy, spec.replicas ?? 1),
    },
  };
  return defaulted(engine);
}

/** The CloneSet update strategy an InPlaceStatefulSet's reads as: no surge, highest ordinal first by default. */
function engineStrategy(strategy: StatefulUpdateStrategy | undefined, replicas: number): CloneSetUpdateStrategy {
  const rolling = { ...ROLLING_UPDATE_DEFAULTS, paused: false, ...strategy?.rollingUpdate };
  return {
    type: strategy?.type === 'OnDelete' ? 'OnDelete' : rolling.podUpdatePolicy,
    partition: rolling.partition,
    maxUnavailable: roundedDown(rolling.maxUnavailable, replicas),
    maxSurge: 0,
    paused: rolling.paused,
    priorityStrategy: rolling.unorderedUpdate?.priorityStrategy ?? HIGHEST_ORDINAL_FIRST,
    ...(rolling.inPlaceUpdateStrategy ? { inPlaceUpdateStrategy: rolling.inPlaceUpdateStrategy } : {}),
    ...(strategy?.resizeStrategy ? { resizeStrategy: strategy.resizeStrategy } : {}),
  };
}

/**
 * A maxUnavailable percentage as Advanced StatefulSet resolves it: of replicas, rounded down, at
 * least 1 (the engine rounds a CloneSet's up); an integer stands.
 */
function roundedDown(value: IntOrString, replicas: number): IntOrString {
  const percent = typeof value === 'string' ? /^(\d+)%$/.exec(value) : null;
  return percent ? Math.max(1, Math.floor((replicas * Number(percent[1])) / 100)) : value;
}

/** The identity fields of the set behind a view, defaulted. */
export interface StatefulIdentitySpec {
  readonly start: number;
  readonly reserveOrdinals?: readonly IntOrString[];
  readonly podManagementPolicy: 'OrderedReady' | 'Parallel';
  readonly serviceName?: string;
}

export function statefulSpecOf(view: WireCloneSet): StatefulIdentitySpec {
  const spec = view.spec as unknown as Partial<InPlaceStatefulSetSpec>;
  return {
    start: spec.ordinals?.start ?? 0,
    ...(spec.reserveOrdinals ? { reserveOrdinals: spec.reserveOrdinals } : {}),
    podManagementPolicy: spec.podManagementPolicy === 'Parallel' ? 'Parallel' : 'OrderedReady',
    ...(spec.serviceName ? { serviceName: spec.serviceName } : {}),
  };
}
