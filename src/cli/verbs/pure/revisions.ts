// The pure side of `kubectl tailor history` and `undo`: a CloneSet's ControllerRevisions in
// order (those it controls, by owner UID), which of them the status names current and update, a
// one-line summary of what each revision changed from the one before (the controller's own
// template diff, inplace/pure/diff.ts), the history table, the revision `undo` rolls back to, and the
// patches the write verbs send. Pure: no I/O, no clock. Must not: judge a rollout, or pick a
// revision by any rule the controller does not also use (it reuses the newest revision whose
// template equals the spec's; revision-store.ts).
import { canonicalJSON } from '../../../api/json.js';
import { workloadControllerOf } from '../../../api/owner.js';
import { CLONESET_KIND } from '../../../api/types.js';
import { INPLACESTATEFULSET_KIND } from '../../../api/stateful-types.js';
import type { ControllerRevision } from '../../../api/revision.js';
import type { WireCloneSet, PodTemplate } from '../../../api/wire.js';
import { diffTemplates, RESTARTED_AT_ANNOTATION, type TemplateDiff } from '../../../inplace/pure/diff.js';

export interface RevisionRecord {
  name: string;
  revision: number;
  template: PodTemplate;
}

/** The revisions the CloneSet with this UID controls, oldest first. */
export function ownedRevisions(items: readonly ControllerRevision[], ownerUid: string | undefined): RevisionRecord[] {
  return items
    .filter((r) => ownerUid !== undefined && workloadControllerOf(r)?.uid === ownerUid)
    .map((r) => ({ name: r.metadata?.name ?? '', revision: r.revision, template: r.data?.template ?? {} }))
    .sort((a, b) => a.revision - b.revision || a.name.localeCompare(b.name));
}

/** "current", "update", "current, update" or "" after what the CloneSet's status says. */
export function revisionRole(cs: WireCloneSet, name: string): string {
  const roles: string[] = [];
  if (cs.status?.currentRevision === name) roles.push('current');
  if (cs.status?.updateRevision === name) roles.push('update');
  return roles.join(', ');
}

const keyValues = (values: Record<string, unknown> | undefined): string =>
  Object.entries(values ?? {})
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');

/** cpu/memory as `cpu=100m memory=64Mi` when requests equal limits, else both named. */
export function formatResources(r: { requests?: Record<string, unknown>; limits?: Record<string, unknown> }): string {
  if (canonicalJSON(r.requests ?? {}) === canonicalJSON(r.limits ?? {})) return keyValues(r.requests);
  return [r.requests && `requests ${keyValues(r.requests)}`, r.limits && `limits ${keyValues(r.limits)}`]
    .filter(Boolean)
    .join(', ');
}

const mapChanges = (changes: Record<string, string | null>): string =>
  Object.entries(changes)
    .map(([k, v]) => (v === null ? `-${k}` : `${k}=${v}`))
    .join(', ');

