// The ordinals of an InPlaceStatefulSet's pods: which ordinals `replicas` wants (from
// `ordinals.start`, skipping `reserveOrdinals`), and the ordinal a pod's name carries. Pods are
// `<set>-<ordinal>`, so an ordinal is the pod's instance id in the engine's vocabulary.
// Pure. Must not: decide what to create or delete (scale.ts does).
import type { IntOrString } from '../../api/types.js';

/** An inclusive range of reserved ordinals. */
type Reserved = readonly [number, number];

/** `reserveOrdinals` as ranges: an integer or `"a-b"` (the CRD checks both; anything else is ignored). */
export function reservedRanges(reserveOrdinals: readonly IntOrString[] | undefined): Reserved[] {
  const ranges: Reserved[] = [];
  for (const entry of reserveOrdinals ?? []) {
    if (typeof entry === 'number') {
      if (Number.isInteger(entry) && entry >= 0) ranges.push([entry, entry]);
      continue;
    }
    const match = /^(\d+)(?:-(\d+))?$/.exec(entry);
    if (!match) continue;
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (from <= to) ranges.push([from, to]);
  }
  return ranges.sort((a, b) => a[0] - b[0]);
}

/**
 * The `replicas` ordinals the set wants, ascending: from `start`, each reserved ordinal skipped
 * (Advanced StatefulSet's reserveOrdinals: the set keeps its size and goes around them).
 */
export function wantedOrdinals(start: number, replicas: number, reserved: readonly Reserved[]): number[] {
  const wanted: number[] = [];
  let ordinal = start;
  let next = 0;
  while (wanted.length < replicas) {
    while (next < reserved.length && reserved[next]![1] < ordinal) next++;
    const range = reserved[next];
    if (range && range[0] <= ordinal) {
      ordinal = range[1] + 1;
      continue;
    }
    wanted.push(ordinal++);
  }
  return wanted;
}

/** The ordinal in `<set>-<ordinal>`; undefined for any other name (not a pod of this identity). */
export function ordinalOf(podName: string, setName: string): number | undefined {
  if (!podName.startsWith(`${setName}-`)) return undefined;
  const suffix = podName.slice(setName.length + 1);
  return /^(0|[1-9]\d{0,9})$/.test(suffix) ? Number(suffix) : undefined;
}
