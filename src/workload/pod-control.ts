// Pod create, delete and release for the CloneSet controller (with the pods' claims: created
// before the pod, deleted when the executor says), each recorded as an expectation
// before the request so the next reconcile waits until the cache has seen it. Creates go out in
// slow-start batches (1, 2, 4, …) and stop at the first failing batch, as client-go's controllers
// do, so a refusal costs one request rather than one per missing pod.
// Must not: decide which pods to create or delete (the planner does) or emit events.
import { randomBytes } from 'node:crypto';
import type { ScaleExpectations } from '../runtime/expectations.js';
import { LABEL_INSTANCE_ID } from '../api/types.js';
import { isAlreadyExists, isConflict, isNotFound, type KubeClient } from '../runtime/kube-client.js';
import { claimsForPod, withClaimVolumes, type Claim, type ClaimOwner, type ClaimPlan } from './pure/claims.js';
import { controllerRef, newInstanceIds, newPod } from './pure/pods.js';
import { matchesSelector } from './pure/selector.js';
import type { PodIdentity } from './pure/kind.js';
import type { Pod, PodTemplate, WireCloneSet } from '../api/wire.js';

/** A create or delete that failed, with the pod names it was about. */
export class PodControlError extends Error {
  constructor(
    message: string,
    readonly podNames: readonly string[],
    options: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'PodControlError';
  }
}

export class PodControl {
  constructor(
    private readonly client: KubeClient,
    private readonly expectations: ScaleExpectations,
    /** The kind's identity on a new pod (kind.ts PodIdentity.decorate); absent: none beyond the CloneSet's. */
    private readonly identity?: Pick<PodIdentity, 'decorate' | 'decorateClaim'>,
  ) {}

  /**
   * Creates one pod per template, with the instance id the plan gave it or else one none of
   * `idsInUse` has; returns the names
   * created before any failure. Each batch's pods are built just before it is sent, so a refusal
   * of the first costs one pod object, not one per wanted pod.
   */
  async create(
    cs: WireCloneSet,
    key: string,
    wanted: readonly { revision: string; template: PodTemplate; instanceId?: string }[],
    idsInUse: ReadonlySet<string>,
    claims?: Pick<ClaimPlan, 'reuseIds' | 'claimIds'>,
  ): Promise<string[]> {
    const given = wanted.flatMap((w) => w.instanceId ?? []);
    const ids = given.length === wanted.length ? given : this.drawIds(wanted.length, idsInUse, claims);
    const names = ids.map((id) => `${cs.metadata?.name}-${id}`);
    this.expectations.expectCreations(key, names);
    let next = 0;
    for (let batch = 1; next < wanted.length; batch *= 2) {
      const first = next;
      const slice = wanted
        .slice(first, first + batch)
        .map((w, i) => withClaimVolumes(this.newPod(cs, w, ids[first + i]!), cs));
      next += slice.length;
      const results = await Promise.allSettled(slice.map((pod) => this.createWithClaims(cs, pod)));
      const failed = results.flatMap((r, i) =>
        r.status === 'rejected' ? [{ name: names[first + i]!, err: r.reason as unknown }] : [],
      );
      if (failed.length > 0) {
        // The cache will never see pods that were not created: stop expecting them.
        for (const name of [...failed.map((f) => f.name), ...names.slice(next)])
          this.expectations.observeCreation(key, name);
        throw new PodControlError('creating pods failed', names, { cause: failed[0]!.err });
      }
    }
    return names;
  }

  private newPod(cs: WireCloneSet, wanted: { revision: string; template: PodTemplate }, id: string): Pod {
    const pod = newPod(cs, wanted.revision, wanted.template, id);
    return this.identity ? this.identity.decorate(pod, cs) : pod;
  }

  private claimsOf(cs: WireCloneSet, pod: Pod): Claim[] {
    const claims = claimsForPod(cs, pod.metadata?.labels?.[LABEL_INSTANCE_ID] ?? '');
    const { identity } = this;
    return identity ? claims.map((c) => identity.decorateClaim(c, cs)) : claims;
  }

