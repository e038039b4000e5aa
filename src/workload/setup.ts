// Wires one workload kind's controller into a Manager (decision 88: one engine, a kind is a
// profile, pure/kind.ts): informers for the kind's objects, their pods, ControllerRevisions and
// PersistentVolumeClaims (indexed by owner), the handlers that turn changes into workload keys and
// feed the expectations (handlers.ts, refusal-handlers.ts), and the controller that runs
// WorkloadReconciler, the engine's reconcile. Must not: decide anything about a workload, or name a kind.
import { API_GROUP, API_VERSION, LABEL_INSTANCE_ID } from '../api/types.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.js';
import { ownedIndexValue } from '../api/owner.js';
import type { WorkloadKind } from './pure/kind.js';
import { byControllerOf, enqueueKeys, enqueueOwner } from '../runtime/handlers.js';
import { byNodeName, type Informer } from '../runtime/informer.js';
import type { WorkQueue } from '../runtime/workqueue.js';
import type { InformerHandler } from '../api/handler.js';
import { objectKey } from '../runtime/store.js';
import type { KubeObject, Node, Pod, WireCloneSet } from '../api/wire.js';
import { DEFAULT_PREPULL_TIMEOUT_MS } from '../inplace/pure/prepull.js';
import type { Manager } from '../runtime/manager.js';
import type { Logger } from '../runtime/logger.js';
import { NodeEvidenceIndex } from './node-evidence.js';
import { WorkloadReconciler, NODE_INDEX } from './reconciler.js';
import { trimRevision, OWNER_INDEX } from './revision-store.js';
import type { ControllerRevision } from '../api/revision.js';
import { InPlaceUpdater } from '../inplace/engine.js';
import {
  byOrphanNamespace,
  byWorkloadLabel,
  cloneSetHandler,
  ORPHAN_INDEX,
  orphanHandler,
  podEventWindowMs,
  podHandler,
  WORKLOAD_LABEL_INDEX,
} from './handlers.js';
import { matchesSelector } from './pure/selector.js';
import { trimNodeForPrePull, wakeOnPrePullReport } from './prepull-nodes.js';
import { prePullPublisher } from './prepull-publisher.js';
import { podTrimmer, type SelectorOf } from './pure/pod-cache.js';
import { trimClaim, type Claim } from './pure/claims.js';
import { roundTemplateChars } from './pure/round-templates.js';
import {
  trimAdmissionLimit,
  wakeRefusedOnLimitChange,
  writesRefused,
  type AdmissionLimit,
} from './pure/refusal-handlers.js';
import { InPlaceMetrics } from '../inplace/metrics.js';
import { ResizeMetrics } from './resize-metrics.js';

const NAMESPACE_INDEX = 'namespace';
/**
 * Revisions per list page: each may be as large as its CloneSet (the API server's object size
 * limit), and a page is parsed in one piece, holding the event loop: five of 1.5 MB parse in
 * tens of ms, twenty took seconds on a busy node (issue 47).
 */
const REVISION_PAGE_SIZE = 5;

export interface WorkloadControllerOptions {
  namespace?: string;
  /** Label selector of the workloads to reconcile (others are never seen); default all. */
  cloneSetSelector?: string;
  workers: number;
  logger: Logger;
  resizeBackend?: 'auto' | 'kubelet' | 'agent';
  /** How long a drain waits for the node agent to pull new images (inplace/pure/prepull.ts); 0 never waits. Default 120 s. */
  imagePrePullTimeoutMs?: number;
}

/** The engine's metrics, registered once per manager and shared by every kind it runs. */
const metricsByManager = new WeakMap<Manager, { inPlace: InPlaceMetrics; resize: ResizeMetrics }>();
function engineMetrics(manager: Manager): { inPlace: InPlaceMetrics; resize: ResizeMetrics } {
  let metrics = metricsByManager.get(manager);
  if (!metrics) {
    const { registry } = manager.metrics;
    metrics = { inPlace: new InPlaceMetrics(registry), resize: new ResizeMetrics(registry) };
    metricsByManager.set(manager, metrics);
  }
  return metrics;
}

/**
 * The informers every kind reads the same way (nodes, quotas, LimitRanges), one per manager and
 * path: each kind adds its own handlers, and the cluster is listed and watched once (decision 88).
 */
const sharedInformers = new WeakMap<Manager, Map<string, Informer<KubeObject>>>();

function sharedInformer<T extends KubeObject>(
  manager: Manager,
  options: { name: string; path: string; transform: (object: T) => T },
): Informer<T> {
  let byPath = sharedInformers.get(manager);
  if (!byPath) sharedInformers.set(manager, (byPath = new Map<string, Informer<KubeObject>>()));
  const existing = byPath.get(options.path);
  if (existing) return existing as unknown as Informer<T>;
  const informer = manager.informer<T>(options);
  byPath.set(options.path, informer as unknown as Informer<KubeObject>);
  return informer;
}

