// Records every pod event of a label selector from a real watch, so tests can assert what
// happened *during* a rollout: how many pods were ever created, the most that were unavailable
// at once, and the order pods left a revision.
import { LABEL_CONTROLLER_REVISION_HASH } from '../../../src/api/types.js';
import type { KubeClient } from '../../../src/runtime/kube-client.js';
import type { Pod } from '../../../src/api/wire.js';
import { streamWatch } from './watch-stream.js';

export class PodWatch {
  readonly uidsEverSeen = new Set<string>();
  private readonly ready = new Map<string, boolean>();
  private maxUnavailableSeen = 0;
  private readonly started = Date.now();
  /** Every change of a pod's Ready (or its going), with the conditions that came with it. */
  private readonly transitions: string[] = [];
  private readonly abort = new AbortController();
  private readonly revisions = new Map<string, string>();
  /** Each pod that stopped carrying a revision (relabelled or gone), in the order seen. */
  private readonly departures: { name: string; revision: string }[] = [];
  /** Each present pod's node, and the most pods of one node not Ready at any moment. */
  private readonly nodes = new Map<string, string>();
  private readonly maxNotReadyOnNode = new Map<string, number>();
  /** Each pod's spells out of service (not Ready), from the watch's start. */
  private readonly notReadySpells = new Map<string, { from: number; to?: number }[]>();

  /** Pods that exist now (terminating ones included, until deleted), and the most at once. */
  private readonly present = new Set<string>();
  private maxPresentSeen = 0;

  private constructor(private readonly desired: number) {}

  static async start(client: KubeClient, namespace: string, labelSelector: string, desired: number): Promise<PodWatch> {
    const w = new PodWatch(desired);
    // Seed from a list, then watch from its resourceVersion: the watch's synthetic initial ADDED
    // events would otherwise look like pods appearing one by one.
    const path = `/api/v1/namespaces/${namespace}/pods`;
    const initial = await client.list<Pod>(path, { labelSelector });
    for (const pod of initial.items) w.record({ type: 'ADDED', object: pod });
    w.maxUnavailableSeen = 0;
    w.maxPresentSeen = w.present.size;
    w.maxNotReadyOnNode.clear();
    w.transitions.length = 0;
    w.departures.length = 0;
    w.notReadySpells.clear();
    await streamWatch<Pod>(
      client,
      path,
      { labelSelector, resourceVersion: initial.metadata?.resourceVersion },
      w.abort.signal,
      (event) => w.record(event),
    );
    return w;
  }

  /** The most pods short of `desired` ready pods at any moment since the watch started. */
  get maxUnavailable(): number {
    return this.maxUnavailableSeen;
  }

  /** The most pods that existed at once since the watch started (terminating ones count until deleted). */
  get maxPresent(): number {
    return this.maxPresentSeen;
  }

  /** Fails with every Ready transition seen when more than `budget` pods were ever unavailable at once. */
  expectUnavailableAtMost(budget: number): void {
    if (this.maxUnavailableSeen <= budget) return;
    throw new Error(
      `${this.maxUnavailableSeen} pods were unavailable at once (budget ${budget}); Ready transitions:\n${this.transitions.join('\n')}`,
    );
  }

  /** Per node, the most of its (present, scheduled) pods that were not Ready at once since the watch started. */
  notReadyAtOnceByNode(): Map<string, number> {
    return new Map(this.maxNotReadyOnNode);
  }

  /** The pods that left `revision` since the watch started, first to leave first. */
  leftRevision(revision: string): string[] {
    return this.departures.filter((d) => d.revision === revision).map((d) => d.name);
  }

  /** Each pod that was not Ready at some moment since the watch started: when it first left service (ms since epoch) and for how long in all. */
  outOfService(): Map<string, { firstLeftAt: number; totalMs: number }> {
    const out = new Map<string, { firstLeftAt: number; totalMs: number }>();
    const end = Date.now();
    for (const [name, spells] of this.notReadySpells) {
      const first = spells[0];
      if (first === undefined) continue;
      out.set(name, { firstLeftAt: first.from, totalMs: spells.reduce((sum, s) => sum + ((s.to ?? end) - s.from), 0) });
    }
    return out;
  }

  stop(): void {
    this.abort.abort();
  }

  /** A pod that was Ready and is no longer opens a spell; one that is Ready again closes it. */
  private trackSpell(name: string, was: boolean | undefined, now: boolean | undefined): void {
    const spells = this.notReadySpells.get(name) ?? [];
    if (was === true && now !== true) this.notReadySpells.set(name, [...spells, { from: Date.now() }]);
    const open = spells.at(-1);
    if (was !== true && now === true && open !== undefined && open.to === undefined) open.to = Date.now();
  }

  private trackNode(name: string, node: string | undefined): void {
    if (node === undefined || node === '') this.nodes.delete(name);
    else this.nodes.set(name, node);
    for (const onNode of new Set(this.nodes.values())) {
      const notReady = [...this.nodes].filter(([pod, n]) => n === onNode && this.ready.get(pod) !== true).length;
      this.maxNotReadyOnNode.set(onNode, Math.max(this.maxNotReadyOnNode.get(onNode) ?? 0, notReady));
    }
  }

  private record(event: { type: string; object: Pod }): void {
    const meta = event.object.metadata;
    if (!meta?.name) return;
    if (meta.uid) this.uidsEverSeen.add(meta.uid);
    if (event.type === 'DELETED') this.present.delete(meta.name);
    else this.present.add(meta.name);
    this.maxPresentSeen = Math.max(this.maxPresentSeen, this.present.size);
    const was = this.ready.get(meta.name);
    const revisionBefore = this.revisions.get(meta.name);
    const gone = event.type === 'DELETED' || !!meta.deletionTimestamp;
    const revisionNow = gone ? undefined : meta.labels?.[LABEL_CONTROLLER_REVISION_HASH];
    if (revisionNow === undefined) this.revisions.delete(meta.name);
    else this.revisions.set(meta.name, revisionNow);
    if (revisionBefore !== undefined && revisionBefore !== revisionNow)
      this.departures.push({ name: meta.name, revision: revisionBefore });
    if (gone) this.ready.delete(meta.name);
    else
      this.ready.set(
        meta.name,
        event.object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      );
    const now = this.ready.get(meta.name);
    this.trackSpell(meta.name, was, now);
    this.trackNode(meta.name, gone ? undefined : event.object.spec?.nodeName);
    const readyNow = [...this.ready.values()].filter(Boolean).length;
    this.maxUnavailableSeen = Math.max(this.maxUnavailableSeen, this.desired - readyNow);
    if (now !== was) {
      const conditions = (event.object.status?.conditions ?? []).map(
        (c) => `${c.type}=${c.status}${c.reason ? `(${c.reason})` : ''}`,
      );
      const at = ((Date.now() - this.started) / 1000).toFixed(2);
      this.transitions.push(
        `+${at}s ${meta.name} ready=${now ?? 'gone'} unavailable=${this.desired - readyNow} ${conditions.join(' ')}`,
      );
    }
  }
}
