// status.resize watched as a user watches it, beside the pods' own resizes: a sample every 50 ms of
// the workload's resize counts and of whether any pod's containers still run other resources than
// its spec asks. A kubelet may finish a resize within the status writer's gather window (under a
// second on 1.37), and then no state is ever written, truthfully; what the rule forbids is a resize
// in flight for longer than that with status saying nothing (docs/architecture.md §3.1, decision 34).
// Owns: sampling and the check of that rule. Must not: write anything.
import { expect } from '@jest/globals';
import type { Pod } from '../../../src/api/wire.js';
import type { CloneSetResizeStatus } from '../../../src/api/types.js';
import { resourcesEquivalent } from '../../../src/resize/state.js';
import { STATUS_COUNTS_INTERVAL_MS } from '../../../src/workload/pure/status.js';

export interface ResizeSample {
  at: number;
  /** proposed/inProgress/deferred/infeasible */
  counts: string;
  /** Some pod's running resources differ from its spec's. */
  pending: boolean;
}

const SAMPLE_EVERY_MS = 50;
/** Slack over the status writer's own second: two polls and a write's round trip. */
const OBSERVATION_SLACK_MS = 1_000;
export const NOTHING_RESIZING = '0/0/0/0';
const UNREAD = 'unread';

export const resizeCounts = (r: CloneSetResizeStatus | undefined): string =>
  `${r?.proposed ?? 0}/${r?.inProgress ?? 0}/${r?.deferred ?? 0}/${r?.infeasible ?? 0}`;

/** Whether some container of the pod still runs other cpu/memory than its spec asks (the kubelet's equivalences, resize/state.ts). */
export function resizeInFlight(pod: Pod): boolean {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].some((c) => {
    const running = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].find(
      (s) => s.name === c.name,
    )?.resources;
    return running !== undefined && !resourcesEquivalent(c.resources, running);
  });
}

/**
 * Samples while `during` runs, at least once, and stops whatever `during` does; `read` returns the
 * workload's resize status and its pods.
 */
export async function sampleResizesDuring(
  read: () => Promise<{ resize: CloneSetResizeStatus | undefined; pods: Pod[] }>,
  during: () => Promise<void>,
): Promise<ResizeSample[]> {
  const samples: ResizeSample[] = [];
  let running = true;
  const loop = (async () => {
    do {
      const seen = await read().catch(() => undefined);
      // A failed read ends a spell: what was not seen is not held against status.
      samples.push(
        seen
          ? { at: Date.now(), counts: resizeCounts(seen.resize), pending: seen.pods.some(resizeInFlight) }
          : { at: Date.now(), counts: UNREAD, pending: false },
      );
      await new Promise((done) => setTimeout(done, SAMPLE_EVERY_MS));
    } while (running);
  })();
  try {
    await during();
  } finally {
    running = false;
    await loop;
  }
  return samples;
}

/**
 * Spells of samples with a resize in flight that lasted past the status writer's bound with every
 * sample saying nothing is resizing: each one breaks the rule.
 */
export function unreportedResizeSpells(samples: readonly ResizeSample[]): { fromMs: number; toMs: number }[] {
  const spells: { fromMs: number; toMs: number }[] = [];
  let spell: ResizeSample[] = [];
  const close = (): void => {
    const first = spell[0];
    const last = spell.at(-1);
    if (
      first &&
      last &&
      last.at - first.at > STATUS_COUNTS_INTERVAL_MS + OBSERVATION_SLACK_MS &&
      spell.every((s) => s.counts === NOTHING_RESIZING)
    )
      spells.push({ fromMs: first.at, toMs: last.at });
    spell = [];
  };
  for (const s of samples) {
    if (s.pending) spell.push(s);
    else close();
  }
  close();
  return spells;
}

/** One line for the log: how long resizes were in flight and which states status showed. */
export function describeResizeSamples(samples: readonly ResizeSample[]): string {
  const pending = samples.filter((s) => s.pending);
  const spanMs = pending.length > 0 ? (pending.at(-1)?.at ?? 0) - (pending[0]?.at ?? 0) : 0;
  const states = [...new Set(samples.map((s) => s.counts).filter((c) => c !== NOTHING_RESIZING && c !== UNREAD))];
  return `resize in flight over ${(spanMs / 1000).toFixed(1)} s, status showed ${states.length > 0 ? states.join(', ') : 'no state'} (proposed/inProgress/deferred/infeasible)`;
}

/** Logs what was seen under `label` and fails on any resize in flight that status never showed. */
export function expectEveryResizeReported(label: string, samples: readonly ResizeSample[]): void {
  console.log(`[${label}] ${describeResizeSamples(samples)}`);
  expect(unreportedResizeSpells(samples)).toEqual([]);
}