/** A kind's informer's name: the kinds after the first prefix theirs, so metrics and logs tell them apart. */
const informerName = (kind: WorkloadKind, resource: string): string => `${kind.informerPrefix}${resource}`;

export function setupWorkloadController(
  manager: Manager,
  kind: WorkloadKind,
  options: WorkloadControllerOptions,
): WorkloadReconciler {
  const scope = options.namespace ? `/namespaces/${options.namespace}` : '';
  const cloneSets = manager.informer<WireCloneSet>({
    name: informerName(kind, kind.plural),
    path: `/apis/${API_GROUP}/${API_VERSION}${scope}/${kind.plural}`,
    ...(options.cloneSetSelector ? { labelSelector: options.cloneSetSelector } : {}),
  });
  // Only pods Tailor created carry the instance-id label: the cache stays small on big clusters,
  // and it holds only the fields the controller reads (pod-cache.ts); of an ended pod, the labels
  // its CloneSet's selector reads (decision 74).
  const selectorOf = cloneSetSelectors(cloneSets);
  const pods = manager.informer<Pod>({
    name: informerName(kind, 'pods'),
    path: `/api/v1${scope}/pods`,
    labelSelector: kind.podSelector,
    transform: podTrimmer(selectorOf, kind.owner),
  });
  // Revisions are cached as digests, not templates (revision-store.ts trimRevision); listed a few at
  // a time, since each may be as large as a CloneSet, so no one page blocks the event loop long.
  const revisions = manager.informer<ControllerRevision>({
    name: informerName(kind, 'controllerrevisions'),
    path: `/apis/apps/v1${scope}/controllerrevisions`,
    labelSelector: kind.revisionLabel,
    transform: trimRevision,
    pageSize: REVISION_PAGE_SIZE,
  });
  // A refused CloneSet is woken when what refused it changes (refusal-handlers.ts).
  const admissionLimits = ['resourcequotas', 'limitranges'].map((resource) =>
    sharedInformer<AdmissionLimit>(manager, {
      name: resource,
      path: `/api/v1${scope}/${resource}`,
      transform: trimAdmissionLimit,
    }),
  );
  // Nodes, for the agents' image pre-pull reports only (prepull-nodes.ts keeps nothing else).
  const prePullTimeoutMs = options.imagePrePullTimeoutMs ?? DEFAULT_PREPULL_TIMEOUT_MS;
  const nodes =
    prePullTimeoutMs > 0
      ? sharedInformer<Node>(manager, { name: 'nodes', path: '/api/v1/nodes', transform: trimNodeForPrePull })
      : undefined;
  const claims = claimsInformer(manager, kind, scope);
  cloneSets.addIndex(NAMESPACE_INDEX, (cs) => [cs.metadata?.namespace ?? '']);
  pods.addIndex(OWNER_INDEX, byControllerOf(kind.owner));
  pods.addIndex(NODE_INDEX, byNodeName);
  revisions.addIndex(OWNER_INDEX, byControllerOf(kind.owner));

  const onExpired = (kind: string): void => manager.metrics.expectationsExpiredTotal.inc({ kind });
  const scaleExpectations = new ScaleExpectations({ onExpired });
  const podExpectations = new ResourceVersionExpectations({ onExpired });
  const { inPlace: inPlaceMetrics, resize: resizeMetrics } = engineMetrics(manager);
  const nodeEvidence = new NodeEvidenceIndex();
  pods.addHandler(nodeEvidence);
  const reconciler = new WorkloadReconciler({
    kind,
    client: manager.client,
    cloneSets,
    pods,
    nodeEvidence,
    revisions,
    claims,
    scaleExpectations,
    podExpectations,
    events: manager.events,
    logger: options.logger,
    resize: { backend: options.resizeBackend ?? 'auto', metrics: resizeMetrics },
    ...(nodes ? { prePull: { nodes, timeoutMs: prePullTimeoutMs } } : {}),
    roundTemplateChars: roundTemplateChars(options.workers),
    inPlace: {
      updater: new InPlaceUpdater(manager.client, manager.events, podExpectations, inPlaceMetrics),
      metrics: inPlaceMetrics,
    },
  });
  const controller = manager.controller({
    name: kind.controllerName,
    concurrency: options.workers,
    reconcile: (key, context) => reconciler.reconcile(key, context.signal, context.reconcileId),
  });
  const queue = controller.queue;

  cloneSets.addHandler(cloneSetHandler(queue, podExpectations));
  wakeOnPods({ pods, cloneSets, queue, kind }, scaleExpectations, podExpectations);
  revisions.addHandler(enqueueOwner(queue, kind.owner));
  claims.addHandler(claimsHandler(queue, kind));
  const refusedIn = (namespace: string): string[] =>
    cloneSets.byIndex(NAMESPACE_INDEX, namespace).filter(writesRefused).map(objectKey);
  if (nodes) wireNodes(manager, nodes, { pods, cloneSets, queue, kind });
  for (const limits of admissionLimits) limits.addHandler(wakeRefusedOnLimitChange(queue, refusedIn));
  return reconciler;
}

