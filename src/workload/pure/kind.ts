// What makes a workload kind a kind, for the one engine every kind runs through
// (docs/decisions/0088-one-engine-two-kinds-a-kind-is-a-profile.md): its API names, the label its
// revisions carry, the pods its controller caches, how its object reads as the engine's (the
// CloneSet shape, defaults applied) and, for a kind whose pods have identities, the identity rules.
// The kinds' folders (src/cloneset/, src/inplacestatefulset/) each give one; the engine never names
// a kind. Pure. Must not: perform I/O or import a kind's folder.
import type { OwnerKind } from '../../api/owner.js';
import type { CloneSetStatus } from '../../api/types.js';
import type { Pod, WireCloneSet } from '../../api/wire.js';
import type { DefaultedWireCloneSet } from './pods.js';
import type { PodSummary } from './pod-state.js';
import type { ScalePlan } from './scale.js';
import type { RolloutLimits } from './limits.js';
import type { Claim, ClaimOwner } from './claims.js';
import type { IsMember } from './adoption.js';

export interface WorkloadKind {
  /** The kind's group and kind, as its pods' controller references name it. */
  readonly owner: OwnerKind;
  /** The resource name, as in `/apis/<group>/<version>/namespaces/<ns>/<plural>`. */
  readonly plural: string;
  /** The controller's name, in metrics and logs; also prefixes the informers of a kind after the first. */
  readonly controllerName: string;
  /** Prefix of its informers' names ('' for the CloneSet, whose names predate a second kind). */
  readonly informerPrefix: string;
  /**
   * The label naming the workload on its ControllerRevisions (and what its revision informer
   * selects); a kind with identities labels its claims with it too.
   */
  readonly revisionLabel: string;
  /** The label selector of the pods its controller caches: its own kind's pods, no other's. */
  readonly podSelector: string;
  /**
   * The object as the engine reads it: the CloneSet shape with every default applied. Applied once,
   * to the object as stored (the caches keep that): a view is not a stored object, and a view of a
   * view loses what the kind's own fields said.
   */
  readonly view: (object: WireCloneSet) => DefaultedWireCloneSet;
  /** Pods with identities (names, ordinals, hostnames) of the kind's choosing; absent: random instance ids. */
  readonly identity?: PodIdentity;
  /** The kind's own status fields, added to the engine's status; absent: none. */
  readonly status?: KindStatus;
}

/**
 * The engine's status with the kind's own fields added (a new object), from the pods the status
 * counted, the claims labelled with the workload's name (a kind with identities; else none) and
 * the workload (its view).
 */
export type KindStatus = (
  status: CloneSetStatus,
  pods: readonly PodSummary[],
  claims: readonly Claim[],
  workload: WireCloneSet,
) => CloneSetStatus;

/** Raise a claim's storage request to `storage`. */
export interface ClaimResize {
  readonly claim: Claim;
  readonly storage: string;
}

/** What scaling a kind with pod identities reads: the workload (its view), its pods, and the revisions. */
export interface IdentityScaleInput {
  readonly workload: DefaultedWireCloneSet;
  readonly pods: readonly Pod[];
  readonly summaries: readonly PodSummary[];
  /** The spec's limits, resolved once for the round (partition, maxUnavailable, scaleStrategy.maxUnavailable). */
  readonly limits: RolloutLimits;
  readonly now: number;
}

/** A scale plan whose creates carry the instance id (the pod's name suffix) each must take, in order. */
export interface IdentityScalePlan extends ScalePlan {
  /** The ids of the `create` pods, current-revision ones (`createAtCurrentRevision`) first. */
  readonly createIds: readonly string[];
  /** Pods to delete so that their identity comes back as a new pod: ended ones, or ones specified for deletion. */
  readonly replace: readonly { readonly name: string; readonly why: 'ended' | 'specified' }[];
}

export interface PodIdentity {
  /** The kind's own scale decisions, in place of the CloneSet's arithmetic (scale.ts). */
  readonly planScale: (input: IdentityScaleInput) => IdentityScalePlan;
  /** A new pod with the kind's identity added (labels, hostname); returns a new object. */
  readonly decorate: (pod: Pod, workload: WireCloneSet) => Pod;
  /** A new claim as the kind keeps it (its owners: what outlives what); returns a new object. */
  readonly decorateClaim: (claim: Claim, workload: WireCloneSet) => Claim;
  /**
   * The owner reference every claim of the workload carries (its retention on delete), or none;
   * each round puts it on, or takes it off, the claims labelled with the workload's name.
   */
  readonly claimOwner: (workload: WireCloneSet) => ClaimOwner | undefined;
  /** Names of the claims deleted with a pod that a scale-down removes (its retention on scale-down). */
  readonly scaleDownClaims: (pod: Pod, workload: WireCloneSet) => string[];
  /** The claims (labelled with the workload's name) whose storage this round raises to their template's. */
  readonly claimResizes: (
    workload: WireCloneSet,
    pods: readonly PodSummary[],
    claims: readonly Claim[],
    updateRevision: string,
  ) => ClaimResize[];
  /** An orphan the selector matches is the workload's to adopt only when this says so (its name). */
  readonly isMember: IsMember;
}
