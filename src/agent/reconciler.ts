// The node agent's per-pod reconcile (docs/architecture.md §3.2 An agent resize, §5 Trust
// boundaries), in the CloneSet's shape: observe a pod of this node that carries
// `apps.tailor.dev/resize-request` with its evidence, let pure/decide.ts choose, act (report a
// verdict, verify what was applied, or actuate through resize-actuator.ts), and conclude: the
// outcome becomes the status, the metric, the event and the log line in one pure place
// (pure/conclude.ts), and `apps.tailor.dev/resize-status` is written once per round.
// Owns: the sequence of one reconcile and the status patch, events and metrics it ends with.
// Must not: decide (pure/decide.ts does); touch CRI or cgroups (resize-actuator.ts does); act on a
// pod of another node; or write anything but the status annotation.
import { ANNOTATION_RESIZE_STATUS, LABEL_CONTROLLER_REVISION_HASH } from '../api/types.js';
import type { KubeObject, Node, Pod } from '../api/wire.js';
import type { ReconcileResult } from '../api/handler.js';
import type { ControllerRevision } from '../api/revision.js';
import type { PodCgroupOptions } from '../cgroup/pod.js';
import type { CgroupReading } from '../cgroup/container.js';
import type { CriClient } from '../cri/client.js';
import type { ConvertOptions } from '../cri/pure/convert.js';
import {
  encodeResizeStatus,
  readResizeRequest,
  readResizeStatus,
  type Parsed,
  type ResizeRequest,
  type ResizeStatus,
} from '../resize/agent-protocol.js';
import { nodeResizeEvidence } from '../resize/backend.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Informer } from '../runtime/informer.js';
import type { KubeClient } from '../runtime/kube-client.js';
import type { Logger } from '../runtime/logger.js';
import { admit, nodeAllocatable, type AdmissionResult } from './pure/admission.js';
import { AppliedRecords } from './applied.js';
import { recordedResources, type AppliedRecord } from './pure/applied-record.js';
import { workloadOwner, qosClassChange, requestNotInRevision, restartRequiredBy } from './pure/authorize.js';
import { conclude, type Conclusion, type ResizeOutcome } from './pure/conclude.js';
import {
  decide,
  nextStatus,
  restartedContainers,
  type Action,
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
import { ResizeActuator } from './resize-actuator.js';
import type { RevisionTemplates } from './revision-templates.js';

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
  readonly client: Pick<KubeClient, 'patchMetadata'>;
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

/** What one round observed of a pod with a resize request. */
interface Observed {
  readonly pod: Pod;
  readonly request: Parsed<ResizeRequest>;
  readonly status: Parsed<ResizeStatus>;
  readonly nodePods: Pod[];
  readonly kubeletResizes: boolean | undefined;
  readonly revision: ControllerRevision | undefined;
  readonly log: Logger;
}

export class AgentReconciler {
  /** What this agent applied to each pod; rebuilt from CRI and the cgroups after a restart. */
  private readonly applied: AppliedRecords;
  private readonly actuator: ResizeActuator;

  constructor(private readonly o: AgentReconcilerOptions) {
    this.applied = new AppliedRecords({
      runningContainers: (pod, names) => this.actuator.runningContainers(pod, names),
      readContainer: o.readContainer,
      convert: o.convert,
    });
    this.actuator = new ResizeActuator(o, this.applied);
  }

  /** What the agent has recorded as applied to a pod (for tests and metrics). */
  appliedTo(uid: string): AppliedRecord | undefined {
    return this.applied.get(uid);
  }

  /** Drops what is kept about a pod that is gone. */
  forget(uid: string): void {
    this.applied.forget(uid);
  }

  /** Observe → decide → act → conclude; the status annotation is written once, at the end. */
  async reconcile(key: string, reconcileId?: string): Promise<ReconcileResult> {
    const seen = await this.observe(key, reconcileId);
    if (seen === undefined) return undefined;
    const action = decide(seen.pod, seen.request, seen.status, this.evidence(seen));
    const { outcome, revision } = await this.act(seen, action);
    return this.finish(seen, revision, conclude(outcome));
  }

  /** A pod of this node with a resize request (readable or not), with its node's pods and the request's revision. */
  private async observe(key: string, reconcileId: string | undefined): Promise<Observed | undefined> {
    const pod = this.o.pods.get(key);
    if (!pod || pod.spec?.nodeName !== this.o.nodeName) return undefined;
    const request = readResizeRequest(pod);
    if (!request.ok && request.error === undefined) return undefined;
    const nodePods = this.o.pods.list().filter((p) => p.spec?.nodeName === this.o.nodeName);
    const log = this.o.logger.child({ pod: key, ...(reconcileId ? { reconcileId } : {}) });
    const { kubeletResizes } = nodeResizeEvidence(this.o.nodeName, nodePods, this.o.nodes.get(this.o.nodeName));
    if (kubeletResizes !== true) await this.applied.recoverAll(nodePods, log);
    const revision = request.ok
      ? await this.o.revisions.revision(pod.metadata?.namespace ?? '', request.value.revision)
      : undefined;
    return { pod, request, status: readResizeStatus(pod), nodePods, kubeletResizes, revision, log };
  }

  /** Carries out the action; what happened comes back as a value, and the revision its status names. */
  private async act(seen: Observed, action: Action): Promise<{ outcome: ResizeOutcome; revision: string }> {
    switch (action.action) {
      case 'None':
        return { outcome: { kind: 'nothing', why: action.why, retryAfterMs: action.retryAfterMs }, revision: '' };
      case 'Report':
        return {
          outcome: { kind: 'report', status: action.status, retryAfterMs: action.retryAfterMs },
          revision: action.revision,
        };
      case 'Verify': {
        const names = Object.keys(action.request.containers);
        const running = await this.actuator.runningContainers(seen.pod, names);
        const restarted = restartedContainers(action.applied, new Map([...running].map(([n, c]) => [n, c.id])), names);
        if (restarted.length === 0)
          return { outcome: { kind: 'verified', applied: action.applied }, revision: action.request.revision };
        seen.log.info({ containers: restarted }, 'containers restarted since the resize; applying again');
        return { outcome: await this.actuator.actuate(seen.pod, action.request), revision: action.request.revision };
      }
      case 'Actuate':
        return { outcome: await this.actuator.actuate(seen.pod, action.request), revision: action.request.revision };
    }
  }

  /** Carries out the conclusion: the status once, then the metric, the event and the log line; throws a failed round. */
  private async finish(seen: Observed, revision: string, end: Conclusion): Promise<ReconcileResult> {
    const { pod, log } = seen;
    const prev = seen.status.ok ? seen.status.value : undefined;
    const write = end.status ? this.writeStatus(pod, prev, revision, end.status) : Promise.resolve(false);
    const written = end.error
      ? await write.catch((err: unknown) => (log.error({ err }, 'recording the resize error failed'), false))
      : await write;
    if (end.metric && (written || !end.metric.onlyIfWritten))
      this.o.metrics.resizesTotal.inc({ result: end.metric.result });
    if (end.event && written) this.o.events?.event(pod, 'Warning', end.event.reason, end.event.message);
    if (end.log && (written || !end.log.onlyIfWritten))
      log[end.log.level]({ ...(revision ? { revision } : {}), ...end.log.fields }, end.log.message);
    if (end.error)
      throw new Error(`resizing pod ${pod.metadata?.namespace}/${pod.metadata?.name}: ${end.error}`, {
        cause: end.cause,
      });
    return end.result;
  }

  /** The evidence decide() needs, each part from its own source (none from the status annotation). */
  private evidence({ pod, request, revision, kubeletResizes, nodePods }: Observed): Evidence {
    const record = this.applied.get(pod.metadata?.uid ?? '');
    const base = { workloadOwned: workloadOwner(pod) !== undefined, kubeletResizes, applied: record };
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
        base.workloadOwned &&
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
      await this.o.client.patchMetadata(
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
