// A CloneSet's ControllerRevisions: find or create the revision for the current template
// (reusing an identical earlier one on rollback, bumping collisionCount on a name collision),
// report the current and update revisions with the templates a round holds (fetched on demand: the
// cache keeps digests and sizes, trimRevision; which ones, round-templates.ts), and prune history
// beyond revisionHistoryLimit. Decisions are the pure functions of revision.ts and
// round-templates.ts; this module does the I/O. Must not: touch pods.
import { LABEL_CONTROLLER_REVISION_HASH, type CloneSetStatus } from '../api/types.js';
import type { WorkloadKind } from './pure/kind.js';
import { ownedIndexValue } from '../api/owner.js';
import type { ControllerRevision } from '../api/revision.js';
import type { Informer } from '../runtime/informer.js';
import { isAlreadyExists, isConflict, isNotFound, type KubeClient } from '../runtime/kube-client.js';
import { controllerRef } from './pure/pods.js';
import { LRUCache } from 'lru-cache';
import {
  findEqualRevision,
  nextRevisionNumber,
  revisionName,
  revisionsToPrune,
  templateDigest,
  templateFingerprint,
  templateHash,
  type RevisionSummary,
} from './pure/revision.js';
import type { Pod, PodTemplate, WireCloneSet } from '../api/wire.js';
import {
  ROUND_TEMPLATE_CHARS,
  roundTemplates,
  TEMPLATE_CACHE_CHARS,
  UNKNOWN_TEMPLATE_CHARS,
} from './pure/round-templates.js';

/** The revisions a round planned with: their templates held, and those of live pods it does not hold. */
export interface RoundRevisions {
  updateRevision: string;
  currentRevision: string;
  templates: Map<string, PodTemplate>;
  /** Revisions live pods run whose templates this round does not hold (round-templates.ts): their pods wait. */
  deferred: ReadonlySet<string>;
  /** Distinct revisions live pods run besides the current and update revisions. */
  inUse: number;
}

/** The pods' and revisions' index by controlling CloneSet: namespace/uid (runtime/handlers.ts ownedIndexValue). */
export const OWNER_INDEX = 'ownerCloneSet';

/** Reads and writes of a revision being renumbered before a conflict is left to the next round. */
const RENUMBER_ATTEMPTS = 3;

/**
 * A ControllerRevision as the controller caches it: its identity, owner, number, creation time and
 * the digest of its template, never the template. A revision's template is as large as its
 * CloneSet's (up to the API server's object size), and a CloneSet keeps up to revisionHistoryLimit
 * of them: kept whole, one CloneSet's history could fill the controller's heap (issue 31.2). The
 * templates pods run are fetched when a round needs them (RevisionStore.sync).
 */
export function trimRevision(r: ControllerRevision): ControllerRevision {
  const { managedFields: _dropped, annotations: _unread, ...metadata } = r.metadata ?? {};
  // Trimmed already (the template is gone): what it was trimmed to stands.
  const fingerprint =
    r.templateDigest !== undefined
      ? { digest: r.templateDigest, chars: r.templateChars }
      : templateFingerprint(r.data?.template);
  return {
    ...(r.apiVersion !== undefined ? { apiVersion: r.apiVersion } : {}),
    ...(r.kind !== undefined ? { kind: r.kind } : {}),
    metadata,
    revision: r.revision,
    templateDigest: fingerprint.digest,
    ...(fingerprint.chars !== undefined ? { templateChars: fingerprint.chars } : {}),
  };
}

const digestOf = (r: ControllerRevision): string => r.templateDigest ?? templateDigest(r.data?.template);

export class RevisionStore {
  /** The digest of each CloneSet's template, by uid/generation (a template change bumps it). */
  private readonly templateDigests = new LRUCache<string, string>({ max: 100_000 });
  /** Templates fetched for the revisions pods run, by revision UID (a revision's data never changes). */
  private readonly fetched = new LRUCache<string, { template: PodTemplate | undefined; chars: number }>({
    maxSize: TEMPLATE_CACHE_CHARS,
    sizeCalculation: (value) => Math.max(1, value.chars),
  });

  constructor(
    private readonly client: KubeClient,
    private readonly kind: Pick<WorkloadKind, 'plural' | 'revisionLabel'>,
    private readonly revisions: Informer<ControllerRevision>,
    /** Characters of templates one round holds (roundTemplateChars of the controller's workers). */
    private readonly roundChars: number = ROUND_TEMPLATE_CHARS,
  ) {}

  private digestOfTemplate(cs: WireCloneSet): string {
    const key = `${cs.metadata?.uid}/${cs.metadata?.generation}`;
    let digest = this.templateDigests.get(key);
    if (digest === undefined) this.templateDigests.set(key, (digest = templateDigest(cs.spec.template)));
    return digest;
  }