/**
 * The image pre-pull's two directions: a node's report changed, so its pods' workloads may drain
 * now; and where an agent pre-pulls, its Node names the update revisions its pods have not reached
 * (decision 94).
 */
function wireNodes(
  manager: Manager,
  nodes: Informer<Node>,
  {
    pods,
    cloneSets,
    queue,
    kind,
  }: { pods: Informer<Pod>; cloneSets: Informer<WireCloneSet>; queue: WorkQueue; kind: WorkloadKind },
): void {
  nodes.addHandler(wakeOnPrePullReport(queue, (node) => pods.byIndex(NODE_INDEX, node), kind.owner));
  prePullPublisher(manager, nodes).addSource({
    pods,
    workloads: cloneSets,
    owner: kind.owner,
    nodeIndex: NODE_INDEX,
    ownerIndex: OWNER_INDEX,
  });
}

/**
 * A claim gone or going frees its instance id for a replacement (claims.ts); a kind with
 * identities hears of its claims by label instead (they have no controller): a resize that
 * finishes changes its status.
 */
function claimsHandler(queue: WorkQueue, kind: WorkloadKind): InformerHandler<KubeObject> {
  return kind.identity ? enqueueKeys(queue, byWorkloadLabel(kind.revisionLabel)) : enqueueOwner(queue, kind.owner);
}

/**
 * The claims of spec.volumeClaimTemplates carry the instance-id label too (claims.ts); the cache
 * keeps their names, labels and owners (trimClaim), indexed by controller and, for a kind with
 * identities, by the label naming the workload (claim-owners.ts).
 */
function claimsInformer(manager: Manager, kind: WorkloadKind, scope: string): Informer<Claim> {
  const claims = manager.informer<Claim>({
    name: informerName(kind, 'persistentvolumeclaims'),
    path: `/api/v1${scope}/persistentvolumeclaims`,
    labelSelector: LABEL_INSTANCE_ID,
    transform: (claim: Claim) => trimClaim(claim, kind.identity ? kind.revisionLabel : undefined),
  });
  claims.addIndex(OWNER_INDEX, byControllerOf(kind.owner));
  if (kind.identity) claims.addIndex(WORKLOAD_LABEL_INDEX, byWorkloadLabel(kind.revisionLabel));
  return claims;
}

/**
 * A pod's change wakes its workload at the end of a window that grows with the workload's size;
 * an orphan's wakes the workloads of its namespace whose selector matches it (they may adopt it).
 */
function wakeOnPods(
  {
    pods,
    cloneSets,
    queue,
    kind,
  }: { pods: Informer<Pod>; cloneSets: Informer<WireCloneSet>; queue: WorkQueue; kind: WorkloadKind },
  scaleExpectations: ScaleExpectations,
  podExpectations: ResourceVersionExpectations,
): void {
  const podsOf = (key: string): number => {
    const cs = cloneSets.get(key);
    return cs ? pods.countByIndex(OWNER_INDEX, ownedIndexValue(cs.metadata?.namespace, cs.metadata?.uid)) : 0;
  };
  const afterPodWindow = { add: (key: string): void => queue.addBatched(key, podEventWindowMs(podsOf(key))) };
  pods.addHandler(podHandler(afterPodWindow, scaleExpectations, podExpectations, kind.owner));
  pods.addIndex(ORPHAN_INDEX, byOrphanNamespace);
  const matching = (pod: Pod): string[] =>
    cloneSets
      .byIndex(NAMESPACE_INDEX, pod.metadata?.namespace ?? '')
      .filter((cs) => cs.spec?.selector !== undefined && matchesSelector(pod.metadata?.labels, cs.spec.selector))
      .map(objectKey);
  pods.addHandler(orphanHandler(queue, matching));
}

/**
 * The selector of the CloneSet an owner reference names, from the CloneSets' cache: `unknown`
 * until that cache is listed (pod-cache.ts then keeps an ended pod's labels whole), undefined when
 * no CloneSet of that name and UID is there.
 */
function cloneSetSelectors(cloneSets: Pick<Informer<WireCloneSet>, 'get' | 'hasSynced'>): SelectorOf {
  return (namespace, owner) => {
    if (!cloneSets.hasSynced()) return 'unknown';
    const cs = cloneSets.get(`${namespace ?? ''}/${owner.name}`);
    return cs?.metadata?.uid === owner.uid ? cs.spec?.selector : undefined;
  };
}
