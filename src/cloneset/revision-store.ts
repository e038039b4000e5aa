// A CloneSet's ControllerRevisions: find or create the revision for the current template
// (reusing an identical earlier one on rollback, bumping collisionCount on a name collision),
// report the current and update revisions with every template in use, and prune history beyond
// revisionHistoryLimit. Decisions are the pure functions of revision.ts; this module does the
// I/O. Must not: touch pods.
import { LABEL_CONTROLLER_REVISION_HASH, type CloneSetStatus } from '../api/types.js';
import { ownedIndexValue } from '../runtime/handlers.js';
import type { Informer } from '../runtime/informer.js';
import { isAlreadyExists, isNotFound, type KubeClient, type Pod } from '../runtime/kube-client.js';
import { controllerRef, type WireCloneSet } from './pods.js';
import { canonicalJSON } from '../api/json.js';
import { findEqualRevision, nextRevisionNumber, revisionName, revisionsToPrune, templateHash, type RevisionSummary } from './revision.js';

export interface ControllerRevision {
  apiVersion?: string;
  kind?: string;
  metadata?: Pod['metadata'];
  revision: number;
  data?: { template?: unknown };
}

/** The pods' and revisions' index by controlling CloneSet: namespace/uid (runtime/handlers.ts ownedIndexValue). */
export const OWNER_INDEX = 'ownerCloneSet';
export const CLONESET_LABEL = 'apps.tailor.dev/cloneset';

export class RevisionStore {
  constructor(
    private readonly client: KubeClient,
    private readonly revisions: Informer<ControllerRevision>,
  ) {}

  /** Finds or creates the revision for the current template; returns both revisions in use. */
  async sync(
    cs: WireCloneSet,
  ): Promise<{ updateRevision: string; currentRevision: string; templates: Map<string, unknown> } | 'collision'> {
    const client = this.client;
    const ns = cs.metadata?.namespace ?? 'default';
    const owned = this.revisions.byIndex(OWNER_INDEX, ownedIndexValue(cs.metadata?.namespace, cs.metadata?.uid));
    const summaries: RevisionSummary[] = owned.map((r) => ({
      name: r.metadata?.name ?? '',
      revision: r.revision,
      data: canonicalJSON(r.data?.template ?? {}),
    }));
    const templates = new Map<string, unknown>(owned.map((r) => [r.metadata?.name ?? '', r.data?.template]));
    const data = canonicalJSON(cs.spec.template);
    const equal = findEqualRevision(summaries, data);
    let updateRevision: string;
    if (equal) {
      updateRevision = equal.name;
      const next = nextRevisionNumber(summaries);
      if (equal.revision !== next - 1) {
        // Rollback to an earlier template: reuse its revision and make it the newest.
        await client.patch(`/apis/apps/v1/namespaces/${ns}/controllerrevisions/${equal.name}`, { revision: next }, 'merge');
      }
    } else {
      const collisionCount = cs.status?.collisionCount ?? 0;
      updateRevision = revisionName(cs.metadata?.name ?? '', templateHash(cs.spec.template, collisionCount));
      try {
        await client.create(`/apis/apps/v1/namespaces/${ns}/controllerrevisions`, {
          apiVersion: 'apps/v1',
          kind: 'ControllerRevision',
          metadata: {
            name: updateRevision,
            namespace: ns,
            labels: { ...(cs.spec.selector.matchLabels ?? {}), [CLONESET_LABEL]: cs.metadata?.name ?? '' },
            ownerReferences: [controllerRef(cs)],
          },
          revision: nextRevisionNumber(summaries),
          data: { template: cs.spec.template },
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const existing = await client.get<ControllerRevision>(`/apis/apps/v1/namespaces/${ns}/controllerrevisions/${updateRevision}`);
        if (canonicalJSON(existing.data?.template ?? {}) !== data) {
          // A different template already holds this name: bump collisionCount and try again.
          await client.patch(
            `/apis/${cs.apiVersion}/namespaces/${ns}/clonesets/${cs.metadata?.name}/status`,
            { status: { collisionCount: collisionCount + 1 } },
            'merge',
          );
          return 'collision';
        }
      }
      templates.set(updateRevision, cs.spec.template);
    }
    const stored = cs.status?.currentRevision;
    const currentRevision = stored && templates.has(stored) ? stored : updateRevision;
    return { updateRevision, currentRevision, templates };
  }

  /** Deletes history beyond revisionHistoryLimit, never a revision a pod or the status uses. */
  async prune(cs: WireCloneSet, pods: Pod[], status: CloneSetStatus): Promise<void> {
    const owned = this.revisions.byIndex(OWNER_INDEX, ownedIndexValue(cs.metadata?.namespace, cs.metadata?.uid));
    const live = new Set<string>([status.currentRevision ?? '', status.updateRevision ?? '']);
    for (const p of pods) live.add(p.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '');
    const summaries = owned.map((r) => ({ name: r.metadata?.name ?? '', revision: r.revision, data: '' }));
    for (const name of revisionsToPrune(summaries, live, cs.spec.revisionHistoryLimit ?? 10)) {
      try {
        await this.client.delete(`/apis/apps/v1/namespaces/${cs.metadata?.namespace}/controllerrevisions/${name}`);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}