  /** Ids for `count` new pods: the ids whose claims no pod has first, then fresh ones. */
  private drawIds(
    count: number,
    idsInUse: ReadonlySet<string>,
    claims?: Pick<ClaimPlan, 'reuseIds' | 'claimIds'>,
  ): string[] {
    const reused = (claims?.reuseIds ?? []).slice(0, count);
    const taken = new Set([...idsInUse, ...(claims?.claimIds ?? [])]);
    return [...reused, ...newInstanceIds(count - reused.length, taken, randomBytes)];
  }

  /** The pod's claims first (those that exist are kept: a reused id's), then the pod. */
  private async createWithClaims(cs: WireCloneSet, pod: Pod): Promise<Pod> {
    await this.createClaims(cs, pod);
    return this.createPod(cs, cs.metadata?.namespace ?? 'default', pod);
  }

  /** Creates the pod's claims of the workload's templates; those that exist are kept. */
  async createClaims(cs: WireCloneSet, pod: Pod): Promise<void> {
    const ns = cs.metadata?.namespace ?? 'default';
    for (const claim of this.claimsOf(cs, pod)) {
      try {
        await this.client.create(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim);
      } catch (err) {
        if (!isAlreadyExists(err)) throw new Error(`creating claim ${claim.metadata?.name} failed`, { cause: err });
      }
    }
  }

  private async createPod(cs: WireCloneSet, ns: string, pod: Pod): Promise<Pod> {
    try {
      return await this.client.create<Pod>(`/api/v1/namespaces/${ns}/pods`, pod);
    } catch (err) {
      if (isAlreadyExists(err)) await this.releaseIfLeft(cs, pod.metadata?.name ?? '');
      throw err;
    }
  }

  /**
   * A pod of the name wanted exists though the cache does not show it as the workload's: when it
   * is the workload's and its labels no longer match the selector (they were removed, and the
   * cache, which selects on them, lost it), it is released, as one still cached would be. The
   * create stays refused: the name is taken until the pod is deleted or adopted again (decision 91).
   */
  private async releaseIfLeft(cs: WireCloneSet, name: string): Promise<void> {
    const existing = await this.readByList<Pod>(`/api/v1/namespaces/${cs.metadata?.namespace}/pods`, name);
    if (existing && ownedAndLeft(existing, cs)) await this.release(cs, existing);
  }

  /** Deletes these claims of the CloneSet; one already gone counts as done. */
  async deleteClaims(cs: WireCloneSet, names: readonly string[]): Promise<void> {
    for (const name of names) {
      try {
        await this.client.delete(`/api/v1/namespaces/${cs.metadata?.namespace}/persistentvolumeclaims/${name}`);
      } catch (err) {
        if (!isNotFound(err)) throw new PodControlError(`deleting claim ${name} failed`, [name], { cause: err });
      }
    }
  }

  /** Deletes a pod, preconditioned on its UID; a pod already gone or replaced counts as done. */
  async delete(key: string, pod: Pod): Promise<void> {
    const name = pod.metadata?.name ?? '';
    this.expectations.expectDeletions(key, [name]);
    try {
      await this.client.delete(`/api/v1/namespaces/${pod.metadata?.namespace}/pods/${name}`, {
        preconditions: { uid: pod.metadata?.uid },
      });
    } catch (err) {
      this.expectations.observeDeletion(key, name);
      if (!isNotFound(err) && !isConflict(err))
        throw new PodControlError(`deleting pod ${name} failed`, [name], { cause: err });
    }
  }