  /** The template of a cached revision: fetched once per revision and kept while pods run it; undefined when it is gone. */
  private async templateOf(r: ControllerRevision): Promise<PodTemplate | undefined> {
    const uid = r.metadata?.uid ?? '';
    const known = this.fetched.get(uid);
    if (known !== undefined) return known.template;
    const path = `/apis/apps/v1/namespaces/${r.metadata?.namespace}/controllerrevisions/${r.metadata?.name}`;
    let stored: ControllerRevision;
    try {
      stored = await this.client.get<ControllerRevision>(path);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const template = stored.data?.template;
    this.fetched.set(uid, { template, chars: JSON.stringify(template ?? {}).length });
    return template;
  }

  /**
   * Makes a reused revision the newest by reading it and writing it back whole with its new number,
   * as Kubernetes' own controllers renumber one. A patch would not do: the API server re-encodes the
   * patched object with Go's JSON (sorted keys, `&` and `<` escaped), and a ControllerRevision's
   * `data` must stay the same bytes, so a template holding such characters could never be rolled
   * back to (422 "data: field is immutable"). The object is plain JSON (no typed client drops a
   * field), and a conflict is retried with a fresh read.
   */
  private async renumber(ns: string, name: string, revision: number): Promise<void> {
    const path = `/apis/apps/v1/namespaces/${ns}/controllerrevisions/${name}`;
    for (let attempt = 1; ; attempt++) {
      const stored = await this.client.get<Record<string, unknown>>(path);
      try {
        await this.client.json('PUT', path, { body: { ...stored, revision } });
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= RENUMBER_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * Finds or creates the revision for the current template; returns both revisions and the
   * templates the round holds (templatesFor).
   */
  async sync(cs: WireCloneSet, pods: readonly Pod[]): Promise<RoundRevisions | 'collision'> {
    const client = this.client;
    const ns = cs.metadata?.namespace ?? 'default';
    const owned = this.revisions.byIndex(OWNER_INDEX, ownedIndexValue(cs.metadata?.namespace, cs.metadata?.uid));
    const summaries: RevisionSummary[] = owned.map((r) => ({
      name: r.metadata?.name ?? '',
      revision: r.revision,
      data: digestOf(r),
    }));
    const digest = this.digestOfTemplate(cs);
    const equal = findEqualRevision(summaries, digest);
    let updateRevision: string;
    if (equal) {
      updateRevision = equal.name;
      const next = nextRevisionNumber(summaries);
      // Rollback to an earlier template: reuse its revision and make it the newest.
      if (equal.revision !== next - 1) await this.renumber(ns, equal.name, next);
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
            labels: { ...(cs.spec.selector.matchLabels ?? {}), [this.kind.revisionLabel]: cs.metadata?.name ?? '' },
            ownerReferences: [controllerRef(cs)],
          },
          revision: nextRevisionNumber(summaries),
          data: { template: cs.spec.template },
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const existing = await client.get<ControllerRevision>(
          `/apis/apps/v1/namespaces/${ns}/controllerrevisions/${updateRevision}`,
        );
        if (templateDigest(existing.data?.template) !== digest) {
          // A different template already holds this name: bump collisionCount and try again.
          await client.patch(
            `/apis/${cs.apiVersion}/namespaces/${ns}/${this.kind.plural}/${cs.metadata?.name}/status`,
            { status: { collisionCount: collisionCount + 1 } },
            'merge',
          );
          return 'collision';
        }
      }
    }
    const stored = cs.status?.currentRevision;
    const known = stored === updateRevision || owned.some((r) => r.metadata?.name === stored);
    return this.templatesFor(cs, pods, { updateRevision, currentRevision: stored && known ? stored : updateRevision });
  }

  /**
   * The templates of the update revision (the CloneSet's own, equal digests: never fetched), and of
   * the revisions round-templates.ts picks, `wanted` (what a first plan asked for) first: bounded in
   * number and characters, whatever the pods run; the LRU keeps them for the next round.
   */
  async templatesFor(
    cs: WireCloneSet,
    pods: readonly Pod[],
    revisions: { updateRevision: string; currentRevision: string },
    wanted: readonly string[] = [],
  ): Promise<RoundRevisions> {
    const owned = this.revisions.byIndex(OWNER_INDEX, ownedIndexValue(cs.metadata?.namespace, cs.metadata?.uid));
    const byName = new Map(owned.map((r) => [r.metadata?.name ?? '', r]));
    const { hold, deferred, inUse } = roundTemplates({
      ...revisions,
      pods,
      wanted,
      boundChars: this.roundChars,
      charsOf: (name) => (byName.has(name) ? (byName.get(name)?.templateChars ?? UNKNOWN_TEMPLATE_CHARS) : undefined),
    });
    const templates = new Map<string, PodTemplate>([[revisions.updateRevision, cs.spec.template]]);
    for (const name of hold) {
      const template = await this.templateOf(byName.get(name)!);
      if (template !== undefined) templates.set(name, template);
    }
    return { ...revisions, templates, deferred, inUse };
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
