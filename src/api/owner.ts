// Which controller owns an object: one rule for the controller's handlers and indexes
// (runtime/handlers.ts) and the node agent's trust check (agent/pure/authorize.ts). Kind alone is not
// enough: another group's "CloneSet" (OpenKruise's) is not ours. Pure; must not do I/O.
import { API_GROUP, CLONESET_KIND } from './types.js';
import { INPLACESTATEFULSET_KIND } from './stateful-types.js';

/** The kind of a controlling owner: its API group ("" for the core group) and kind. */
export interface OwnerKind {
  group: string;
  kind: string;
}

/** What owner matching reads of an owner reference (client-node's V1OwnerReference fits). */
export interface OwnerReferenceLike {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
}

/** What owns a CloneSet's pods and revisions: a controller reference of this group and kind. */
export const CLONESET_OWNER: OwnerKind = { group: API_GROUP, kind: CLONESET_KIND };

/** What owns an InPlaceStatefulSet's pods and revisions. */
export const INPLACESTATEFULSET_OWNER: OwnerKind = { group: API_GROUP, kind: INPLACESTATEFULSET_KIND };

/** Every workload kind of ours: what the node agent serves (decision 88). */
export const WORKLOAD_OWNERS: readonly OwnerKind[] = [CLONESET_OWNER, INPLACESTATEFULSET_OWNER];

const groupOf = (apiVersion: string | undefined): string => {
  const slash = (apiVersion ?? '').indexOf('/');
  return slash < 0 ? '' : (apiVersion ?? '').slice(0, slash);
};

/** True when no controller of any kind owns `obj`: an orphan, which a workload whose selector matches may adopt. */
export const hasNoController = (obj: {
  readonly metadata?: { readonly ownerReferences?: readonly OwnerReferenceLike[] };
}): boolean => !obj.metadata?.ownerReferences?.some((o) => o.controller === true);

/** The controller owner reference of `obj` when the controller is of `owner`'s group and kind. */
export function controllerOf<R extends OwnerReferenceLike>(
  obj: { readonly metadata?: { readonly ownerReferences?: readonly R[] } },
  owner: OwnerKind,
): R | undefined {
  return obj.metadata?.ownerReferences?.find(
    (o) => o.controller === true && o.kind === owner.kind && groupOf(o.apiVersion) === owner.group,
  );
}

/**
 * The key of what a controller owns: its namespace and UID. Owner references cannot cross
 * namespaces, so an object in another namespace that names the same UID is never the owner's,
 * whatever its labels say (the garbage collector would remove it; until then it must not count).
 * The controller's indexes (runtime/handlers.ts) and the agent's pre-pull (agent/pure/prepull-plan.ts) key by it.
 */
export const ownedIndexValue = (namespace: string | undefined, ownerUid: string | undefined): string =>
  `${namespace ?? ''}/${ownerUid ?? ''}`;

/** The controller owner reference of `obj` when the controller is one of our workload kinds. */
export function workloadControllerOf<R extends OwnerReferenceLike>(obj: {
  readonly metadata?: { readonly ownerReferences?: readonly R[] };
}): R | undefined {
  for (const owner of WORKLOAD_OWNERS) {
    const ref = controllerOf(obj, owner);
    if (ref) return ref;
  }
  return undefined;
}
