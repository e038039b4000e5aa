// Pods, templates and CloneSets as the planner sees them, for its tables and property tests:
// wire JSON as the API server returns it, with only the fields the planner reads. `applyPlan`
// plays a round's intents onto the pods the way the API server would record them (deletes
// become terminating pods, drains unready pods, patches relabelled pods, creates pending pods),
// so a second round can be planned on the result.
import {
  ANNOTATION_INPLACE_UPDATE_STATE,
  CONDITION_INPLACE_UPDATE_READY,
  LABEL_CONTROLLER_REVISION_HASH,
  type CloneSet,
  type UpdateStrategyType,
} from '../../src/api/types.js';
import type { PodTemplate } from '../../src/inplace/diff.js';
import type { Intent, Plan } from '../../src/cloneset/intents.js';
import { defaulted, type DefaultedWireCloneSet } from '../../src/cloneset/pods.js';
import type { Pod } from '../../src/api/wire.js';

export const NOW = Date.parse('2026-03-01T12:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
export const LONG_AGO = iso(NOW - 3600_000);
export const OLD = 'web-old';
export const NEW = 'web-new';

const template = (image: string, cpu: string, extra: Record<string, unknown> = {}): PodTemplate => ({
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [
      {
        name: 'app',
        image,
        resources: { requests: { cpu, memory: '64Mi' }, limits: { cpu, memory: '64Mi' } },
        resizePolicy: [
          { resourceName: 'cpu', restartPolicy: 'NotRequired' },
          { resourceName: 'memory', restartPolicy: 'NotRequired' },
        ],
        ...extra,
      },
    ],
  },
});

/** The old revision's template and the kinds of change a new revision can make. */
export const TEMPLATES = {
  old: template('busybox:v1', '100m'),
  /** Restarts the container in place (drain first). */
  image: template('busybox:v2', '100m'),
  /** A NotRequired resize: nothing restarts. */
  cpu: template('busybox:v1', '200m'),
  /** Cannot change in place: InPlaceIfPossible recreates, InPlaceOnly blocks. */
  env: template('busybox:v1', '100m', { env: [{ name: 'MODE', value: 'new' }] }),
} as const;
export type Change = Exclude<keyof typeof TEMPLATES, 'old'>;

export interface PodSpec {
  name: string;
  revision?: string;
  ready?: boolean;
  scheduled?: boolean;
  terminating?: boolean;
  /** InPlaceUpdateReady False since LONG_AGO: drained for an in-place update. */
  drained?: boolean;
  /** The kubelet's verdict on the pod's latest resize. */
  resize?: 'Infeasible' | 'Deferred' | 'InProgress';
  /** An inplace-update-state annotation value, verbatim. */
  updateState?: string;
  /** Extra labels (a pod whose labels stop matching the selector is released). */
  labels?: Record<string, string>;
  /** Extra annotations (e.g. the agent protocol's). */
  annotations?: Record<string, string>;
  /** When the Ready condition last changed (default LONG_AGO). */
  readySince?: string;
  /** The app container is waiting with this reason (e.g. CrashLoopBackOff) instead of running. */
  waiting?: string;
}

