// The InPlaceStatefulSet as a workload kind (workload/pure/kind.ts, decision 88): its API names,
// the label on its revisions and pods, its view onto the engine (pure/view.ts) and its pods'
// identities: ordinals, ordered scaling, hostnames, retained claims that follow their template's
// storage, and its own status fields (pure/). Pure. Must not:
// perform I/O.
import { INPLACESTATEFULSET_OWNER } from '../api/owner.js';
import { INPLACESTATEFULSET_PLURAL, LABEL_INPLACESTATEFULSET } from '../api/stateful-types.js';
import { LABEL_INSTANCE_ID } from '../api/types.js';
import type { WorkloadKind } from '../workload/pure/kind.js';
import { isSetMember, retainedClaim, withStatefulIdentity } from './pure/identity.js';
import { claimOwnerOf, scaleDownClaimsOf } from './pure/retention.js';
import { claimResizes } from './pure/claim-expansion.js';
import { planOrdinalScale } from './pure/scale.js';
import { statefulStatus } from './pure/status.js';
import { statefulView } from './pure/view.js';

export const INPLACESTATEFULSET: WorkloadKind = {
  owner: INPLACESTATEFULSET_OWNER,
  plural: INPLACESTATEFULSET_PLURAL,
  controllerName: 'inplacestatefulset',
  informerPrefix: 'inplacestatefulset-',
  revisionLabel: LABEL_INPLACESTATEFULSET,
  podSelector: `${LABEL_INSTANCE_ID},${LABEL_INPLACESTATEFULSET}`,
  view: statefulView,
  identity: {
    planScale: planOrdinalScale,
    decorate: withStatefulIdentity,
    decorateClaim: retainedClaim,
    isMember: isSetMember,
    claimOwner: claimOwnerOf,
    scaleDownClaims: scaleDownClaimsOf,
    claimResizes,
  },
  status: statefulStatus,
};
