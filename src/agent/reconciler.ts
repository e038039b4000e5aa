// The node agent's per-pod reconcile (docs/architecture.md §3.2 An agent resize, §5 Trust boundaries): for a pod of this node that carries
// `apps.tailor.dev/resize-request`, decide (pure: decide()) whether to leave it alone, answer with
// a verdict, actuate the request, or check that what was applied still holds (a restarted
// container gets the spec's resources back and is re-applied); actuate in the kubelet's order
// (order.ts) through the pod cgroup (cgroup/pod.ts) and CRI (actuate.ts); record the outcome
// in `apps.tailor.dev/resize-status` with a merge patch of that annotation alone, only when it
// changed. Every request on a CloneSet pod gets an answer: where the node's kubelet resizes
// (resize/backend.ts evidence) the answer is Infeasible/KubeletResizes, and the controller moves
// the pod to pods/resize. What was applied is kept here, in memory, rebuilt from CRI and the
// cgroups after a restart (recoverAll); the status annotation is a report, never read back as
// truth, so a forged status cannot skip admission.
// Must not: act on a pod of another node, on a pod without an apps.tailor.dev CloneSet controller,
// on a request its CloneSet revision does not ask for, on a QoS class change or a RestartContainer
// resize, on one its namespace's LimitRange forbids or that grows past what its ResourceQuota
// charged (namespace-limits.ts) (refused with a reason and an event); write anything but the status annotation; or lower
// a memory limit below current usage (refused and reported as InProgress/MemoryLimitBelowUsage,
// retried).
import { Counter, type Registry } from 'prom-client';
import { canonicalJSON } from '../api/json.js';
import { resizableContainers } from '../api/pod.js';
import { ANNOTATION_RESIZE_STATUS, LABEL_CONTROLLER_REVISION_HASH, type ResizeState } from '../api/types.js';
import { applyContainerResources, cpuMatches, memoryMatches, memoryRefusal, type ApplyResult } from './actuate.js';
import type { CgroupReading } from '../cgroup/container.js';
import type { Container, CriClient } from '../cri/client.js';
import { toLinuxResources, type ConvertOptions } from '../cri/convert.js';
import { parseQuantity, toBytes, toMilli } from '../api/quantity.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import type { KubeClient } from '../runtime/kube-client.js';
import type { KubeObject, Node, Pod } from '../api/wire.js';
import type { Logger } from '../runtime/logger.js';
import {
  AgentVerdicts,
  encodeResizeStatus,
  readResizeRequest,
  readResizeStatus,
  type ContainerResources,
  type Parsed,
  type ResizeRequest,
  type ResizeStatus,
} from '../resize/agent-protocol.js';
import { nodeResizeEvidence } from '../resize/backend.js';
import type { EventRecorder } from '../runtime/events.js';
import { admit, holdsResources, nodeAllocatable, type AdmissionResult } from './admission.js';
import { cloneSetOwner, qosClassChange, requestNotInRevision, restartRequiredBy, type ControllerRevision } from './authorize.js';
import { namespaceLimitsVerdict, type LimitRange, type NamespaceLimitsVerdict, type ResourceQuota } from './namespace-limits.js';
import { planResize, type PlanStep } from './order.js';
import { podCgroupFromContainer, readPodCgroup, writePodCgroup, type PodCgroupOptions } from '../cgroup/pod.js';

export const AgentReasons = {
  InvalidRequest: 'InvalidRequest',
  MemoryLimitBelowUsage: 'MemoryLimitBelowUsage',
  ContainerNotRunning: 'ContainerNotRunning',
  NotActuated: 'NotActuated',
  Error: 'Error',
} as const;

/** How long a Deferred / Infeasible / refused resize waits before it is tried again without an event. */
export const RETRY_DEFERRED_MS = 30_000;
export const RETRY_INFEASIBLE_MS = 120_000;
export const RETRY_REFUSED_MS = 10_000;
export const RETRY_NOT_RUNNING_MS = 5_000;

/** A status to record (revision and since are filled in by nextStatus). */
export interface StatusUpdate {
  readonly state: ResizeState | '';
  readonly reason?: string;
  readonly message?: string;
  readonly applied?: ResizeStatus['applied'];
}

