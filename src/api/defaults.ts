// Defaulting for CloneSet specs. Owns the default values (the CRD schema's, kept in step with
// crds/apps.tailor.dev_clonesets.yaml by test/unit/api/crd.test.ts, plus the ones the schema
// cannot express); it must not validate, read the cluster or mutate its input.
import type {
  CloneSet,
  CloneSetScaleStrategy,
  CloneSetSpec,
  CloneSetUpdateStrategy,
  InPlaceUpdateStrategy,
  IntOrString,
  ResizeAction,
  ResizeStrategy,
  UpdateStrategyType,
} from './types.js';

export const DEFAULT_REPLICAS = 1;
export const DEFAULT_UPDATE_STRATEGY_TYPE: UpdateStrategyType = 'ReCreate';
export const DEFAULT_PARTITION: IntOrString = 0;
export const DEFAULT_MAX_UNAVAILABLE: IntOrString = '20%';
export const DEFAULT_MAX_SURGE: IntOrString = 0;
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;
export const DEFAULT_MIN_READY_SECONDS = 0;
export const DEFAULT_GRACE_PERIOD_SECONDS = 0;
export const DEFAULT_DEFERRED_TIMEOUT_SECONDS = 300;
export const DEFAULT_IN_PROGRESS_TIMEOUT_SECONDS = 3600;

export type DefaultedResizeStrategy = Required<ResizeStrategy>;

export interface DefaultedUpdateStrategy extends CloneSetUpdateStrategy {
  type: UpdateStrategyType;
  partition: IntOrString;
  maxUnavailable: IntOrString;
  maxSurge: IntOrString;
  paused: boolean;
  inPlaceUpdateStrategy: Required<InPlaceUpdateStrategy>;
  resizeStrategy: DefaultedResizeStrategy;
}

export interface DefaultedCloneSetSpec extends CloneSetSpec {
  replicas: number;
  scaleStrategy: CloneSetScaleStrategy;
  updateStrategy: DefaultedUpdateStrategy;
  minReadySeconds: number;
  revisionHistoryLimit: number;
}

export interface DefaultedCloneSet extends CloneSet {
  spec: DefaultedCloneSetSpec;
}

/** The spec fields withDefaults fills in. */
type DefaultedField = 'replicas' | 'scaleStrategy' | 'updateStrategy' | 'minReadySeconds' | 'revisionHistoryLimit';
/** A CloneSet, typed or wire, with the spec fields withDefaults fills in present. */
export type Defaulted<T extends Defaultable> = T & { spec: T['spec'] & Pick<DefaultedCloneSetSpec, DefaultedField> };
/** Any CloneSet, typed or wire: what withDefaults reads of it. */
export interface Defaultable {
  spec: Pick<CloneSetSpec, DefaultedField>;
}

/**
 * The resize action when the user names none: InPlaceOnly never recreates a pod, so it waits
 * (and raises a condition); every other type recreates.
 */
export function defaultResizeAction(type: UpdateStrategyType): ResizeAction {
  return type === 'InPlaceOnly' ? 'Wait' : 'Recreate';
}

export function defaultUpdateStrategy(strategy: CloneSetUpdateStrategy | undefined): DefaultedUpdateStrategy {
  const given = strategy ?? {};
  const type = given.type ?? DEFAULT_UPDATE_STRATEGY_TYPE;
  const resize = given.resizeStrategy ?? {};
  return {
    ...given,
    type,
    partition: given.partition ?? DEFAULT_PARTITION,
    maxUnavailable: given.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE,
    maxSurge: given.maxSurge ?? DEFAULT_MAX_SURGE,
    paused: given.paused ?? false,
    inPlaceUpdateStrategy: {
      ...given.inPlaceUpdateStrategy,
      gracePeriodSeconds: given.inPlaceUpdateStrategy?.gracePeriodSeconds ?? DEFAULT_GRACE_PERIOD_SECONDS,
    },
    resizeStrategy: {
      ...resize,
      deferredTimeoutSeconds: resize.deferredTimeoutSeconds ?? DEFAULT_DEFERRED_TIMEOUT_SECONDS,
      inProgressTimeoutSeconds: resize.inProgressTimeoutSeconds ?? DEFAULT_IN_PROGRESS_TIMEOUT_SECONDS,
      onTimeout: resize.onTimeout ?? defaultResizeAction(type),
      onInfeasible: resize.onInfeasible ?? defaultResizeAction(type),
    },
  };
}

/**
 * A copy of `cloneSet` with every default filled in: the schema's (replicas 1, scaleStrategy {},
 * updateStrategy type ReCreate, partition 0, maxUnavailable "20%", maxSurge 0,
 * revisionHistoryLimit 10, resize timeouts 300 s / 3600 s), the zero values Kruise leaves out
 * (paused false, minReadySeconds 0, gracePeriodSeconds 0) and the strategy-dependent
 * onTimeout/onInfeasible.
 * The input is not modified and shares nothing mutable with the result. Works on a CloneSet in
 * either form, typed or as the API server sends it (defaulting touches only spec fields, none of
 * them dates). The schema carries every default Kruise's webhook applies (replicas,
 * revisionHistoryLimit, scaleStrategy and updateStrategy present, type, partition, maxUnavailable,
 * maxSurge), so a stored object reads as Kruise's does and the API server applies them on write
 * and on read; this lets the controller rely on every field regardless of where an object came
 * from (one stored before a default existed, a test fixture, a client-side dry run).
 */
export function withDefaults<T extends Defaultable>(cloneSet: T): Defaulted<T> {
  const copy = structuredClone(cloneSet);
  const spec = copy.spec;
  return {
    ...copy,
    spec: {
      ...spec,
      replicas: spec.replicas ?? DEFAULT_REPLICAS,
      scaleStrategy: spec.scaleStrategy ?? {},
      updateStrategy: defaultUpdateStrategy(spec.updateStrategy),
      minReadySeconds: spec.minReadySeconds ?? DEFAULT_MIN_READY_SECONDS,
      revisionHistoryLimit: spec.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT,
    },
  };
}
