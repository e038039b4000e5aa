// Where one pod's in-place update spends its time, for the benches: each pod's first sighting of
// each step — drain (InPlaceUpdateReady False), patch (the new image in the spec), running (the
// new image's container running), gate (InPlaceUpdateReady True again), ready (Ready True again)
// — and the spans between them: drain→patch and running→gate are Tailor's, patch→running and
// gate→Ready the kubelet's (real or simulated). Fed pods by the caller (polling or a watch).
// Owns: the marks. Must not: read the cluster or the clock (the caller says when it saw a pod).
import type { Pod } from '../src/api/wire.js';

const GATE = 'apps.tailor.dev/InPlaceUpdateReady';
type Step = 'drain' | 'patch' | 'running' | 'gate' | 'ready';

export interface Span {
  median: number;
  p90: number;
  /** Pods that passed both ends. */
  pods: number;
}

export interface TimelineShare {
  /** Drain seen → image patch seen (Tailor). */
  drainToPatch: Span;
  /** Image patch seen → new container running (the kubelet). */
  patchToRunning: Span;
  /** New container running → InPlaceUpdateReady True (Tailor). */
  runningToGate: Span;
  /** InPlaceUpdateReady True → Ready (the kubelet: it owns Ready, decision 0007). */
  gateToReady: Span;
}

export interface Wave {
  pods: number;
  firstDrain: number;
  lastDrain: number;
  /** NaN while a pod of the wave is not Ready again. */
  lastReady: number;
}

export class Timeline {
  private readonly marks = new Map<string, Partial<Record<Step, number>>>();

  /** `container`: the container whose image changes; `newImage`: a suffix of its new image. */
  constructor(
    private readonly container: string,
    private readonly newImage: string,
  ) {}

  observe(pod: Pod, at: number): void {
    const name = pod.metadata?.name ?? '';
    const marks = this.marks.get(name) ?? {};
    const condition = (type: string): string | undefined =>
      pod.status?.conditions?.find((c) => c.type === type)?.status;
    const gate = condition(GATE);
    const image = pod.spec?.containers?.find((c) => c.name === this.container)?.image ?? '';
    const status = pod.status?.containerStatuses?.find((c) => c.name === this.container);
    if (gate === 'False') marks.drain ??= at;
    if (marks.drain !== undefined && image.endsWith(this.newImage)) marks.patch ??= at;
    if (marks.patch !== undefined && status?.image?.endsWith(this.newImage) && status.state?.running)
      marks.running ??= at;
    if (marks.running !== undefined && gate === 'True') marks.gate ??= at;
    if (marks.gate !== undefined && condition('Ready') === 'True') marks.ready ??= at;
    this.marks.set(name, marks);
  }

  /**
   * The rollout as waves of `size` pods in the order they were drained: when each wave's first and
   * last pods were drained and when its last pod was Ready again, in ms after `t0`. A pipelined
   * rollout drains wave k+1 while wave k still restarts: its first drain comes before wave k's last Ready.
   */
  waves(size: number, t0: number): Wave[] {
    const drained = [...this.marks.values()].filter((m) => m.drain !== undefined).sort((a, b) => a.drain! - b.drain!);
    const waves: Wave[] = [];
    const step = Math.max(1, size);
    for (let i = 0; i < drained.length; i += step) {
      const wave = drained.slice(i, i + step);
      const readies = wave.map((m) => m.ready ?? Number.NaN);
      waves.push({
        pods: wave.length,
        firstDrain: wave[0]!.drain! - t0,
        lastDrain: wave[wave.length - 1]!.drain! - t0,
        lastReady: Math.max(...readies) - t0,
      });
    }
    return waves;
  }

  share(): TimelineShare {
    const span = (from: Step, to: Step): Span => {
      const xs = [...this.marks.values()]
        .flatMap((m) => (m[from] !== undefined && m[to] !== undefined ? [m[to] - m[from]] : []))
        .sort((a, b) => a - b);
      const at = (q: number): number =>
        xs.length === 0 ? Number.NaN : xs[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;
      return { median: at(0.5), p90: at(0.9), pods: xs.length };
    };
    return {
      drainToPatch: span('drain', 'patch'),
      patchToRunning: span('patch', 'running'),
      runningToGate: span('running', 'gate'),
      gateToReady: span('gate', 'ready'),
    };
  }
}

/** One line: each span's median (and p90), and whose it is. */
export function describeShare(s: TimelineShare, kubelet = 'kubelet'): string {
  const f = (x: Span): string => `${x.median.toFixed(0)} ms (p90 ${x.p90.toFixed(0)})`;
  return (
    `drain→patch ${f(s.drainToPatch)}, patch→running ${f(s.patchToRunning)} (${kubelet}), ` +
    `running→gate ${f(s.runningToGate)}, gate→Ready ${f(s.gateToReady)} (${kubelet}); over ${s.drainToPatch.pods} pods`
  );
}

/** One line per wave: drains from–to and the last Ready, in seconds; "overlaps" when it began before the previous wave ended. */
export function describeWaves(waves: readonly Wave[]): string[] {
  const s = (ms: number): string => (ms / 1000).toFixed(1);
  return waves.map((w, i) => {
    const previous = waves[i - 1];
    const overlap =
      previous && w.firstDrain < previous.lastReady
        ? `, began ${s(previous.lastReady - w.firstDrain)} s before wave ${i} ended`
        : '';
    return `wave ${i + 1} (${w.pods} pods): drained ${s(w.firstDrain)}–${s(w.lastDrain)} s, all Ready at ${s(w.lastReady)} s${overlap}`;
  });
}
