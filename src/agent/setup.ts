// Wires the node agent into a Manager: an informer for the pods bound to this node only
// (fieldSelector spec.nodeName), one for this Node, one for CloneSets' ControllerRevisions (the
// agent checks each request against its revision), LimitRanges and ResourceQuotas (checked too;
// decision 51), the caches trimmed to what
// the agent reads (cache.ts), the AgentReconciler behind a controller, and the triggers that
// retry pending resizes (Deferred/Infeasible/InProgress; triggers.ts): any pod of the node coming,
// going or changing, the Node changing, and the manager's periodic resync (runtime/manager.ts:
// every cached pod is re-delivered as an update, so each pod with a request is reconciled again).
// Must not: decide anything about a pod (decide.ts), or watch pods of other nodes.
import { sameJSON } from '../api/json.js';
import { ANNOTATION_RESTART_REQUEST, LABEL_CLONESET } from '../api/types.js';
import type { CgroupVersion } from '../api/node.js';
import { containerCgroupPath, containerCgroupReader } from '../cgroup/container.js';
import type { CriClient } from '../cri/client.js';
import { objectKey } from '../runtime/informer.js';
import type { KubeObject, Node, Pod } from '../api/wire.js';
import type { KubeClient } from '../runtime/kube-client.js';
import type { Logger } from '../runtime/logger.js';
import type { Manager } from '../runtime/manager.js';
import type { ControllerRevision } from './authorize.js';
import { trimLimitRangeForAgent, trimPodForAgent, trimQuotaForAgent, trimRevisionIdentity } from './cache.js';
import { RevisionTemplates } from './revision-templates.js';
import type { LimitRange, ResourceQuota } from './namespace-limits.js';
import { AgentMetrics } from './metrics.js';
import { AgentReconciler } from './reconciler.js';
import { RestartActuator } from './restart.js';
import { PrePuller } from './prepull.js';
import type { Informer } from '../runtime/informer.js';
import type { KeyQueue } from '../api/handler.js';
import { hasRequest, holdingsMayHaveChanged, pending } from './triggers.js';

/** Revisions per list page: each may be as large as its CloneSet (the API server's object size limit). */
const REVISION_PAGE_SIZE = 20;

export interface AgentOptions {
  readonly nodeName: string;
  readonly cri: CriClient;
  readonly cgroupRoot: string;
  readonly cgroupVersion: CgroupVersion;
  readonly swapControllerAvailable: boolean;
  readonly logger: Logger;
  /** Grow pods past what their namespace's ResourceQuota charged (decision 51); default false. */
  readonly allowGrowthBeyondQuota?: boolean;
  /** Images pulled at once ahead of rollouts (prepull.ts); 0 turns the pre-pull off. Default 2. */
  readonly imagePrePullParallelism?: number;
  /** Reads image pull secrets as this node (prepull.ts); none: pre-pulls go without secrets. */
  readonly nodeSecrets?: Pick<KubeClient, 'get'>;
}

export interface AgentHandle {
  readonly reconciler: AgentReconciler;
}

