// The node agent's per-pod reconcile (docs/architecture.md §3.2 An agent resize, §5 Trust
// boundaries): for a pod of this node that carries `apps.tailor.dev/resize-request`, gather the
// evidence, let pure/decide.ts choose, carry it out (report a verdict, actuate, or verify what was
// applied) and record the outcome in `apps.tailor.dev/resize-status`.
// Owns: the sequence of one reconcile and its I/O (CRI, cgroups, the status patch, events, metrics).
// Must not: decide (pure/decide.ts does); act on a pod of another node; write anything but the status
// annotation; or lower a memory limit below current usage (refused and reported as
// InProgress/MemoryLimitBelowUsage, retried).
import { ANNOTATION_RESIZE_STATUS, LABEL_CONTROLLER_REVISION_HASH } from '../api/types.js';
import type { KubeObject, Node, Pod } from '../api/wire.js';
import { podCgroupFromContainer, readPodCgroup, writePodCgroup, type PodCgroupOptions } from '../cgroup/pod.js';
import type { CgroupReading } from '../cgroup/container.js';
import type { CriClient } from '../cri/client.js';
import type { Container } from '../cri/types.js';
import type { ConvertOptions } from '../cri/convert.js';
import {
  encodeResizeStatus,
  readResizeRequest,
  readResizeStatus,
  type Parsed,
  type ResizeRequest,
  type ResizeStatus,
} from '../resize/agent-protocol.js';
import { nodeResizeEvidence } from '../resize/backend.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Informer } from '../runtime/informer.js';
import type { KubeClient } from '../runtime/kube-client.js';
import type { Logger } from '../runtime/logger.js';
import { applyContainerResources, memoryRefusal, type ApplyResult } from './actuate.js';
import { admit, nodeAllocatable, type AdmissionResult } from './pure/admission.js';
import { AppliedRecords } from './applied.js';
import { appliedContainers, currentResources, recordedResources, type AppliedRecord } from './pure/applied-record.js';
import { cloneSetOwner, qosClassChange, requestNotInRevision, restartRequiredBy } from './pure/authorize.js';
import type { ControllerRevision } from '../api/revision.js';
import {
  RETRY_NOT_RUNNING_MS,
  RETRY_REFUSED_MS,
  decide,
  isRefusal,
  nextStatus,
  reportResult,
  restartedContainers,
  type Evidence,
  type StatusUpdate,
} from './pure/decide.js';
import type { AgentMetrics } from './metrics.js';
import {
  namespaceLimitsVerdict,
  type LimitRange,
  type NamespaceLimitsVerdict,
  type ResourceQuota,
} from './pure/namespace-limits.js';
import { planResize, type PlanStep } from './pure/order.js';
import type { RevisionTemplates } from './revision-templates.js';
import { errorMessage } from '../api/errors.js';
import { AgentReasons } from '../api/reasons.js';

export interface AgentReconcilerOptions {
  readonly nodeName: string;
  readonly pods: Pick<Informer<Pod>, 'get' | 'list'>;
  readonly nodes: Pick<Informer<Node>, 'get'>;
  /** CloneSets' ControllerRevisions with their containers, by namespace and name (revision-templates.ts). */
  readonly revisions: Pick<RevisionTemplates, 'revision'>;
  /** Every namespace's LimitRanges and ResourceQuotas (pure/namespace-limits.ts); none when absent. */
  readonly limitRanges?: Pick<Informer<LimitRange>, 'list'>;
  readonly quotas?: Pick<Informer<ResourceQuota>, 'list'>;
  /** The operator lets the agent grow pods past what their namespace's ResourceQuota charged (decision 51). */
  readonly allowGrowthBeyondQuota?: boolean;
  readonly client: Pick<KubeClient, 'patch'>;
  readonly cri: Pick<CriClient, 'listContainers' | 'updateContainerResources'>;
  /** A container's cgroup values (cgroup/container.ts containerCgroupReader). */
  readonly readContainer: (containerId: string) => Promise<CgroupReading>;
  /** A container's cgroup path below the root (cgroup/container.ts containerCgroupPath). */
  readonly containerCgroupPath: (containerId: string) => Promise<string>;
  readonly cgroup: PodCgroupOptions;
  readonly convert: ConvertOptions;
  readonly metrics: AgentMetrics;
  readonly events?: Pick<EventRecorder, 'event'>;
  readonly logger: Logger;
  readonly now?: () => Date;
}

class Refused extends Error {}

export class AgentReconciler {
  /** What this agent applied to each pod; rebuilt from CRI and the cgroups after a restart. */
  private readonly applied: AppliedRecords;

  constructor(private readonly o: AgentReconcilerOptions) {
    this.applied = new AppliedRecords({
      runningContainers: (pod, names) => this.runningContainers(pod, names),
      readContainer: o.readContainer,
      convert: o.convert,
    });
  }

  /** What the agent has recorded as applied to a pod (for tests and metrics). */
  appliedTo(uid: string): AppliedRecord | undefined {
    return this.applied.get(uid);
  }

