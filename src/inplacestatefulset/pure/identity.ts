// What an InPlaceStatefulSet's pods and claims carry beyond a CloneSet's (decision 88): the
// StatefulSet labels users and tools select on (`statefulset.kubernetes.io/pod-name`,
// `apps.kubernetes.io/pod-index`), the set's own label, a stable hostname in the governing
// Service's subdomain, claims owned by the set only as its retention policy says (retention.ts:
// under the native default, Retain, they outlive the pod and the set), and which orphans are its
// members. Pure. Must not: perform I/O.
import { LABEL_INSTANCE_ID } from '../../api/types.js';
import { LABEL_INPLACESTATEFULSET, LABEL_POD_INDEX, LABEL_STATEFULSET_POD_NAME } from '../../api/stateful-types.js';
import type { Pod, WireCloneSet } from '../../api/wire.js';
import type { Claim } from '../../workload/pure/claims.js';
import { ordinalOf } from './ordinals.js';
import { claimOwnerOf } from './retention.js';
import { statefulSpecOf } from './view.js';

export function withStatefulIdentity(pod: Pod, view: WireCloneSet): Pod {
  const name = pod.metadata?.name ?? '';
  const { serviceName } = statefulSpecOf(view);
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      labels: {
        ...pod.metadata?.labels,
        [LABEL_STATEFULSET_POD_NAME]: name,
        [LABEL_POD_INDEX]: pod.metadata?.labels?.[LABEL_INSTANCE_ID] ?? '',
        [LABEL_INPLACESTATEFULSET]: view.metadata?.name ?? '',
      },
    },
    spec: { containers: [], ...pod.spec, hostname: name, ...(serviceName ? { subdomain: serviceName } : {}) },
  };
}

/**
 * A pod is a member of the set, to adopt, when its name is `<set>-<ordinal>` and its instance id
 * is that ordinal (the engine reads the id): the native controller's membership test, by name.
 */
export function isSetMember(pod: Pod, view: WireCloneSet): boolean {
  const ordinal = ordinalOf(pod.metadata?.name ?? '', view.metadata?.name ?? '');
  return ordinal !== undefined && pod.metadata?.labels?.[LABEL_INSTANCE_ID] === String(ordinal);
}

/**
 * A claim as the set keeps it: the set's label added, and owned by the set only under whenDeleted
 * Delete (retention.ts), so under Retain it outlives its pod and the set.
 */
export function retainedClaim(claim: Claim, view: WireCloneSet): Claim {
  const { ownerReferences: _owned, ...metadata } = claim.metadata ?? {};
  const owner = claimOwnerOf(view);
  return {
    ...claim,
    metadata: {
      ...metadata,
      labels: { ...metadata.labels, [LABEL_INPLACESTATEFULSET]: view.metadata?.name ?? '' },
      ...(owner ? { ownerReferences: [owner] } : {}),
    },
  };
}