/** What a template diff changes, in one line: images, resources, restarts, labels, annotations, recreate-only fields. */
export function summariseDiff(diff: TemplateDiff): string {
  const parts: string[] = [];
  const images = Object.entries(diff.images);
  if (images.length > 0) parts.push(`image ${images.map(([c, image]) => `${c}=${image}`).join(', ')}`);
  for (const [c, r] of Object.entries(diff.resources)) parts.push(`resources ${c} ${formatResources(r)}`);
  if (diff.podResources) parts.push(`pod resources ${formatResources(diff.podResources)}`);
  const annotations = { ...diff.annotations };
  if (RESTARTED_AT_ANNOTATION in annotations) {
    const at = annotations[RESTARTED_AT_ANNOTATION];
    delete annotations[RESTARTED_AT_ANNOTATION];
    parts.push(at === null ? `restart (${RESTARTED_AT_ANNOTATION} removed)` : `restart (restartedAt ${at})`);
  }
  for (const [c, why] of Object.entries(diff.restarts)) {
    if (!why.startsWith('rolling restart')) parts.push(`restart ${c}: ${why}`);
  }
  if (Object.keys(diff.labels).length > 0) parts.push(`labels ${mapChanges(diff.labels)}`);
  if (Object.keys(annotations).length > 0) parts.push(`annotations ${mapChanges(annotations)}`);
  if (diff.recreateOnly.length > 0) parts.push(`recreate: ${diff.recreateOnly.join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : 'no change';
}

export interface HistoryRow {
  revision: number;
  name: string;
  /** revisionRole, or "" */
  role: string;
  /** What changed from the revision listed before it; "" for the oldest one kept. */
  change: string;
}

export function historyRows(cs: WireCloneSet, revisions: readonly RevisionRecord[]): HistoryRow[] {
  return revisions.map((r, i) => {
    const before = revisions[i - 1];
    return {
      revision: r.revision,
      name: r.name,
      role: revisionRole(cs, r.name),
      change: before ? summariseDiff(diffTemplates(before.template, r.template)) : '',
    };
  });
}

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd(),
  );
}

export function renderHistory(name: string, rows: readonly HistoryRow[]): string[] {
  if (rows.length === 0)
    return [`clone "${name}" has no revisions yet (the controller records the first one when it sees the CloneSet)`];
  return table([
    ['REVISION', 'NAME', 'STATUS', 'CHANGE'],
    ...rows.map((r) => [String(r.revision), r.name, r.role || '-', r.change || '-']),
  ]);
}

export type UndoTarget =
  | { kind: 'rollback'; target: RevisionRecord }
  | { kind: 'unchanged'; target: RevisionRecord }
  | { kind: 'refused'; message: string };

const listNumbers = (revisions: readonly RevisionRecord[]): string => revisions.map((r) => r.revision).join(', ');

/**
 * The revision `undo` rolls back to: `toRevision`, or (none or 0, as kubectl's) the newest
 * revision older than the one the spec's template is; when no revision holds the spec's template
 * yet (the controller has not recorded a fresh edit), the newest revision. `unchanged` when the
 * spec already holds that template.
 */
export function undoTarget(spec: PodTemplate, revisions: readonly RevisionRecord[], toRevision?: number): UndoTarget {
  if (revisions.length === 0)
    return { kind: 'refused', message: 'it has no revisions yet (the controller records them)' };
  const specData = canonicalJSON(spec);
  let target: RevisionRecord | undefined;
  if (toRevision) {
    target = revisions.find((r) => r.revision === toRevision);
    if (!target)
      return { kind: 'refused', message: `revision ${toRevision} not found (revisions: ${listNumbers(revisions)})` };
  } else {
    const newestFirst = [...revisions].reverse();
    const current = newestFirst.find((r) => canonicalJSON(r.template) === specData);
    target = current ? newestFirst.find((r) => r.revision < current.revision) : newestFirst[0];
    if (!target)
      return { kind: 'refused', message: `no revision before revision ${current?.revision} to roll back to` };
  }
  return canonicalJSON(target.template) === specData ? { kind: 'unchanged', target } : { kind: 'rollback', target };
}

/** A JSON patch: the template replaced whole, only if no one changed the spec since it was read (decision 70). */
export function undoPatch(generation: number, template: PodTemplate): unknown[] {
  return [
    { op: 'test', path: '/metadata/generation', value: generation },
    { op: 'replace', path: '/spec/template', value: template },
  ];
}

/**
 * A merge patch that pauses or resumes the rollout: `updateStrategy.paused`, or an
 * InPlaceStatefulSet's `updateStrategy.rollingUpdate.paused` (Advanced StatefulSet's place).
 */
export const pausePatch = (paused: boolean, kind = CLONESET_KIND): unknown =>
  kind === INPLACESTATEFULSET_KIND
    ? { spec: { updateStrategy: { rollingUpdate: { paused } } } }
    : { spec: { updateStrategy: { paused } } };

/** RFC 3339 to the second, UTC: what `kubectl rollout restart` writes. */
export const restartedAtValue = (now: Date): string => now.toISOString().replace(/\.\d+Z$/, 'Z');

/** A merge patch that asks for every container to restart (decision 15). */
export const restartPatch = (restartedAt: string): unknown => ({
  spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: restartedAt } } } },
});