  /** Drops what is kept about a pod that is gone. */
  forget(uid: string): void {
    this.applied.forget(uid);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const pod = this.o.pods.get(key);
    if (!pod || pod.spec?.nodeName !== this.o.nodeName) return undefined;
    const request = readResizeRequest(pod);
    if (!request.ok && request.error === undefined) return undefined;
    const status = readResizeStatus(pod);
    const nodePods = this.o.pods.list().filter((p) => p.spec?.nodeName === this.o.nodeName);
    const log = this.o.logger.child({ pod: key });
    const evidence = nodeResizeEvidence(this.o.nodeName, nodePods, this.o.nodes.get(this.o.nodeName));
    if (evidence.kubeletResizes !== true) await this.applied.recoverAll(nodePods, log);
    const revision = request.ok
      ? await this.o.revisions.revision(pod.metadata?.namespace ?? '', request.value.revision)
      : undefined;
    const action = decide(
      pod,
      request,
      status,
      this.evidence(pod, request, revision, evidence.kubeletResizes, nodePods),
    );
    const prev = status.ok ? status.value : undefined;
    switch (action.action) {
      case 'None':
        log.debug({ why: action.why }, 'nothing to do');
        return action.retryAfterMs ? { requeueAfterMs: action.retryAfterMs } : undefined;
      case 'Report': {
        const written = await this.writeStatus(pod, prev, action.revision, action.status);
        if (written) {
          const reason = action.status.reason ?? '';
          this.o.metrics.resizesTotal.inc({ result: reportResult(action.status) });
          if (isRefusal(reason))
            this.o.events?.event(
              pod,
              'Warning',
              `Resize${reason}`,
              `node agent refused the resize request: ${action.status.message ?? ''}`,
            );
          log.info({ state: action.status.state, reason, message: action.status.message }, 'resize not applied');
        }
        return action.retryAfterMs ? { requeueAfterMs: action.retryAfterMs } : undefined;
      }
      case 'Verify': {
        const names = Object.keys(action.request.containers);
        const running = await this.runningContainers(pod, names);
        const restarted = restartedContainers(action.applied, new Map([...running].map(([n, c]) => [n, c.id])), names);
        if (restarted.length === 0) {
          // Applied to these very containers: make sure the annotation says so (it is only a report).
          await this.writeStatus(pod, prev, action.request.revision, { state: '', applied: action.applied });
          return undefined;
        }
        log.info({ containers: restarted }, 'containers restarted since the resize; applying again');
        return this.actuate(pod, action.request, prev, log);
      }
      case 'Actuate':
        return this.actuate(pod, action.request, prev, log);
    }
  }