export type Action =
  | { readonly action: 'None'; readonly why: string; readonly retryAfterMs?: number }
  | { readonly action: 'Report'; readonly revision: string; readonly status: StatusUpdate; readonly retryAfterMs?: number }
  | { readonly action: 'Actuate'; readonly request: ResizeRequest }
  | { readonly action: 'Verify'; readonly request: ResizeRequest; readonly applied: AppliedRecord['containers'] };

/**
 * What is wrong with a well-formed request for this pod, or undefined: a container the pod does
 * not have, an unreadable quantity, a request above its limit, or a limit the pod has and the
 * request drops (CRI cannot remove a limit in place; the API server forbids it too).
 */
export function validateRequest(request: ResizeRequest, pod: Pod): string | undefined {
  const spec = new Map(resizableContainers(pod.spec).map((c) => [c.name, c.resources]));
  for (const [name, r] of Object.entries(request.containers)) {
    if (!spec.has(name)) return `container ${name} is not a resizable container of the pod`;
    for (const resource of ['cpu', 'memory'] as const) {
      const read = (text: string | undefined): bigint | undefined => {
        if (text === undefined) return undefined;
        const q = parseQuantity(text, { allowNegative: false });
        return resource === 'cpu' ? toMilli(q) : toBytes(q);
      };
      let request: bigint | undefined;
      let limit: bigint | undefined;
      try {
        request = read(r.requests?.[resource]);
        limit = read(r.limits?.[resource]);
      } catch (err) {
        return `container ${name}: ${resource}: ${(err as Error).message}`;
      }
      if (request !== undefined && limit !== undefined && request > limit) {
        return `container ${name}: ${resource} request ${r.requests?.[resource]} is above its limit ${r.limits?.[resource]}`;
      }
      if (spec.get(name)?.limits?.[resource] !== undefined && limit === undefined) {
        return `container ${name}: the ${resource} limit cannot be removed in place`;
      }
    }
  }
  return undefined;
}

/** What this agent applied to a pod, kept by the agent itself (never read back from the annotation). */
export interface AppliedRecord {
  /** The revision of the request last applied. */
  readonly revision: string;
  /** Container name → what was applied, and to which container instance. */
  readonly containers: Readonly<Record<string, ContainerResources & { readonly containerID: string }>>;
}

/** What the agent knows about a pod besides its annotations; each part comes from its own source. */
export interface Evidence {
  /** The pod's controller owner is an apps.tailor.dev CloneSet (authorize.ts cloneSetOwner). */
  readonly cloneSetOwned: boolean;
  /** Whether the node's kubelet resizes in place (resize/backend.ts); undefined: no evidence. */
  readonly kubeletResizes: boolean | undefined;
  /** The request's ControllerRevision is not known to the agent yet (its cache may lag). */
  readonly revisionPending?: boolean;
  /** Why the request is not what the CloneSet's revision asks for (authorize.ts). */
  readonly notInRevision?: string | undefined;
  /** Why the request would change the pod's QoS class (authorize.ts). */
  readonly qosChange?: string | undefined;
  /** Why the request needs a container restart the agent does not do (authorize.ts). */
  readonly restartRequired?: string | undefined;
  /** What the namespace's LimitRanges and ResourceQuotas refuse (namespace-limits.ts). */
  readonly namespaceLimits?: NamespaceLimitsVerdict | undefined;
  /** What the agent itself applied to this pod (its in-memory record). */
  readonly applied: AppliedRecord | undefined;
  /** The verdict on the request; undefined when it could not be judged (e.g. the Node is not known yet). */
  readonly admission: AdmissionResult | undefined;
}

const refuse = (revision: string, reason: string, message: string): Action => ({
  action: 'Report',
  revision,
  status: { state: 'Infeasible', reason, message },
  retryAfterMs: RETRY_INFEASIBLE_MS,
});

/**
 * The per-pod decision, pure. `request`/`status` as read from the annotations; the status is
 * only used to name a revision in an answer to an unreadable request — it never stands for what
 * was applied (that is `evidence.applied`, the agent's own record), so a forged status cannot skip
 * admission. Every CloneSet pod with a request gets an answer: a resize, or a verdict.
 */
