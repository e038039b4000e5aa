// The in-place readiness gate `apps.tailor.dev/InPlaceUpdateReady` (docs/architecture.md §4.5): the
// gate a CloneSet's pod template gets, the read of its condition, the predicates on it, and the
// condition the engine writes. False holds the pod out of service while its containers change;
// True lets the kubelet count it Ready again.
// Owns: every rule about that gate. Pure. Must not: write to the API (engine.ts does) or decide
// when to drain or complete (plan.ts does).
import type * as k8s from '@kubernetes/client-node';
import { podCondition } from '../../api/pod.js';
import { CONDITION_INPLACE_UPDATE_READY } from '../../api/types.js';
import type { Pod, Wire } from '../../api/wire.js';

type PodSpec = NonNullable<Pod['spec']>;
export type GateCondition = Wire<k8s.V1PodCondition>;

const hasGate = (spec: PodSpec | undefined): boolean =>
  (spec?.readinessGates ?? []).some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY);

/** The spec with the gate among its readiness gates, once; a gate the template already names is kept as it is. */
export function withReadinessGate(spec: PodSpec): PodSpec {
  if (hasGate(spec)) return spec;
  return {
    ...spec,
    readinessGates: [...(spec.readinessGates ?? []), { conditionType: CONDITION_INPLACE_UPDATE_READY }],
  };
}

/** The gate's condition on the pod, if it has been written. */
export function readinessGateCondition(pod: Pod): GateCondition | undefined {
  return podCondition(pod, CONDITION_INPLACE_UPDATE_READY);
}

/** An in-place update holds the pod out of service: its gate is False. */
export function heldByReadinessGate(pod: Pod): boolean {
  return readinessGateCondition(pod)?.status === 'False';
}

/** The pod was created with the gate and its condition is not written yet: the controller sets it True. */
export function needsReadinessGateCondition(pod: Pod): boolean {
  return hasGate(pod.spec) && readinessGateCondition(pod) === undefined;
}

/** The gate's condition as written to the pod's status. */
export type GateWrite = Record<string, string>;

/** The gate's condition as the engine writes it to the pod's status. */
export function readinessGateWrite(
  status: 'True' | 'False',
  lastTransitionTime: string,
  why?: { reason: string; message?: string },
): GateWrite {
  return { type: CONDITION_INPLACE_UPDATE_READY, status, ...why, lastTransitionTime };
}
