// What an InPlaceStatefulSet's claims follow under persistentVolumeClaimRetentionPolicy, as the
// native controller keeps it (docs/decisions/0093-claim-retention.md): under whenDeleted Delete each
// claim names the set as an owner, so the garbage collector deletes it with the set; under
// whenScaled Delete the claims of a pod a scale-down removes are deleted with that pod. Retain
// keeps both. Pure. Must not: perform I/O, or touch a claim of another set.
import type { Pod, WireCloneSet } from '../../api/wire.js';
import { LABEL_INSTANCE_ID } from '../../api/types.js';
import { claimName, type ClaimOwner } from '../../workload/pure/claims.js';
import { controllerRef } from '../../workload/pure/pods.js';
import type { InPlaceStatefulSetSpec } from '../../api/stateful-types.js';

type Policy = NonNullable<InPlaceStatefulSetSpec['persistentVolumeClaimRetentionPolicy']>;

const policyOf = (view: WireCloneSet): Policy =>
  (view.spec as unknown as Partial<InPlaceStatefulSetSpec> | undefined)?.persistentVolumeClaimRetentionPolicy ?? {};

/** The owner reference the set's claims carry under whenDeleted Delete; none under Retain. */
export function claimOwnerOf(view: WireCloneSet): ClaimOwner | undefined {
  if (policyOf(view).whenDeleted !== 'Delete') return undefined;
  // The pods' controller reference without `controller`: the set owns its claims, it does not control them.
  const { controller: _controller, ...owner } = controllerRef(view);
  return owner;
}

/** The claims that go with a pod a scale-down removes: its templates' claims under whenScaled Delete, else none. */
export function scaleDownClaimsOf(pod: Pod, view: WireCloneSet): string[] {
  if (policyOf(view).whenScaled !== 'Delete') return [];
  const ordinal = pod.metadata?.labels?.[LABEL_INSTANCE_ID] ?? '';
  if (ordinal === '') return [];
  return (view.spec?.volumeClaimTemplates ?? []).map((t) =>
    claimName(t.metadata.name, view.metadata?.name ?? '', ordinal),
  );
}