export function decide(pod: Pod, request: Parsed<ResizeRequest>, status: Parsed<ResizeStatus>, evidence: Evidence): Action {
  if (!request.ok && request.error === undefined) return { action: 'None', why: 'no resize request' };
  if (!evidence.cloneSetOwned) return { action: 'None', why: 'the pod is not controlled by an apps.tailor.dev CloneSet' };
  if (pod.metadata?.deletionTimestamp || !holdsResources(pod)) return { action: 'None', why: 'the pod is terminating or finished' };
  const revision = request.ok ? request.value.revision : status.ok ? status.value.revision : '';
  if (evidence.kubeletResizes === true) {
    return {
      action: 'Report',
      revision,
      status: {
        state: 'Infeasible',
        reason: AgentVerdicts.KubeletResizes,
        message: `the kubelet of node ${pod.spec?.nodeName ?? ''} resizes in place; the agent leaves this pod to it (use pods/resize)`,
      },
    };
  }
  if (!request.ok) return refuse(revision, AgentReasons.InvalidRequest, request.error ?? '');
  const r = request.value;
  const problem = validateRequest(r, pod);
  if (problem !== undefined) return refuse(r.revision, AgentReasons.InvalidRequest, problem);
  if (evidence.revisionPending)
    return { action: 'None', why: `ControllerRevision ${r.revision} is not known yet`, retryAfterMs: RETRY_NOT_RUNNING_MS };
  if (evidence.notInRevision) return refuse(r.revision, AgentVerdicts.NotInRevision, evidence.notInRevision);
  if (evidence.qosChange) return refuse(r.revision, AgentVerdicts.QoSClassChange, evidence.qosChange);
  if (evidence.restartRequired) return refuse(r.revision, AgentVerdicts.RestartContainerUnsupported, evidence.restartRequired);
  if (evidence.namespaceLimits) return refuse(r.revision, AgentVerdicts[evidence.namespaceLimits.reason], evidence.namespaceLimits.message);
  if (evidence.applied?.revision === r.revision) return { action: 'Verify', request: r, applied: evidence.applied.containers };
  const admission = evidence.admission;
  if (admission === undefined) return { action: 'None', why: 'node allocatable is not known yet', retryAfterMs: RETRY_NOT_RUNNING_MS };
  if (admission.decision !== 'Admit') {
    return {
      action: 'Report',
      revision: r.revision,
      status: { state: admission.decision, reason: admission.reason, message: admission.message },
      retryAfterMs: admission.decision === 'Deferred' ? RETRY_DEFERRED_MS : RETRY_INFEASIBLE_MS,
    };
  }
  return { action: 'Actuate', request: r };
}

/** Verdicts that refuse a request outright: recorded with a Warning event on the pod as well. */
const REFUSALS: ReadonlySet<string> = new Set([
  AgentReasons.InvalidRequest,
  AgentVerdicts.NotInRevision,
  AgentVerdicts.QoSClassChange,
  AgentVerdicts.RestartContainerUnsupported,
  AgentVerdicts.OutsideLimitRange,
  AgentVerdicts.GrowthNotChargedToQuota,
]);

/** Containers whose recorded container ID is not the one running now (restarted); not-running ones are left out. */
export function restartedContainers(
  applied: Readonly<Record<string, { readonly containerID?: string }>>,
  running: ReadonlyMap<string, string>,
  names: readonly string[],
): string[] {
  return names.filter((name) => {
    const id = running.get(name);
    return id !== undefined && applied[name]?.containerID !== id;
  });
}

/** The status to write, or undefined when `prev` already says the same (since is kept while the state holds). */
export function nextStatus(prev: ResizeStatus | undefined, revision: string, update: StatusUpdate, now: string): ResizeStatus | undefined {
  const next: ResizeStatus = { revision, state: update.state, since: now };
  if (update.reason) next.reason = update.reason;
  if (update.message) next.message = update.message;
  if (update.applied) next.applied = update.applied;
  if (prev && prev.revision === revision && prev.state === update.state) next.since = prev.since;
  // Field by field: the annotation's JSON may order its keys differently.
  if (
    prev &&
    prev.revision === next.revision &&
    prev.state === next.state &&
    prev.since === next.since &&
    (prev.reason ?? '') === (next.reason ?? '') &&
    (prev.message ?? '') === (next.message ?? '') &&
    canonicalJSON(prev.applied ?? null) === canonicalJSON(next.applied ?? null)
  ) {
    return undefined;
  }
  return next;
}