  /** The evidence decide() needs, each part from its own source (none from the status annotation). */
  private evidence(
    pod: Pod,
    request: Parsed<ResizeRequest>,
    revision: ControllerRevision | undefined,
    kubeletResizes: boolean | undefined,
    nodePods: Pod[],
  ): Evidence {
    const record = this.applied.get(pod.metadata?.uid ?? '');
    const base = { cloneSetOwned: cloneSetOwner(pod) !== undefined, kubeletResizes, applied: record };
    if (!request.ok) return { ...base, admission: undefined };
    const r = request.value;
    let qosChange: string | undefined;
    let restart: string | undefined;
    try {
      qosChange = qosClassChange(pod, r);
      restart = restartRequiredBy(pod, r, (name) => recordedResources(record, name));
    } catch {
      // An unreadable quantity: validateRequest reports it first.
    }
    return {
      ...base,
      revisionPending:
        revision === undefined &&
        base.cloneSetOwned &&
        pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] === r.revision,
      notInRevision: requestNotInRevision(pod, r, revision),
      qosChange,
      restartRequired: restart,
      namespaceLimits: this.namespaceLimits(pod, r),
      admission: this.admission(pod, r, nodePods),
    };
  }

  private namespaceLimits(pod: Pod, request: ResizeRequest): NamespaceLimitsVerdict | undefined {
    const ns = pod.metadata?.namespace;
    const inNamespace = <T extends KubeObject>(objects: T[] | undefined): T[] =>
      (objects ?? []).filter((o) => o.metadata?.namespace === ns);
    return namespaceLimitsVerdict(
      pod,
      request,
      inNamespace(this.o.limitRanges?.list()),
      inNamespace(this.o.quotas?.list()),
      this.o.allowGrowthBeyondQuota === true,
    );
  }

  private admission(pod: Pod, request: ResizeRequest, nodePods: Pod[]): AdmissionResult | undefined {
    const node = this.o.nodes.get(this.o.nodeName);
    let allocatable: ReturnType<typeof nodeAllocatable>;
    try {
      allocatable = nodeAllocatable(node?.status?.allocatable);
    } catch {
      return undefined;
    }
    if (allocatable === undefined) return undefined;
    // The other pods count with what this agent applied to them: its own record, never their annotations.
    return admit(request, pod, allocatable, nodePods, this.applied.containersByPod());
  }

  /** The running container of each name (the newest when the runtime lists several). */
  private async runningContainers(pod: Pod, names: readonly string[]): Promise<Map<string, Container>> {
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

  /**
   * Carries out the planned steps in order: pod cgroup writes (refusing a pod memory limit at or
   * below current usage) and container updates through CRI. Stops at a container update the
   * runtime accepted but the cgroup does not show.
   */
  private async applySteps(
    steps: readonly PlanStep[],
    podPath: string,
    running: Map<string, { id: string }>,
  ): Promise<{ changed: boolean; notActuated?: { container: string; resource: string } }> {
    let changed = false;
    for (const step of steps) {
      if (step.kind === 'pod') {
        if (step.resource === 'memory') await this.refuseBelowUsage(podPath, step.values.memoryLimitInBytes);
        await writePodCgroup(podPath, step.values, this.o.cgroup);
        changed = true;
        continue;
      }
      const id = running.get(step.container)?.id ?? '';
      const result: ApplyResult = await applyContainerResources(this.o.cri, id, step.target, {
        readCurrent: this.o.readContainer,
      });
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

  private async actuate(
    pod: Pod,
    request: ResizeRequest,
    prev: ResizeStatus | undefined,
    log: Logger,
  ): Promise<ReconcileResult> {
    const names = Object.keys(request.containers);
    try {
      const running = await this.runningContainers(pod, names);
      const missing = names.filter((n) => !running.has(n));
      if (missing.length > 0) {
        await this.writeStatus(pod, prev, request.revision, {
          state: 'InProgress',
          reason: AgentReasons.ContainerNotRunning,
          message: `container ${missing.join(', ')} is not running`,
        });
        return { requeueAfterMs: RETRY_NOT_RUNNING_MS };
      }
      const record = this.applied.get(pod.metadata?.uid ?? '');
      const current = currentResources(pod, running, record);
      const desired = { ...current, ...request.containers };
      const first = running.get(names[0] ?? '');
      if (first === undefined) throw new Error('a resize request names no container');
      const podPath = podCgroupFromContainer(await this.o.containerCgroupPath(first.id), pod.metadata?.uid ?? '');
      const currentPod = await readPodCgroup(podPath, this.o.cgroup);
      const steps = planResize({
        pod: pod.spec ?? {},
        currentPod,
        current,
        desired,
        resize: names,
        convert: this.o.convert,
      });
      const outcome = await this.applySteps(steps, podPath, running);
      if (outcome.notActuated) {
        await this.writeStatus(pod, prev, request.revision, {
          state: 'InProgress',
          reason: AgentReasons.NotActuated,
          message: `container ${outcome.notActuated.container}: the runtime accepted the ${outcome.notActuated.resource} update but the cgroup does not show it`,
        });
        this.o.metrics.resizesTotal.inc({ result: 'error' });
        return { requeue: true };
      }
      const changed = outcome.changed;

      const applied = appliedContainers(request, running);
      // Containers an earlier request resized and this one does not name keep their values.
      this.applied.set(pod.metadata?.uid ?? '', {
        revision: request.revision,
        containers: { ...(record?.containers ?? {}), ...applied },
      });
      await this.writeStatus(pod, prev, request.revision, { state: '', applied });
      this.o.metrics.resizesTotal.inc({ result: changed ? 'applied' : 'unchanged' });
      log.info({ revision: request.revision, steps: steps.length, changed }, 'resize applied');
      return undefined;
    } catch (err) {
      if (err instanceof Refused) {
        await this.writeStatus(pod, prev, request.revision, {
          state: 'InProgress',
          reason: AgentReasons.MemoryLimitBelowUsage,
          message: err.message,
        });
        this.o.metrics.resizesTotal.inc({ result: 'refused' });
        log.warn({ message: err.message }, 'resize refused');
        return { requeueAfterMs: RETRY_REFUSED_MS };
      }
      this.o.metrics.resizesTotal.inc({ result: 'error' });
      const message = errorMessage(err);
      await this.writeStatus(pod, prev, request.revision, {
        state: 'InProgress',
        reason: AgentReasons.Error,
        message,
      }).catch((writeErr: unknown) => log.error({ err: writeErr }, 'recording the resize error failed'));
      throw new Error(`resizing pod ${pod.metadata?.namespace}/${pod.metadata?.name}: ${message}`, { cause: err });
    }
  }

  /** Merge-patches the status annotation (that annotation alone) when it changed; true when it wrote. */
  private async writeStatus(
    pod: Pod,
    prev: ResizeStatus | undefined,
    revision: string,
    update: StatusUpdate,
  ): Promise<boolean> {
    const next = nextStatus(prev, revision, update, (this.o.now?.() ?? new Date()).toISOString());
    if (next === undefined) return false;
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    try {
      await this.o.client.patch(
        `/api/v1/namespaces/${ns}/pods/${name}`,
        { metadata: { annotations: { [ANNOTATION_RESIZE_STATUS]: encodeResizeStatus(next) } } },
        'merge',
      );
    } catch (err) {
      throw new Error(`writing ${ANNOTATION_RESIZE_STATUS} of pod ${ns}/${name}`, { cause: err });
    }
    return true;
  }
}
