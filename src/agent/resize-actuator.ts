// Carries out a resize the agent decided on (docs/architecture.md §3.2 An agent resize): finds the
// pod's running containers through CRI, plans the kubelet's order across the pod cgroup and the
// containers (pure/order.ts), writes the pod cgroup and updates each container (actuate.ts), and
// keeps the record of what it applied. Returns what happened as a value (pure/conclude.ts turns it
// into the status and the metric), the way RestartActuator stands beside the restart path.
// Owns: the CRI and cgroup I/O of one actuation. Must not: write the pod's status annotation,
// count metrics, decide whether to resize, or lower a memory limit below current usage.
import { podCgroupFromContainer, readPodCgroup, writePodCgroup, type PodCgroupOptions } from '../cgroup/pod.js';
import type { CgroupReading } from '../cgroup/container.js';
import type { CriClient } from '../cri/client.js';
import type { Container } from '../cri/types.js';
import type { ConvertOptions } from '../cri/pure/convert.js';
import type { ResizeRequest } from '../resize/agent-protocol.js';
import type { Pod } from '../api/wire.js';
import { errorMessage } from '../api/errors.js';
import { applyContainerResources, memoryRefusal } from './actuate.js';
import type { AppliedRecords } from './applied.js';
import { appliedContainers, currentResources, type AppliedRecord } from './pure/applied-record.js';
import type { ActuationOutcome } from './pure/conclude.js';
import { planResize, type PlanStep } from './pure/order.js';

export interface ResizeActuatorOptions {
  readonly cri: Pick<CriClient, 'listContainers' | 'updateContainerResources'>;
  /** A container's cgroup values (cgroup/container.ts containerCgroupReader). */
  readonly readContainer: (containerId: string) => Promise<CgroupReading>;
  /** A container's cgroup path below the root (cgroup/container.ts containerCgroupPath). */
  readonly containerCgroupPath: (containerId: string) => Promise<string>;
  readonly cgroup: PodCgroupOptions;
  readonly convert: ConvertOptions;
}

/** A memory limit at or below usage: refused, never applied. */
class Refused extends Error {}

type StepsOutcome = { changed: boolean; notActuated?: { container: string; resource: string } };

export class ResizeActuator {
  constructor(
    private readonly o: ResizeActuatorOptions,
    private readonly applied: AppliedRecords,
  ) {}

  /** The running container of each name (the newest when the runtime lists several). */
  async runningContainers(pod: Pod, names: readonly string[]): Promise<Map<string, Container>> {
    const uid = pod.metadata?.uid ?? '';
    const found = new Map<string, Container>();
    for (const name of names) {
      const list = await this.o.cri.listContainers({
        state: 'CONTAINER_RUNNING',
        labelSelector: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': name },
      });
      const newest = list.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))[0];
      if (newest) found.set(name, newest);
    }
    return found;
  }

  /** Applies the request to the pod's running containers and its pod cgroup; never throws. */
  async actuate(pod: Pod, request: ResizeRequest): Promise<ActuationOutcome> {
    try {
      return await this.tryActuate(pod, request);
    } catch (err) {
      if (err instanceof Refused) return { kind: 'refused', message: err.message };
      return { kind: 'failed', message: errorMessage(err), cause: err };
    }
  }

  private async tryActuate(pod: Pod, request: ResizeRequest): Promise<ActuationOutcome> {
    const names = Object.keys(request.containers);
    const running = await this.runningContainers(pod, names);
    const missing = names.filter((n) => !running.has(n));
    if (missing.length > 0) return { kind: 'notRunning', missing };
    const uid = pod.metadata?.uid ?? '';
    const record = this.applied.get(uid);
    const { steps, podPath } = await this.plan(pod, request, running, record);
    const outcome = await this.applySteps(steps, podPath, running);
    if (outcome.notActuated) return { kind: 'notActuated', ...outcome.notActuated };
    const applied = appliedContainers(request, running);
    // Containers an earlier request resized and this one does not name keep their values.
    this.applied.set(uid, { revision: request.revision, containers: { ...(record?.containers ?? {}), ...applied } });
    return { kind: 'applied', applied, changed: outcome.changed, steps: steps.length };
  }

  /** The kubelet's order of writes for this request, from what the pod cgroup and the containers hold now. */
  private async plan(
    pod: Pod,
    request: ResizeRequest,
    running: Map<string, Container>,
    record: AppliedRecord | undefined,
  ): Promise<{ steps: PlanStep[]; podPath: string }> {
    const names = Object.keys(request.containers);
    const current = currentResources(pod, running, record);
    const first = running.get(names[0] ?? '');
    if (first === undefined) throw new Error('a resize request names no container');
    const podPath = podCgroupFromContainer(await this.o.containerCgroupPath(first.id), pod.metadata?.uid ?? '');
    const steps = planResize({
      pod: pod.spec ?? {},
      currentPod: await readPodCgroup(podPath, this.o.cgroup),
      current,
      desired: { ...current, ...request.containers },
      resize: names,
      convert: this.o.convert,
    });
    return { steps, podPath };
  }

  /**
   * Carries out the planned steps in order: pod cgroup writes (refusing a pod memory limit at or
   * below current usage) and container updates through CRI. Stops at a container update the
   * runtime accepted but the cgroup does not show.
   */
  private async applySteps(
    steps: readonly PlanStep[],
    podPath: string,
    running: Map<string, { id: string }>,
  ): Promise<StepsOutcome> {
    let changed = false;
    for (const step of steps) {
      if (step.kind === 'pod') {
        if (step.resource === 'memory') await this.refuseBelowUsage(podPath, step.values.memoryLimitInBytes);
        await writePodCgroup(podPath, step.values, this.o.cgroup);
        changed = true;
        continue;
      }
      const id = running.get(step.container)?.id ?? '';
      const result = await applyContainerResources(this.o.cri, id, step.target, { readCurrent: this.o.readContainer });
      if (result.outcome === 'ResizeRefused') throw new Refused(`container ${step.container}: ${result.message}`);
      if (result.outcome !== 'Applied') continue;
      changed = true;
      if (!result.actuated) return { changed, notActuated: { container: step.container, resource: step.resource } };
    }
    return { changed };
  }

  /** A pod memory limit that would not be above what the pod uses now is refused, never applied. */
  private async refuseBelowUsage(podPath: string, limit: bigint): Promise<void> {
    const refusal = memoryRefusal(`pod cgroup ${podPath}`, limit, await readPodCgroup(podPath, this.o.cgroup));
    if (refusal !== undefined) throw new Refused(refusal);
  }
}
