// ControllerRevision decisions for a workload of any kind: the template hash that names a revision, which
// existing revision a template matches (so a rollback reuses it instead of minting a new one),
// the next revision number, which old revisions fall outside revisionHistoryLimit, and the
// workload a revision's name belongs to (read back from that name).
// Pure: no I/O. Must not: decide rollout order or write revisions (a kind's revision store does).
import { canonicalJSON } from '../../api/json.js';
import { createHash } from 'node:crypto';

export interface RevisionSummary {
  name: string;
  revision: number;
  /** templateDigest() of the stored template: equal digests, equal templates. */
  data: string;
}

/** SHA-256 of the template's canonical JSON: what the revision cache keeps instead of the template. */
export const templateDigest = (template: unknown): string => templateFingerprint(template).digest;

/** The digest and the size in characters of the template's canonical JSON, from one serialisation. */
export function templateFingerprint(template: unknown): { digest: string; chars: number } {
  const json = canonicalJSON(template ?? {});
  return { digest: createHash('sha256').update(json).digest('hex'), chars: json.length };
}

// Kubernetes' rand.SafeEncodeString alphabet: no vowels, so hashes never spell words.
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A 10-character label-safe hash of the template and collision count. */
export function templateHash(template: unknown, collisionCount = 0): string {
  const digest = createHash('sha256').update(canonicalJSON(template)).update(`#${collisionCount}`).digest();
  let n = digest.readBigUInt64BE(0);
  let out = '';
  for (let i = 0; i < 10; i++) {
    out += SAFE_ALPHABET[Number(n % BigInt(SAFE_ALPHABET.length))];
    n /= BigInt(SAFE_ALPHABET.length);
  }
  return out;
}

export const revisionName = (cloneSetName: string, hash: string): string => `${cloneSetName}-${hash}`;

const REVISION_NAME_SUFFIX = new RegExp(`-[${SAFE_ALPHABET}]{10}$`);

/** The workload a revision named by revisionName belongs to; undefined for a name of any other shape. */
export function workloadOfRevision(name: string): string | undefined {
  return REVISION_NAME_SUFFIX.test(name) && name.length > 11 ? name.slice(0, -11) : undefined;
}

export function nextRevisionNumber(revisions: readonly RevisionSummary[]): number {
  return revisions.reduce((max, r) => Math.max(max, r.revision), 0) + 1;
}

/** The newest existing revision whose template equals `data`. */
export function findEqualRevision(revisions: readonly RevisionSummary[], data: string): RevisionSummary | undefined {
  return [...revisions].sort((a, b) => b.revision - a.revision).find((r) => r.data === data);
}

/** Old revisions to delete: oldest first, keeping `limit` that no pod or status still uses. */
export function revisionsToPrune(
  revisions: readonly RevisionSummary[],
  live: ReadonlySet<string>,
  limit: number,
): string[] {
  const history = revisions.filter((r) => !live.has(r.name)).sort((a, b) => a.revision - b.revision);
  return history.slice(0, Math.max(0, history.length - limit)).map((r) => r.name);
}
