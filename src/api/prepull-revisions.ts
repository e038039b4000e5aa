// The controller's word to a node agent on what to pre-pull
// (docs/decisions/0094-the-controller-names-the-revisions-a-node-pre-pulls.md): the annotation
// `apps.tailor.dev/prepull-revisions` on a Node, a JSON array of `namespace/name` references to
// the update revisions of the workloads whose pods on that node do not run them yet. The agent
// fetches those revisions by name, so it never lists the cluster's revisions. Bounded:
// MAX_PUBLISHED_REVISIONS entries of a namespace and a revision name each; the reader keeps every
// entry it can read and drops the others, so one bad entry never voids the list.
// Owns: the annotation's name, shape, bounds and parse/encode. Must not: do I/O or decide which
// revisions a node wants (workload/pure/prepull-publication.ts does).
import { z } from 'zod';
import { parseAnnotation } from './schemas.js';

export const ANNOTATION_PREPULL_REVISIONS = 'apps.tailor.dev/prepull-revisions';

/** Revisions named per node at most: as many as the node's report lists images (api/prepull.ts). */
export const MAX_PUBLISHED_REVISIONS = 128;

export interface RevisionRef {
  readonly namespace: string;
  readonly name: string;
}

/** A reference as the annotation lists it, `namespace/name`: also the key that tells two apart. */
export const revisionRefKey = (ref: RevisionRef): string => `${ref.namespace}/${ref.name}`;

// A namespace is a DNS label; a ControllerRevision's name a DNS subdomain.
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** An entry as the reader takes it (the writer checks what it writes the same way). */
export function readRevisionRef(entry: unknown): RevisionRef | undefined {
  if (typeof entry !== 'string') return undefined;
  const slash = entry.indexOf('/');
  const namespace = entry.slice(0, slash);
  const name = entry.slice(slash + 1);
  return slash > 0 && NAMESPACE.test(namespace) && NAME.test(name) ? { namespace, name } : undefined;
}

const ListSchema = z.array(z.unknown()).transform((entries) =>
  entries
    .flatMap((entry) => {
      const ref = readRevisionRef(entry);
      return ref ? [ref] : [];
    })
    .slice(0, MAX_PUBLISHED_REVISIONS),
);

/** The revisions a Node's annotation names: none when absent or not a JSON array; unreadable entries left out. */
export function parsePrePullRevisions(annotations: Readonly<Record<string, string>> | undefined): RevisionRef[] {
  const read = parseAnnotation(annotations, ANNOTATION_PREPULL_REVISIONS, ListSchema);
  return read.ok ? read.value : [];
}

/**
 * The annotation's value for `refs`: readable entries in order, at most MAX_PUBLISHED_REVISIONS;
 * undefined when none is left (the annotation is removed then).
 */
export function encodePrePullRevisions(refs: readonly RevisionRef[]): string | undefined {
  const entries = refs
    .map(revisionRefKey)
    .filter((entry) => readRevisionRef(entry) !== undefined)
    .slice(0, MAX_PUBLISHED_REVISIONS);
  return entries.length > 0 ? JSON.stringify(entries) : undefined;
}
