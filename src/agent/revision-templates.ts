// The node agent's ControllerRevisions, fetched by name only (decision 94): the one a resize
// request of this node's pods names, and those the controller names on this Node for the image
// pre-pull (api/prepull-revisions.ts). The agent lists no revisions: its token may `get` one whose
// name it is told, so root on one node reads no workload's configuration it has not been sent.
// Each is trimmed (pure/cache.ts trimRevisionForAgent) and kept in a bounded LRU for a minute: a
// revision's template never changes, but a rollback renumbers one and a name can come back as a
// new object (its workload deleted and created again). For the pre-pull only, a name that does not
// exist is remembered for a while too: a Node's list may keep an entry of a workload deleted
// mid-rollout (decision 101), and each of the node's pod changes would ask for it again.
// Owns: the fetches and those LRUs. Must not: decide anything about a revision (pure/authorize.ts
// and pure/prepull-plan.ts do).
import { LRUCache } from 'lru-cache';
import { workloadControllerOf } from '../api/owner.js';
import { revisionRefKey, type RevisionRef } from '../api/prepull-revisions.js';
import { isNotFound, type KubeClient } from '../runtime/kube-client.js';
import type { ControllerRevision } from '../api/revision.js';
import { trimRevisionForAgent } from './pure/cache.js';

/** Revisions kept at most; trimmed ones are bounded by the CRD (64 containers, 1,024-character images). */
const FETCHED_REVISIONS = 512;
/** How long a fetched revision answers for its name. */
const KEPT_MS = 60_000;
/** How long the pre-pull takes a name it found missing as missing: a pre-pull is never urgent. */
const MISSING_KEPT_MS = 30_000;

export class RevisionTemplates {
  private readonly fetched = new LRUCache<string, ControllerRevision>({ max: FETCHED_REVISIONS, ttl: KEPT_MS });
  private readonly missing = new LRUCache<string, true>({ max: FETCHED_REVISIONS, ttl: MISSING_KEPT_MS });

  constructor(private readonly client: Pick<KubeClient, 'get'>) {}

  /**
   * The revision `namespace/name` with its containers, or undefined while it does not exist or is
   * not a workload's (asked again at the next call: it may be created meanwhile).
   */
  async revision(namespace: string, name: string): Promise<ControllerRevision | undefined> {
    const key = revisionRefKey({ namespace, name });
    const known = this.fetched.get(key);
    if (known !== undefined) return known;
    const path = `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/controllerrevisions/${encodeURIComponent(name)}`;
    let stored: ControllerRevision;
    try {
      stored = await this.client.get<ControllerRevision>(path);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    if (workloadControllerOf(stored) === undefined) return undefined;
    const revision = trimRevisionForAgent(stored);
    this.fetched.set(key, revision);
    return revision;
  }

  /**
   * The revisions `refs` names that exist, with their containers: what the pre-pull compares this
   * node's pods with. A name found missing is not asked for again for MISSING_KEPT_MS.
   */
  async named(refs: readonly RevisionRef[]): Promise<ControllerRevision[]> {
    const out: ControllerRevision[] = [];
    for (const ref of refs) {
      const key = revisionRefKey(ref);
      if (this.missing.has(key)) continue;
      const revision = await this.revision(ref.namespace, ref.name);
      if (revision !== undefined) out.push(revision);
      else this.missing.set(key, true);
    }
    return out;
  }
}
