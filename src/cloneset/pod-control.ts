// Pod create, delete and release for the CloneSet controller, each recorded as an expectation
// before the request so the next reconcile waits until the cache has seen it. Creates go out in
// slow-start batches (1, 2, 4, …) and stop at the first failing batch, as client-go's controllers
// do, so a refusal costs one request rather than one per missing pod.
// Must not: decide which pods to create or delete (the planner does) or emit events.
import { randomBytes } from 'node:crypto';
import type { ScaleExpectations } from '../runtime/expectations.js';
import { isConflict, isNotFound, type KubeClient, type Pod } from '../runtime/kube-client.js';
import { newPod, type WireCloneSet } from './pods.js';

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
  ) {}

  /** Creates one pod per template; returns the names created before any failure. */
  async create(cs: WireCloneSet, key: string, wanted: readonly { revision: string; template: unknown }[]): Promise<string[]> {
    const ns = cs.metadata?.namespace ?? 'default';
    const planned = wanted.map((w) => newPod(cs, w.revision, w.template as Parameters<typeof newPod>[2], instanceId()));
    const names = planned.map((p) => p.metadata?.name ?? '');
    this.expectations.expectCreations(key, names);
    let next = 0;
    for (let batch = 1; next < planned.length; batch *= 2) {
      const slice = planned.slice(next, next + batch);
      next += slice.length;
      const results = await Promise.allSettled(slice.map((pod) => this.client.create<Pod>(`/api/v1/namespaces/${ns}/pods`, pod)));
      const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ pod: slice[i]!, err: r.reason as unknown }] : []));
      if (failed.length > 0) {
        // The cache will never see pods that were not created: stop expecting them.
        const notCreated = [...failed.map((f) => f.pod), ...planned.slice(next)].map((p) => p.metadata?.name ?? '');
        for (const name of notCreated) this.expectations.observeCreation(key, name);
        throw new PodControlError('creating pods failed', names, { cause: failed[0]!.err });
      }
    }
    return names;
  }

  /** Deletes a pod, preconditioned on its UID; a pod already gone or replaced counts as done. */
  async delete(key: string, pod: Pod): Promise<void> {
    const name = pod.metadata?.name ?? '';
    this.expectations.expectDeletions(key, [name]);
    try {
      await this.client.delete(`/api/v1/namespaces/${pod.metadata?.namespace}/pods/${name}`, { preconditions: { uid: pod.metadata?.uid } });
    } catch (err) {
      this.expectations.observeDeletion(key, name);
      if (!isNotFound(err) && !isConflict(err)) throw new PodControlError(`deleting pod ${name} failed`, [name], { cause: err });
    }
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

/** Kruise-style instance IDs: 5 lowercase alphanumerics, also the pod name suffix. */
function instanceId(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return Array.from(randomBytes(5), (b) => alphabet[b % alphabet.length]).join('');
}