export function setupAgent(manager: Manager, options: AgentOptions): AgentHandle {
  const node = encodeURIComponent(options.nodeName);
  const pods = manager.informer<Pod>({
    name: 'node-pods',
    path: '/api/v1/pods',
    fieldSelector: `spec.nodeName=${node}`,
    transform: trimPodForAgent,
  });
  const nodes = manager.informer<Node>({ name: 'node', path: '/api/v1/nodes', fieldSelector: `metadata.name=${node}` });
  // Only the revisions Tailor's controller made (it labels them with their CloneSet's name); the
  // agent still checks each one's controller owner against the pod's.
  // Identity, owner and number only; the containers of the revisions this node's pods need are
  // fetched when needed (revision-templates.ts). Listed a few at a time: each may be as large as
  // its CloneSet, and a page is parsed whole before it is trimmed.
  const revisionIdentities = manager.informer<ControllerRevision & KubeObject>({
    name: 'controllerrevisions',
    path: '/apis/apps/v1/controllerrevisions',
    labelSelector: LABEL_CLONESET,
    transform: trimRevisionIdentity,
    pageSize: REVISION_PAGE_SIZE,
  });
  const revisions = new RevisionTemplates({ revisions: revisionIdentities, client: manager.client });
  // Every namespace's LimitRanges and ResourceQuotas: a resize on this path never reaches their
  // admission, so the agent judges requests against them itself (namespace-limits.ts).
  const limitRanges = manager.informer<LimitRange>({ name: 'limitranges', path: '/api/v1/limitranges', transform: trimLimitRangeForAgent });
  const quotas = manager.informer<ResourceQuota>({ name: 'resourcequotas', path: '/api/v1/resourcequotas', transform: trimQuotaForAgent });
  const cgroup = { root: options.cgroupRoot, version: options.cgroupVersion };
  const reconciler = new AgentReconciler({
    nodeName: options.nodeName,
    pods,
    nodes,
    revisions,
    limitRanges,
    quotas,
    allowGrowthBeyondQuota: options.allowGrowthBeyondQuota === true,
    client: manager.client,
    events: manager.events,
    cri: options.cri,
    readContainer: containerCgroupReader(options.cri, cgroup),
    containerCgroupPath: (id) => containerCgroupPath(options.cri, id, cgroup),
    cgroup,
    convert: { cgroupVersion: options.cgroupVersion, swapControllerAvailable: options.swapControllerAvailable },
    metrics: new AgentMetrics(manager.metrics.registry),
    logger: options.logger,
  });
  // One worker: admission reads the other pods' applied values, so two resizes admitted at once
  // could together overcommit the node.
  const controller = manager.controller({ name: 'agent', concurrency: 1, reconcile: (key) => reconciler.reconcile(key) });
  const queue = controller.queue;

  // Restarts in place (restart.ts) have their own worker, which only starts each stop: the preStop
  // hook and StopContainer run in the background for up to the pod's grace period, and a stopping
  // agent aborts them (after the workers have stopped, so none starts afterwards).
  const restarter = new RestartActuator({
    pods,
    cri: options.cri,
    retry: (key, delayMs) => restarts.queue.addAfter(key, delayMs),
    events: manager.events,
    logger: options.logger,
    registry: manager.metrics.registry,
  });
  const restarts = manager.controller({ name: 'agent-restart', concurrency: 1, reconcile: (key) => restarter.reconcile(key) });
  manager.onShutdown(() => restarter.stop());
  const wantsRestart = (pod: Pod): boolean => pod.metadata?.annotations?.[ANNOTATION_RESTART_REQUEST] !== undefined;
  const restartIfAsked = (pod: Pod): void => {
    if (wantsRestart(pod)) restarts.queue.add(objectKey(pod));
  };
  pods.addHandler({ onAdd: restartIfAsked, onUpdate: (_, pod) => restartIfAsked(pod) });

  const enqueuePending = (except?: Pod): void => {
    for (const p of pods.list()) if (p !== except && pending(p)) queue.add(objectKey(p));
  };
  pods.addHandler({
    onAdd: (pod) => {
      if (hasRequest(pod)) queue.add(objectKey(pod));
      enqueuePending(pod);
    },
    onUpdate: (oldPod, pod) => {
      if (hasRequest(pod)) queue.add(objectKey(pod));
      // Resources the node holds changed: a phase change, a resize status (applied values) change.
      if (holdingsMayHaveChanged(oldPod, pod)) enqueuePending(pod);
    },
    onDelete: (pod) => {
      reconciler.forget(pod.metadata?.uid ?? '');
      enqueuePending();
    },
  });
  nodes.addHandler({ onAdd: () => enqueuePending(), onUpdate: () => enqueuePending() });
  setupPrePull(manager, options, pods, revisionIdentities, revisions);
  // A LimitRange or quota that changes may turn a refusal into a resize (or the reverse). Only its
  // spec counts: a quota's status moves with every pod of its namespace.
  const namespaceChanged = {
    onAdd: () => enqueuePending(),
    onUpdate: (old: { spec?: unknown }, next: { spec?: unknown }) => {
      if (!sameJSON(old.spec, next.spec)) enqueuePending();
    },
    onDelete: () => enqueuePending(),
  };
  limitRanges.addHandler(namespaceChanged);
  quotas.addHandler(namespaceChanged);
  return { reconciler };
}

/**
 * The image pre-pull (prepull.ts): one worker keeps the node's report, `parallelism` workers pull.
 * Any change of this node's pods or of the revisions may change what is wanted; the manager's
 * resync re-delivers them too.
 */
function setupPrePull(
  manager: Manager,
  options: AgentOptions,
  pods: Informer<Pod>,
  revisionIdentities: Informer<ControllerRevision & KubeObject>,
  revisions: RevisionTemplates,
): void {
  const parallelism = options.imagePrePullParallelism ?? 2;
  if (parallelism === 0) return;
  const REPORT = 'report';
  const queues: { pull?: KeyQueue; report?: KeyQueue } = {};
  const puller = new PrePuller({
    nodeName: options.nodeName,
    pods,
    revisions,
    cri: options.cri,
    client: manager.client,
    secrets: options.nodeSecrets,
    logger: options.logger,
    registry: manager.metrics.registry,
    schedulePull: (image) => queues.pull?.add(image),
    scheduleReport: () => queues.report?.add(REPORT),
  });
  queues.report = manager.controller({ name: 'agent-prepull-report', concurrency: 1, reconcile: () => puller.syncReport() }).queue;
  queues.pull = manager.controller({ name: 'agent-prepull', concurrency: parallelism, reconcile: (image) => puller.pull(image) }).queue;
  const report = (): void => queues.report?.add(REPORT);
  pods.addHandler({ onAdd: report, onUpdate: report, onDelete: report });
  revisionIdentities.addHandler({ onAdd: report, onUpdate: report, onDelete: report });
  // The first report says the node pre-pulls, even before anything is wanted; a stopping agent
  // takes it back, so no controller waits for pulls that will not come.
  report();
  manager.onShutdown(() => puller.withdrawReport());
}
