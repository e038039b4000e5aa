// Wires the node agent into a Manager: its informers (the pods bound to this node and this Node,
// read as the node itself so the Node authorizer scopes them, decision 86; LimitRanges and
// ResourceQuotas, decision 51), each cache trimmed to what the agent reads (pure/cache.ts); the
// revisions it is told about, fetched by name (revision-templates.ts, decision 94); the
// AgentReconciler behind one worker; the restart and image pre-pull workers; and the handlers
// that feed their queues (handlers.ts).
// Must not: decide anything about a pod (pure/decide.ts), map a change to keys (handlers.ts), or watch
// pods of other nodes.
import type { CgroupVersion } from '../api/node.js';
import { containerCgroupPath, containerCgroupReader } from '../cgroup/container.js';
import type { CriClient } from '../cri/client.js';
import type { Node, Pod } from '../api/wire.js';
import type { KubeClient } from '../runtime/kube-client.js';
import type { Logger } from '../runtime/logger.js';
import type { Manager } from '../runtime/manager.js';
import { trimLimitRangeForAgent, trimPodForAgent, trimQuotaForAgent } from './pure/cache.js';
import { RevisionTemplates } from './revision-templates.js';
import type { LimitRange, ResourceQuota } from './pure/namespace-limits.js';
import { AgentMetrics } from './metrics.js';
import { AgentReconciler } from './reconciler.js';
import { RestartActuator } from './restart.js';
import { PrePuller } from './prepull.js';
import type { Informer } from '../runtime/informer.js';
import type { KeyQueue } from '../api/handler.js';
import { onPrePullRevisions, prePullHandler, resizeHandlers, restartHandler } from './handlers.js';

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
  /**
   * The node's own identity (the kubelet's client certificate): the agent reads its node's pods,
   * its Node and the pull secrets of its pods as the node, which the Node authorizer limits to
   * this node (decisions 53 and 86). The manager's client (the agent's ServiceAccount) writes.
   */
  readonly asNode: Pick<KubeClient, 'get' | 'list' | 'request'>;
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
    client: options.asNode,
  });
  const nodes = manager.informer<Node>({
    name: 'node',
    path: '/api/v1/nodes',
    fieldSelector: `metadata.name=${node}`,
    client: options.asNode,
  });
  // Revisions by name only: those requests name and those the controller names on this Node
  // (decision 94); the agent checks each one's controller owner against the pod's.
  const revisions = new RevisionTemplates(manager.client);
  // Every namespace's LimitRanges and ResourceQuotas: a resize on this path never reaches their
  // admission, so the agent judges requests against them itself (pure/namespace-limits.ts).
  const limitRanges = manager.informer<LimitRange>({
    name: 'limitranges',
    path: '/api/v1/limitranges',
    transform: trimLimitRangeForAgent,
  });
  const quotas = manager.informer<ResourceQuota>({
    name: 'resourcequotas',
    path: '/api/v1/resourcequotas',
    transform: trimQuotaForAgent,
  });
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
  const controller = manager.controller({
    name: 'agent',
    concurrency: 1,
    reconcile: (key, context) => reconciler.reconcile(key, context.reconcileId),
  });
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
  const restarts = manager.controller({
    name: 'agent-restart',
    concurrency: 1,
    reconcile: (key) => restarter.reconcile(key),
  });
  manager.onShutdown(() => restarter.stop());
  pods.addHandler(restartHandler(restarts.queue));

  const handlers = resizeHandlers({ pods, queue, forget: (uid) => reconciler.forget(uid) });
  pods.addHandler(handlers.pods);
  nodes.addHandler(handlers.node);
  setupPrePull(manager, options, { pods, nodes }, revisions);
  limitRanges.addHandler(handlers.namespaceLimits);
  quotas.addHandler(handlers.namespaceLimits);
  return { reconciler };
}

/**
 * The image pre-pull (prepull.ts): one worker keeps the node's report, `parallelism` workers pull.
 * Any change of this node's pods, or of the revisions the controller names on its Node, may change
 * what is wanted; the manager's resync re-delivers them too.
 */
function setupPrePull(
  manager: Manager,
  options: AgentOptions,
  { pods, nodes }: { pods: Informer<Pod>; nodes: Informer<Node> },
  revisions: RevisionTemplates,
): void {
  const parallelism = options.imagePrePullParallelism ?? 2;
  if (parallelism === 0) return;
  const REPORT = 'report';
  const queues: { pull?: KeyQueue; report?: KeyQueue } = {};
  const puller = new PrePuller({
    nodeName: options.nodeName,
    pods,
    nodes,
    revisions,
    cri: options.cri,
    client: manager.client,
    secrets: options.asNode,
    logger: options.logger,
    registry: manager.metrics.registry,
    schedulePull: (image) => queues.pull?.add(image),
    scheduleReport: () => queues.report?.add(REPORT),
  });
  queues.report = manager.controller({
    name: 'agent-prepull-report',
    concurrency: 1,
    reconcile: () => puller.syncReport(),
  }).queue;
  queues.pull = manager.controller({
    name: 'agent-prepull',
    concurrency: parallelism,
    reconcile: (image) => puller.pull(image),
  }).queue;
  const report = (): void => queues.report?.add(REPORT);
  pods.addHandler(prePullHandler(report));
  nodes.addHandler(onPrePullRevisions(report));
  // The first report says the node pre-pulls, even before anything is wanted; a stopping agent
  // takes it back, so no controller waits for pulls that will not come.
  report();
  manager.onShutdown(() => puller.withdrawReport());
}