export type ResizeResult = 'applied' | 'unchanged' | 'deferred' | 'infeasible' | 'refused' | 'kubelet' | 'error';

export class AgentMetrics {
  readonly resizesTotal: Counter<'result'>;
  constructor(registry: Registry) {
    this.resizesTotal = new Counter({
      name: 'tailor_agent_resizes_total',
      help: 'Resize requests handled by the node agent, by result',
      labelNames: ['result'],
      registers: [registry],
    });
  }
}

export interface AgentReconcilerOptions {
  readonly nodeName: string;
  readonly pods: Pick<Informer<Pod>, 'get' | 'list'>;
  readonly nodes: Pick<Informer<Node>, 'get'>;
  /** CloneSets' ControllerRevisions, keyed namespace/name. */
  readonly revisions: Pick<Informer<ControllerRevision & KubeObject>, 'get'>;
  /** Every namespace's LimitRanges and ResourceQuotas (namespace-limits.ts); none when absent. */
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
  /** Pod UID → what this agent applied to it. Rebuilt from CRI and the cgroups after a restart (recover). */
  private readonly applied = new Map<string, AppliedRecord>();
  /** `uid/revision` pairs whose record recover() has already tried to rebuild. */
  private readonly recovered = new Set<string>();

  constructor(private readonly o: AgentReconcilerOptions) {}

  /** What the agent has recorded as applied to a pod (for tests and metrics). */
  appliedTo(uid: string): AppliedRecord | undefined {
    return this.applied.get(uid);
  }

