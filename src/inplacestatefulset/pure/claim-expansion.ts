// Claims that follow their template's storage (docs/decisions/0098-claims-expand-in-place.md):
// under `volumeClaimUpdateStrategy: InPlace` a claim whose request is below its template's is
// raised to it once its pod is on the update revision, so a partition holds the claims of the pods
// it holds, and a rollback that keeps the larger size leaves them alone (a claim never shrinks).
// Also the per-template counts of `status.volumeClaims` (Advanced StatefulSet's). Pure. Must not:
// perform I/O, lower a claim, or touch a claim being deleted.
import { parseQuantity, toBytes } from '../../api/quantity.js';
import type { InPlaceStatefulSetSpec } from '../../api/stateful-types.js';
import type { VolumeClaimStatus } from '../../api/types.js';
import type { WireCloneSet } from '../../api/wire.js';
import type { Claim } from '../../workload/pure/claims.js';
import type { ClaimResize } from '../../workload/pure/kind.js';
import { isActive, type PodSummary } from '../../workload/pure/pod-state.js';

interface TemplateStorage {
  readonly name: string;
  readonly storage: string;
  readonly bytes: bigint;
}

/** Bytes of a quantity; undefined when absent or unreadable (the API server validated what it stored). */
function bytesOf(quantity: string | undefined): bigint | undefined {
  if (quantity === undefined) return undefined;
  try {
    return toBytes(parseQuantity(quantity));
  } catch {
    return undefined;
  }
}

/** The templates that request storage, with the request in bytes. */
function templatesWithStorage(view: WireCloneSet): TemplateStorage[] {
  return (view.spec?.volumeClaimTemplates ?? []).flatMap((t) => {
    const storage = t.spec.resources?.requests?.['storage'];
    const bytes = bytesOf(storage);
    return storage !== undefined && bytes !== undefined ? [{ name: t.metadata.name, storage, bytes }] : [];
  });
}

/** The claims by name, those being deleted left out. */
function liveClaims(claims: readonly Claim[]): Map<string, Claim> {
  return new Map(claims.filter((c) => !c.metadata?.deletionTimestamp).map((c) => [c.metadata?.name ?? '', c]));
}

/** A pod's claim of a template: `<template>-<set>-<ordinal>`, and the pod is `<set>-<ordinal>`. */
const claimOf = (claims: Map<string, Claim>, template: string, pod: PodSummary): Claim | undefined =>
  claims.get(`${template}-${pod.name}`);

const requestedBytes = (claim: Claim | undefined): bigint | undefined =>
  bytesOf(claim?.spec?.resources?.requests?.['storage']);

export const expandsInPlace = (view: WireCloneSet): boolean =>
  (view.spec as unknown as Partial<InPlaceStatefulSetSpec>).volumeClaimUpdateStrategy?.type === 'InPlace';

/**
 * The claims to raise this round: under InPlace, those of active pods on `updateRevision` whose
 * request is below their template's.
 */
export function claimResizes(
  view: WireCloneSet,
  pods: readonly PodSummary[],
  claims: readonly Claim[],
  updateRevision: string,
): ClaimResize[] {
  if (!expandsInPlace(view)) return [];
  const templates = templatesWithStorage(view);
  const byName = liveClaims(claims);
  return pods
    .filter((pod) => isActive(pod) && pod.revision === updateRevision)
    .flatMap((pod) =>
      templates.flatMap((t): ClaimResize[] => {
        const claim = claimOf(byName, t.name, pod);
        const requested = requestedBytes(claim);
        return claim && requested !== undefined && requested < t.bytes ? [{ claim, storage: t.storage }] : [];
      }),
    );
}

/**
 * Per template, the active pods whose claim requests at least the template's storage, and of
 * those the ones whose claim has it too. Empty without templates that request storage.
 */
export function volumeClaimsStatus(
  view: WireCloneSet,
  pods: readonly PodSummary[],
  claims: readonly Claim[],
): VolumeClaimStatus[] {
  const byName = liveClaims(claims);
  const active = pods.filter(isActive);
  return templatesWithStorage(view).map((t) => {
    const compatible = active
      .map((pod) => claimOf(byName, t.name, pod))
      .filter((claim) => (requestedBytes(claim) ?? -1n) >= t.bytes);
    const ready = compatible.filter((claim) => (bytesOf(claim?.status?.capacity?.['storage']) ?? -1n) >= t.bytes);
    return { volumeClaimName: t.name, compatibleReplicas: compatible.length, compatibleReadyReplicas: ready.length };
  });
}
