// The node agent's ControllerRevisions (issue 31.2): the informer keeps each revision's identity,
// owner and number only (pure/cache.ts trimRevisionIdentity), so a CloneSet with no pod on this node
// costs the agent a few hundred bytes a revision whatever its template's size. The containers of a
// revision that a pod of this node needs (the one its resize request names, the newest of its
// CloneSet for the pre-pull) are fetched by name when needed, trimmed (pure/cache.ts
// trimRevisionForAgent) and kept in a bounded LRU by revision UID: a revision's data never changes.
// Owns: the fetches and that LRU. Must not: fetch a revision for a pod of another node, or decide
// anything about one (pure/authorize.ts and pure/prepull-plan.ts do).
import { LRUCache } from 'lru-cache';
import { workloadControllerOf } from '../api/owner.js';
import type { Pod } from '../api/wire.js';
import type { Informer } from '../runtime/informer.js';
import { isNotFound, type KubeClient } from '../runtime/kube-client.js';
import type { ControllerRevision } from '../api/revision.js';
import { trimRevisionForAgent } from './pure/cache.js';
import { newestRevisions, revisionsWanted } from './pure/prepull-plan.js';

/** Revisions fetched at once at most; trimmed ones are bounded by the CRD (64 containers, 1,024-character images). */
const FETCHED_REVISIONS = 512;

export interface RevisionTemplatesOptions {
  /** Identity, owner and number of every CloneSet revision (the agent's informer). */
  readonly revisions: Pick<Informer<ControllerRevision>, 'get' | 'list'>;
  readonly client: Pick<KubeClient, 'get'>;
}

export class RevisionTemplates {
  private readonly fetched = new LRUCache<string, ControllerRevision>({ max: FETCHED_REVISIONS });

  constructor(private readonly o: RevisionTemplatesOptions) {}

  /** The revision `namespace/name` with its containers, or undefined while it does not exist (or is not cached yet). */
  async revision(namespace: string, name: string): Promise<ControllerRevision | undefined> {
    const known = this.o.revisions.get(`${namespace}/${name}`);
    return known === undefined ? undefined : this.withContainers(known);
  }

  /**
   * The newest revision, with its containers, of each CloneSet that has a pod in `pods` not on it
   * yet: what the pre-pull compares those pods with. Revisions of CloneSets without such a pod
   * are never fetched.
   */
  async newestFor(pods: readonly Pod[]): Promise<ControllerRevision[]> {
    const wanted = revisionsWanted(pods, newestRevisions(this.o.revisions.list()));
    const out: ControllerRevision[] = [];
    for (const r of wanted) {
      const full = await this.withContainers(r);
      if (full !== undefined) out.push(full);
    }
    return out;
  }

  private async withContainers(r: ControllerRevision): Promise<ControllerRevision | undefined> {
    const uid = r.metadata?.uid ?? '';
    const known = this.fetched.get(uid);
    if (known !== undefined) return { ...known, revision: r.revision };
    const path = `/apis/apps/v1/namespaces/${encodeURIComponent(r.metadata?.namespace ?? '')}/controllerrevisions/${encodeURIComponent(r.metadata?.name ?? '')}`;
    let stored: ControllerRevision;
    try {
      stored = await this.o.client.get<ControllerRevision>(path);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    // Same object as cached (a name reused by a new revision would have another UID), and still a CloneSet's.
    if (stored.metadata?.uid !== uid || workloadControllerOf(stored) === undefined) return undefined;
    const trimmed = trimRevisionForAgent(stored);
    this.fetched.set(uid, trimmed);
    return { ...trimmed, revision: r.revision };
  }
}