/** A running (or pending) pod of the CloneSet; its spec follows its revision's template. */
export function pod(s: PodSpec, templates: ReadonlyMap<string, PodTemplate> = revisionTemplates('image')): Pod {
  const revision = s.revision ?? OLD;
  const spec = structuredClone(templates.get(revision)?.spec ?? TEMPLATES.old.spec)!;
  const scheduled = s.scheduled !== false;
  const ready = scheduled && s.ready !== false && !s.drained;
  const conditions: { type: string; status: string; [k: string]: unknown }[] = [
    {
      type: 'PodScheduled',
      status: scheduled ? 'True' : 'False',
      ...(scheduled ? {} : { reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient cpu.' }),
    },
    { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: s.readySince ?? LONG_AGO },
    { type: CONDITION_INPLACE_UPDATE_READY, status: s.drained ? 'False' : 'True', lastTransitionTime: LONG_AGO },
  ];
  if (s.resize === 'Infeasible' || s.resize === 'Deferred') {
    conditions.push({
      type: 'PodResizePending',
      status: 'True',
      reason: s.resize,
      message: "Node didn't have enough capacity",
      lastTransitionTime: LONG_AGO,
      observedGeneration: 2,
    });
  }
  if (s.resize === 'InProgress')
    conditions.push({ type: 'PodResizeInProgress', status: 'True', lastTransitionTime: LONG_AGO, observedGeneration: 2 });
  const container = spec.containers[0]!;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: s.name,
      namespace: 'ns',
      uid: `uid-${s.name}`,
      resourceVersion: '1',
      generation: s.resize ? 2 : 1,
      creationTimestamp: LONG_AGO,
      labels: { app: 'web', [LABEL_CONTROLLER_REVISION_HASH]: revision, ...(s.labels ?? {}) },
      annotations: {
        ...(s.updateState !== undefined ? { [ANNOTATION_INPLACE_UPDATE_STATE]: s.updateState } : {}),
        ...(s.annotations ?? {}),
      },
      ownerReferences: [{ apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs-uid', controller: true }],
      ...(s.terminating ? { deletionTimestamp: iso(NOW - 1000) } : {}),
    },
    spec: { ...spec, ...(scheduled ? { nodeName: 'node-1' } : {}), readinessGates: [{ conditionType: CONDITION_INPLACE_UPDATE_READY }] },
    status: {
      phase: scheduled ? 'Running' : 'Pending',
      observedGeneration: s.resize ? 2 : 1,
      conditions,
      ...(scheduled
        ? {
            containerStatuses: [
              {
                name: 'app',
                image: container.image,
                imageID: `sha256:${container.image}`,
                restartCount: 0,
                ready,
                state: s.waiting ? { waiting: { reason: s.waiting } } : { running: { startedAt: LONG_AGO } },
                // What the node runs: the old revision's resources while a resize is pending.
                resources: s.resize ? TEMPLATES.old.spec!.containers[0]!.resources : container.resources,
              },
            ],
          }
        : {}),
    },
  } as Pod;
}

export function revisionTemplates(change: Change): Map<string, PodTemplate> {
  return new Map([
    [OLD, TEMPLATES.old],
    [NEW, TEMPLATES[change]],
  ]);
}

export interface CloneSetSpec {
  replicas: number;
  type?: UpdateStrategyType;
  maxUnavailable?: number | string;
  maxSurge?: number | string;
  partition?: number | string;
  paused?: boolean;
  onInfeasible?: 'Recreate' | 'Wait';
  onTimeout?: 'Recreate' | 'Wait';
  podsToDelete?: string[];
  change?: Change;
  status?: CloneSet['status'];
}

export function cloneSet(s: CloneSetSpec): DefaultedWireCloneSet {
  const cs = {
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'cs-uid', generation: 2, resourceVersion: '10' },
    spec: {
      replicas: s.replicas,
      selector: { matchLabels: { app: 'web' } },
      template: TEMPLATES[s.change ?? 'image'],
      scaleStrategy: s.podsToDelete ? { podsToDelete: s.podsToDelete } : {},
      updateStrategy: {
        type: s.type ?? 'InPlaceIfPossible',
        ...(s.maxUnavailable !== undefined ? { maxUnavailable: s.maxUnavailable } : {}),
        ...(s.maxSurge !== undefined ? { maxSurge: s.maxSurge } : {}),
        ...(s.partition !== undefined ? { partition: s.partition } : {}),
        ...(s.paused ? { paused: true } : {}),
        resizeStrategy: {
          onInfeasible: s.onInfeasible ?? 'Recreate',
          onTimeout: s.onTimeout ?? 'Recreate',
          deferredTimeoutSeconds: 300,
          inProgressTimeoutSeconds: 3600,
        },
      },
    },
    status: s.status ?? { currentRevision: OLD },
  };
  return defaulted(cs);
}

const available = (p: Pod): boolean =>
  !p.metadata?.deletionTimestamp &&
  p.status?.phase === 'Running' &&
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true &&
  !p.status?.conditions?.some((c) => c.type === CONDITION_INPLACE_UPDATE_READY && c.status === 'False');

/** Pods that serve now: not terminating, Running, Ready, not mid in-place update. */
export const availableCount = (pods: readonly Pod[]): number => pods.filter(available).length;

/** Names of the available pods a plan takes out of service (deletes and drains). */
export function disruptedAvailable(plan: Plan, pods: readonly Pod[]): string[] {
  const serving = new Set(pods.filter(available).map((p) => p.metadata?.name));
  const names = plan.intents.flatMap((i) => (i.kind === 'delete' || i.kind === 'drain' ? [i.pod.metadata?.name ?? ''] : []));
  return [...new Set(names)].filter((n) => serving.has(n));
}

export const intentsOf = <K extends Intent['kind']>(plan: Plan, kind: K): Extract<Intent, { kind: K }>[] =>
  plan.intents.filter((i): i is Extract<Intent, { kind: K }> => i.kind === kind);

/** The pods as the API server holds them after the plan's writes (no kubelet acts in between). */
export function applyPlan(pods: readonly Pod[], plan: Plan, templates: ReadonlyMap<string, PodTemplate>): Pod[] {
  const byName = new Map(pods.map((p) => [p.metadata?.name ?? '', structuredClone(p)]));
  for (const intent of plan.intents) {
    if (intent.kind === 'create') continue;
    const p = byName.get(intent.pod.metadata?.name ?? '');
    if (!p) continue;
    const conditions = p.status!.conditions!;
    const setCondition = (type: string, status: string): void => {
      const c = conditions.find((x) => x.type === type);
      if (c) c.status = status;
      else conditions.push({ type, status, lastTransitionTime: iso(NOW) });
    };
    switch (intent.kind) {
      case 'delete':
        p.metadata!.deletionTimestamp = iso(NOW);
        break;
      case 'release':
        byName.delete(p.metadata?.name ?? '');
        break;
      case 'drain':
        setCondition(CONDITION_INPLACE_UPDATE_READY, 'False');
        setCondition('Ready', 'False');
        break;
      case 'patch': {
        const labels = (intent.step.patch as { metadata: { labels: Record<string, string> } }).metadata.labels;
        p.metadata!.labels = { ...p.metadata!.labels, ...labels };
        break;
      }
      case 'settle':
      case 'markGateReady':
        setCondition(CONDITION_INPLACE_UPDATE_READY, 'True');
        break;
    }
  }
  let n = 0;
  for (const intent of plan.intents) {
    if (intent.kind !== 'create') continue;
    const name = `created-${n++}`;
    byName.set(name, pod({ name, revision: intent.revision, scheduled: false }, templates));
  }
  return [...byName.values()];
}