  /** Drops what is kept about a pod that is gone. */
  forget(uid: string): void {
    this.applied.delete(uid);
    for (const key of this.recovered) if (key.startsWith(`${uid}/`)) this.recovered.delete(key);
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
    if (evidence.kubeletResizes !== true) await this.recoverAll(nodePods, log);
    const action = decide(pod, request, status, this.evidence(pod, request, evidence.kubeletResizes, nodePods));
    const prev = status.ok ? status.value : undefined;
    switch (action.action) {
      case 'None':
        log.debug({ why: action.why }, 'nothing to do');
        return action.retryAfterMs ? { requeueAfterMs: action.retryAfterMs } : undefined;
      case 'Report': {
        const written = await this.writeStatus(pod, prev, action.revision, action.status);
        if (written) {
          const reason = action.status.reason ?? '';
          const result: ResizeResult =
            reason === AgentVerdicts.KubeletResizes
              ? 'kubelet'
              : REFUSALS.has(reason)
                ? 'refused'
                : action.status.state === 'Deferred'
                  ? 'deferred'
                  : 'infeasible';
          this.o.metrics.resizesTotal.inc({ result });
          if (REFUSALS.has(reason))
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
  private evidence(pod: Pod, request: Parsed<ResizeRequest>, kubeletResizes: boolean | undefined, nodePods: Pod[]): Evidence {
    const record = this.applied.get(pod.metadata?.uid ?? '');
    const base = { cloneSetOwned: cloneSetOwner(pod) !== undefined, kubeletResizes, applied: record };
    if (!request.ok) return { ...base, admission: undefined };
    const r = request.value;
    const revision = this.o.revisions.get(`${pod.metadata?.namespace ?? ''}/${r.revision}`);
    const current = (name: string): ContainerResources | undefined => {
      const done = record?.containers[name];
      return done ? { ...(done.requests ? { requests: done.requests } : {}), ...(done.limits ? { limits: done.limits } : {}) } : undefined;
    };
    let qosChange: string | undefined;
    let restart: string | undefined;
    try {
      qosChange = qosClassChange(pod, r);
      restart = restartRequiredBy(pod, r, current);
    } catch {
      // An unreadable quantity: validateRequest reports it first.
    }
    return {
      ...base,
      revisionPending:
        revision === undefined && base.cloneSetOwned && pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] === r.revision,
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
    const applied = new Map<string, Record<string, ContainerResources>>();
    for (const [uid, record] of this.applied) applied.set(uid, record.containers);
    return admit(request, pod, allocatable, nodePods, applied);
  }

  /**
   * Rebuilds the record of what was applied (after an agent restart, or for a pod not seen yet)
   * from the node itself: a CloneSet pod's request counts as applied when every container it names
   * runs and its cgroup holds the request's values (CRI finds the containers, the cgroup files
   * give the values). Each pod and revision is tried once; afterwards actuate() keeps the record.
   */
  private async recoverAll(nodePods: Pod[], log: Logger): Promise<void> {
    const live = new Set(nodePods.map((p) => p.metadata?.uid ?? ''));
    for (const uid of this.applied.keys()) if (!live.has(uid)) this.forget(uid);
    for (const pod of nodePods) {
      const request = readResizeRequest(pod);
      const uid = pod.metadata?.uid ?? '';
      if (!request.ok || !cloneSetOwner(pod) || !holdsResources(pod) || this.applied.get(uid)?.revision === request.value.revision)
        continue;
      const key = `${uid}/${request.value.revision}`;
      if (this.recovered.has(key)) continue;
      this.recovered.add(key);
      try {
        const record = await this.recover(pod, request.value);
        if (record) {
          this.applied.set(uid, record);
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

  private async recover(pod: Pod, request: ResizeRequest): Promise<AppliedRecord | undefined> {
    const names = Object.keys(request.containers);
    const running = await this.runningContainers(pod, names);
    const containers: Record<string, ContainerResources & { containerID: string }> = {};
    for (const name of names) {
      const id = running.get(name)?.id;
      const wanted = request.containers[name] ?? {};
      if (id === undefined) return undefined;
      const target = toLinuxResources(wanted, this.o.convert);
      const reading = await this.o.readContainer(id);
      if (!memoryMatches(target, reading) || !cpuMatches(target, reading)) return undefined;
      containers[name] = {
        containerID: id,
        ...(wanted.requests ? { requests: wanted.requests } : {}),
        ...(wanted.limits ? { limits: wanted.limits } : {}),
      };
    }
    return { revision: request.revision, containers };
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
      const result: ApplyResult = await applyContainerResources(this.o.cri, id, step.target, { readCurrent: this.o.readContainer });
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

  private async actuate(pod: Pod, request: ResizeRequest, prev: ResizeStatus | undefined, log: Logger): Promise<ReconcileResult> {
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
      const steps = planResize({ pod: pod.spec ?? {}, currentPod, current, desired, resize: names, convert: this.o.convert });
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

      const applied: Record<string, ContainerResources & { containerID: string }> = {};
      for (const name of names) {
        const r = request.containers[name] ?? {};
        applied[name] = {
          containerID: running.get(name)?.id ?? '',
          ...(r.requests ? { requests: r.requests } : {}),
          ...(r.limits ? { limits: r.limits } : {}),
        };
      }
      // Containers an earlier request resized and this one does not name keep their values.
      this.applied.set(pod.metadata?.uid ?? '', { revision: request.revision, containers: { ...(record?.containers ?? {}), ...applied } });
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
      const message = err instanceof Error ? err.message : String(err);
      await this.writeStatus(pod, prev, request.revision, { state: 'InProgress', reason: AgentReasons.Error, message }).catch(
        (writeErr: unknown) => log.error({ err: writeErr }, 'recording the resize error failed'),
      );
      throw new Error(`resizing pod ${pod.metadata?.namespace}/${pod.metadata?.name}: ${message}`, { cause: err });
    }
  }

  /** Merge-patches the status annotation when it changed; true when it wrote. */
  private async writeStatus(pod: Pod, prev: ResizeStatus | undefined, revision: string, update: StatusUpdate): Promise<boolean> {
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

/**
 * What each container runs with now: what the agent applied to this very container instance (its
 * own record, never the annotation), else its spec.
 */
function currentResources(
  pod: Pod,
  running: Map<string, { id: string }>,
  record: AppliedRecord | undefined,
): Record<string, ContainerResources> {
  const current: Record<string, ContainerResources> = {};
  for (const c of resizableContainers(pod.spec)) {
    const done = record?.containers[c.name];
    const id = running.get(c.name)?.id;
    current[c.name] =
      done && (id === undefined || done.containerID === id) ? { requests: done.requests, limits: done.limits } : (c.resources ?? {});
  }
  return current;
}
