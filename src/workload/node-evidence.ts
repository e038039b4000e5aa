// What each node's pods say about its kubelet (resize/backend.ts's rule), kept up to date from the
// pods informer's changes: a change moves one pod between a node's witnesses, so a round reads a
// node's evidence in constant time instead of re-reading every pod on the node (decision 33).
// Owns: the witnesses per node. Must not: decide a backend (resize/backend.ts does), or keep a pod
// the informer no longer holds.
import type { InformerHandler } from '../api/handler.js';
import type { Pod } from '../api/wire.js';
import { evidenceFrom, podTestifies, type NodeResizeEvidence } from '../resize/backend.js';

type Testimony = NonNullable<ReturnType<typeof podTestifies>>;
const keyOf = (pod: Pod): string => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;

export class NodeEvidenceIndex implements InformerHandler<Pod> {
  /** By node, then by testimony: the pods that give it, by key. */
  private readonly witnesses = new Map<string, Record<Testimony, Map<string, Pod>>>();
  /** Where each witness is filed, to move or drop it on its next change. */
  private readonly filed = new Map<string, { node: string; says: Testimony }>();

  onAdd(pod: Pod): void {
    this.file(pod);
  }

  onUpdate(_old: Pod, pod: Pod): void {
    this.file(pod);
  }

  onDelete(pod: Pod): void {
    this.unfile(keyOf(pod));
  }

  /** The evidence about `node`'s kubelet from the pods on it now. */
  get(node: string): NodeResizeEvidence {
    const on = this.witnesses.get(node);
    return evidenceFrom(node, first(on?.resizes), first(on?.silent));
  }

  private file(pod: Pod): void {
    const key = keyOf(pod);
    const node = pod.spec?.nodeName ?? '';
    const says = node === '' ? undefined : podTestifies(pod);
    const was = this.filed.get(key);
    if (was && (was.node !== node || was.says !== says)) this.unfile(key);
    if (says === undefined) return;
    let on = this.witnesses.get(node);
    if (!on) this.witnesses.set(node, (on = { resizes: new Map(), silent: new Map() }));
    // The newest version of the pod, so the evidence names it as it is.
    on[says].set(key, pod);
    this.filed.set(key, { node, says });
  }

  private unfile(key: string): void {
    const was = this.filed.get(key);
    if (!was) return;
    this.filed.delete(key);
    const on = this.witnesses.get(was.node);
    on?.[was.says].delete(key);
    if (on && on.resizes.size === 0 && on.silent.size === 0) this.witnesses.delete(was.node);
  }
}

const first = (pods: Map<string, Pod> | undefined): Pod | undefined => pods?.values().next().value;
