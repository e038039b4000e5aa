// What the node agent applied to each pod of its node (docs/architecture.md §3.2 An agent resize,
// §5 Trust boundaries), kept in memory by the agent itself, and its rebuild from the node after an
// agent restart or for a pod not seen yet: a CloneSet pod's request counts as applied when every
// container it names runs and its cgroup holds the request's values (CRI finds the containers,
// the cgroup files give the values).
// Owns: the records (AppliedRecords) and their recovery; the record's shape and what a container
// runs with according to it are pure/applied-record.ts's.
// Must not: read the status annotation back as truth (it is only a report; a forged one must not
// skip admission); write to the node or the API server; decide anything about a request (pure/decide.ts).
import type { Pod } from '../api/wire.js';
import type { CgroupReading } from '../cgroup/container.js';
import { toLinuxResources, type ConvertOptions } from '../cri/pure/convert.js';
import { readResizeRequest, type ContainerResources, type ResizeRequest } from '../resize/agent-protocol.js';
import type { Logger } from '../runtime/logger.js';
import { cpuMatches, memoryMatches } from './actuate.js';
import { holdsResources } from './pure/admission.js';
import { appliedContainers, type AppliedRecord, type RunningContainers } from './pure/applied-record.js';
import { workloadOwner } from './pure/authorize.js';

export interface NodeReaders {
  /** The running container of each name (CRI). */
  readonly runningContainers: (pod: Pod, names: readonly string[]) => Promise<RunningContainers>;
  /** A container's cgroup values (cgroup/container.ts containerCgroupReader). */
  readonly readContainer: (containerId: string) => Promise<CgroupReading>;
  readonly convert: ConvertOptions;
}

/** Pod UID → what this agent applied to it; rebuilt from the node (recoverAll) after a restart. */
export class AppliedRecords {
  private readonly records = new Map<string, AppliedRecord>();
  /** `uid/revision` pairs whose record recoverAll() has already tried to rebuild. */
  private readonly recovered = new Set<string>();

  constructor(private readonly node: NodeReaders) {}

  get(uid: string): AppliedRecord | undefined {
    return this.records.get(uid);
  }

  set(uid: string, record: AppliedRecord): void {
    this.records.set(uid, record);
  }

  /** Pod UID → the containers applied to it, for admission to count the other pods. */
  containersByPod(): Map<string, Record<string, ContainerResources>> {
    const applied = new Map<string, Record<string, ContainerResources>>();
    for (const [uid, record] of this.records) applied.set(uid, record.containers);
    return applied;
  }

  /** Drops what is kept about a pod that is gone. */
  forget(uid: string): void {
    this.records.delete(uid);
    for (const key of this.recovered) if (key.startsWith(`${uid}/`)) this.recovered.delete(key);
  }

  /**
   * Forgets the pods that left the node and rebuilds the record of the others' requests from the
   * node itself. Each pod and revision is tried once; afterwards the reconciler keeps the record.
   */
  async recoverAll(nodePods: Pod[], log: Logger): Promise<void> {
    const live = new Set(nodePods.map((p) => p.metadata?.uid ?? ''));
    for (const uid of this.records.keys()) if (!live.has(uid)) this.forget(uid);
    for (const pod of nodePods) {
      const request = this.toRecover(pod);
      if (request === undefined) continue;
      try {
        const record = await this.recover(pod, request);
        if (record) {
          this.records.set(pod.metadata?.uid ?? '', record);
          log.info(
            { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, revision: record.revision },
            'found an applied resize on the node',
          );
        }
      } catch (err) {
        log.warn({ err, pod: pod.metadata?.name }, 'could not read what the node applied; the resize is judged again');
      }
    }
  }

  /** The request of a CloneSet pod holding resources whose record is still to rebuild; marks it tried. */
  private toRecover(pod: Pod): ResizeRequest | undefined {
    const request = readResizeRequest(pod);
    const uid = pod.metadata?.uid ?? '';
    if (
      !request.ok ||
      !workloadOwner(pod) ||
      !holdsResources(pod) ||
      this.records.get(uid)?.revision === request.value.revision
    )
      return undefined;
    const key = `${uid}/${request.value.revision}`;
    if (this.recovered.has(key)) return undefined;
    this.recovered.add(key);
    return request.value;
  }

  private async recover(pod: Pod, request: ResizeRequest): Promise<AppliedRecord | undefined> {
    const names = Object.keys(request.containers);
    const running = await this.node.runningContainers(pod, names);
    for (const name of names) {
      const id = running.get(name)?.id;
      if (id === undefined) return undefined;
      const target = toLinuxResources(request.containers[name] ?? {}, this.node.convert);
      const reading = await this.node.readContainer(id);
      if (!memoryMatches(target, reading) || !cpuMatches(target, reading)) return undefined;
    }
    return { revision: request.revision, containers: appliedContainers(request, running) };
  }
}
