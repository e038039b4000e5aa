// Which revisions' templates one round holds (decision 81): the current revision's, then the ones
// the round's plan asked for, then those of pods mid in-place update, then the other live pods'
// revisions, most pods first; at most REVISIONS_IN_USE_CAP besides the current and update
// revisions, and never more than ROUND_TEMPLATE_CHARS in all. Ended pods pull no revision in: they
// are never updated in place. Past the cap only what the plan asks for is held, and the
// RevisionsInUse condition says how to get back under it.
// Pure. Must not: fetch anything (revision-store.ts does, asking this module), or decide a pod's update.
import { ConditionReasons } from '../../api/reasons.js';
import { ANNOTATION_INPLACE_UPDATE_STATE } from '../../api/types.js';
import { hasEnded, podRevision } from '../../api/pod.js';
import type { Pod } from '../../api/wire.js';
import type { ConditionWrite } from './intents.js';

/** Characters (canonical JSON) of fetched templates the revision store keeps across rounds. */
export const TEMPLATE_CACHE_CHARS = 64 * 1024 * 1024;

/**
 * Characters of templates one round holds with `workers` rounds at once: the cache split between
 * them, so the rounds together hold no more than the cache keeps and what a round fetched is still
 * there for the next one (no refetch), whatever --workers says. With the default four, a quarter:
 * the current and the cap's ten of 1.37 MB fit; of etcd's largest object (1.5 MiB), ten.
 */
export const roundTemplateChars = (workers: number): number =>
  Math.floor(TEMPLATE_CACHE_CHARS / Math.max(1, Math.floor(workers)));

/** A round's characters at the default four workers. */
export const ROUND_TEMPLATE_CHARS = roundTemplateChars(4);

/** Revisions live pods may run besides the current and update revisions, all held each round. */
export const REVISIONS_IN_USE_CAP = 10;

/** What a template whose size the cache does not know is taken to weigh: the API server's request limit. */
export const UNKNOWN_TEMPLATE_CHARS = 3 * 1024 * 1024;

export interface RoundTemplatesInput {
  readonly currentRevision: string;
  readonly updateRevision: string;
  /** Every pod the CloneSet owns: ended ones are left out here. */
  readonly pods: readonly Pod[];
  /** A revision's template size in characters; undefined: no such revision (its pods' revision is unknown). */
  readonly charsOf: (revision: string) => number | undefined;
  /** Revisions the round's first plan asked for (Plan.templatesWanted): held first. */
  readonly wanted?: readonly string[];
  readonly cap?: number;
  readonly boundChars?: number;
}

export interface RoundTemplates {
  /** Revisions whose templates the round holds, in the order to fetch them (never the update revision: it is the CloneSet's template). */
  readonly hold: readonly string[];
  /** Revisions live pods run whose templates the round does not hold: those pods wait for a round that does. */
  readonly deferred: ReadonlySet<string>;
  /** Distinct known revisions live pods run besides the current and update revisions. */
  readonly inUse: number;
}

/** The revisions the round should hold, within the cap and the character bound. */
export function roundTemplates(input: RoundTemplatesInput): RoundTemplates {
  const { currentRevision, updateRevision, charsOf } = input;
  const cap = input.cap ?? REVISIONS_IN_USE_CAP;
  const { podsOf, midUpdate } = liveRevisions(input);
  const byPods = [...podsOf.keys()].sort((a, b) => podsOf.get(b)! - podsOf.get(a)! || a.localeCompare(b));
  const candidates = new Set([
    ...(input.wanted ?? []).filter((r) => podsOf.has(r)),
    ...[...midUpdate].sort(),
    // Past the cap, the other live revisions wait: only what this round acts on is fetched.
    ...(podsOf.size > cap ? [] : byPods),
  ]);
  // Creates at the current revision need its template: one template is far below the bound.
  const current = currentRevision !== updateRevision && charsOf(currentRevision) !== undefined ? [currentRevision] : [];
  const hold = [
    ...current,
    ...within([...candidates], charsOf, cap, (input.boundChars ?? ROUND_TEMPLATE_CHARS) - sumOf(current, charsOf)),
  ];
  const held = new Set(hold);
  return { hold, deferred: new Set(byPods.filter((r) => !held.has(r))), inUse: podsOf.size };
}

/** Live pods' known revisions besides the current and update ones: pods each, and those of pods mid in-place update. */
function liveRevisions(input: RoundTemplatesInput): { podsOf: Map<string, number>; midUpdate: Set<string> } {
  const podsOf = new Map<string, number>();
  const midUpdate = new Set<string>();
  const skipped = new Set([input.currentRevision, input.updateRevision]);
  for (const pod of input.pods) {
    const revision = podRevision(pod);
    // An ended pod is never updated in place: its revision is not in use (decision 74).
    if (hasEnded(pod) || skipped.has(revision) || input.charsOf(revision) === undefined) continue;
    podsOf.set(revision, (podsOf.get(revision) ?? 0) + 1);
    if (pod.metadata?.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE] !== undefined) midUpdate.add(revision);
  }
  return { podsOf, midUpdate };
}

/** The first `cap` candidates, in order, whose sizes fit in `room` together (a larger one is skipped, not a stop). */
function within(
  candidates: readonly string[],
  charsOf: (r: string) => number | undefined,
  cap: number,
  room: number,
): string[] {
  const taken: string[] = [];
  let left = room;
  for (const revision of candidates) {
    if (taken.length >= cap) break;
    const size = sizeOf(charsOf(revision));
    if (size > left) continue;
    taken.push(revision);
    left -= size;
  }
  return taken;
}

const sumOf = (revisions: readonly string[], charsOf: (r: string) => number | undefined): number =>
  revisions.reduce((sum, r) => sum + sizeOf(charsOf(r)), 0);

const sizeOf = (chars: number | undefined): number => Math.max(1, chars ?? UNKNOWN_TEMPLATE_CHARS);

/** The RevisionsInUse condition: True past the cap, with what to do; null (removed) under it. */
export function revisionsInUseCondition(inUse: number | undefined, cap = REVISIONS_IN_USE_CAP): ConditionWrite | null {
  if (inUse === undefined || inUse <= cap) return null;
  return {
    status: 'True',
    reason: ConditionReasons.TooManyRevisions,
    message:
      `live pods run ${inUse} revisions besides the current and update revisions, more than the ${cap} ` +
      'whose templates a round holds: only the pods the rollout moves next have theirs fetched, the others wait; ' +
      'let the rollout finish (unpause it, lower the partition) or delete pods of old revisions',
  };
}