  /**
   * Makes the workload the controller of these orphans; returns the names adopted. The workload
   * is read again first, uncached: one being deleted, or deleted and created again under another
   * UID, adopts nothing (the cache may be behind). Each patch carries the pod's UID, and the API
   * server refuses a second controller reference, so a pod another controller took meanwhile stays
   * its own; a pod gone or taken meanwhile is skipped.
   */
  async adopt(cs: WireCloneSet, plural: string, orphans: readonly Pod[]): Promise<string[]> {
    if (!(await this.stillAdopting(cs, plural))) return [];
    const adopted: string[] = [];
    for (const { metadata = {} } of orphans) if (await this.adoptOne(cs, metadata)) adopted.push(metadata.name ?? '');
    return adopted;
  }

  /** The workload as the API server has it now: the same UID, and not being deleted. */
  private async stillAdopting(cs: WireCloneSet, plural: string): Promise<boolean> {
    const { namespace, name = '', uid } = cs.metadata ?? {};
    const fresh = await this.readByList<WireCloneSet>(`/apis/${cs.apiVersion}/namespaces/${namespace}/${plural}`, name);
    return fresh?.metadata !== undefined && fresh.metadata.uid === uid && !fresh.metadata.deletionTimestamp;
  }

  /** One object read uncached, as a list of its one name: the controller may list, not get (decision 91). */
  private async readByList<T>(collection: string, name: string): Promise<T | undefined> {
    return (await this.client.list<T>(collection, { fieldSelector: `metadata.name=${name}` })).items[0];
  }

  /**
   * One orphan adopted; false when it is gone or changed meanwhile (another controller took it:
   * the cache shows that next). Any other refusal (an admission policy, a second controller
   * reference) is the round's failure: said in FailedUpdate, backed off, never skipped silently.
   */
  private async adoptOne(cs: WireCloneSet, { namespace, name, uid }: NonNullable<Pod['metadata']>): Promise<boolean> {
    try {
      await this.client.patch(
        `/api/v1/namespaces/${namespace}/pods/${name}`,
        { metadata: { ownerReferences: [controllerRef(cs)], uid } },
        'strategic',
      );
      return true;
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return false;
      throw err;
    }
  }

  /**
   * Puts the workload's owner reference on a claim (`owner`), or takes it off; the patch carries
   * the claim's UID. A claim gone meanwhile needs nothing.
   */
  async setClaimOwner(cs: WireCloneSet, claim: Claim, owner: ClaimOwner | undefined): Promise<void> {
    const refs = owner ? [owner] : [{ $patch: 'delete', uid: cs.metadata?.uid }];
    try {
      await this.client.patch(
        `/api/v1/namespaces/${claim.metadata?.namespace}/persistentvolumeclaims/${claim.metadata?.name}`,
        { metadata: { ownerReferences: refs, uid: claim.metadata?.uid } },
        'strategic',
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /**
   * Raises a claim's storage request; the patch carries the claim's UID and resourceVersion, so a
   * claim changed since the cache saw it is read again rather than overwritten. The API server
   * refuses it when the claim's StorageClass does not allow expansion.
   */
  async expandClaim(claim: Claim, storage: string): Promise<void> {
    const { namespace, name, uid, resourceVersion } = claim.metadata ?? {};
    await this.client.patch(
      `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${name}`,
      { metadata: { uid, resourceVersion }, spec: { resources: { requests: { storage } } } },
      'merge',
    );
  }

  /** Lets go of a pod whose labels stopped matching the selector: our owner reference removed. */
  async release(cs: WireCloneSet, pod: Pod): Promise<void> {
    try {
      await this.client.patch(
        `/api/v1/namespaces/${pod.metadata?.namespace}/pods/${pod.metadata?.name}`,
        { metadata: { ownerReferences: [{ $patch: 'delete', uid: cs.metadata?.uid }], uid: pod.metadata?.uid } },
        'strategic',
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** The workload's own pod, whose labels no longer match its selector. */
function ownedAndLeft(pod: Pod, cs: WireCloneSet): boolean {
  const ours = pod.metadata?.ownerReferences?.some((o) => o.controller === true && o.uid === cs.metadata?.uid) === true;
  return ours && !matchesSelector(pod.metadata?.labels, cs.spec?.selector ?? {});
}
