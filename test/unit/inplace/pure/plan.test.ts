import { describe, expect, it } from '@jest/globals';
import {
  ANNOTATION_INPLACE_UPDATE_STATE,
  CONDITION_INPLACE_UPDATE_READY,
  LABEL_CONTROLLER_REVISION_HASH,
} from '../../../../src/api/types.js';
import {
  planInPlaceUpdate,
  planNextContainerBatch,
  readUpdateState,
  settleInPlaceUpdate,
  type UpdateTarget,
} from '../../../../src/inplace/pure/plan.js';
import type { Pod, PodTemplate } from '../../../../src/api/wire.js';
import { buildPod, runningStatus } from '../../../support/fixtures/pods.js';

const NOW = Date.parse('2026-01-01T00:01:00Z');
const v1: PodTemplate = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'img:v1' }] } };
const v2: PodTemplate = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'img:v2' }] } };
const envChange: PodTemplate = {
  metadata: { labels: { app: 'a' } },
  spec: { containers: [{ name: 'c', image: 'img:v1', env: [{ name: 'X', value: '1' }] }] },
};
const labelChange: PodTemplate = { metadata: { labels: { app: 'a', tier: 'gold' } }, spec: v1.spec };

function pod(opts: {
  gate?: string;
  gateSince?: string;
  ready?: boolean;
  revision?: string;
  image?: string;
  imageID?: string;
  restarts?: number;
  state?: object;
}): Pod {
  const conditions = [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }];
  if (opts.gate)
    conditions.push({
      type: CONDITION_INPLACE_UPDATE_READY,
      status: opts.gate,
      lastTransitionTime: opts.gateSince ?? '2026-01-01T00:00:00Z',
    } as never);
  return buildPod({
    labels: { [LABEL_CONTROLLER_REVISION_HASH]: opts.revision ?? 'r1' },
    annotations: opts.state ? { [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(opts.state) } : {},
    containers: [{ name: 'c', image: opts.image ?? 'img:v1' }],
    conditions,
    containerStatuses: [
      runningStatus('c', {
        image: opts.image ?? 'img:v1',
        imageID: opts.imageID ?? 'sha256:one',
        restartCount: opts.restarts ?? 0,
      }),
    ],
  });
}

const target = (over: Partial<UpdateTarget>): UpdateTarget => ({
  strategy: 'InPlaceIfPossible',
  gracePeriodSeconds: 0,
  podTemplate: v1,
  targetRevision: 'r2',
  targetTemplate: v2,
  resize: { supported: true },
  now: NOW,
  ...over,
});

describe('planInPlaceUpdate picks the next step', () => {
  it.each([
    ['ReCreate always recreates', pod({}), target({ strategy: 'ReCreate' }), 'recreate'],
    ['an image change first drains the pod', pod({ gate: 'True' }), target({}), 'drain'],
    [
      'a drained pod still Ready in the cache waits for the cache',
      pod({ gate: 'False', ready: true }),
      target({}),
      'wait',
    ],
    [
      'a drained, unready pod is patched when no grace is set',
      pod({ gate: 'False', ready: false }),
      target({}),
      'patch',
    ],
    [
      'a drained pod waits out the grace period',
      pod({ gate: 'False', ready: false, gateSince: '2026-01-01T00:00:50Z' }),
      target({ gracePeriodSeconds: 30 }),
      'wait',
    ],
    [
      'after the grace period the pod is patched',
      pod({ gate: 'False', ready: false, gateSince: '2026-01-01T00:00:00Z' }),
      target({ gracePeriodSeconds: 30 }),
      'patch',
    ],
    [
      'a label-only change is patched without draining',
      pod({ gate: 'True' }),
      target({ targetTemplate: labelChange }),
      'patch',
    ],
    ['InPlaceIfPossible recreates for an env change', pod({}), target({ targetTemplate: envChange }), 'recreate'],
    [
      'InPlaceOnly refuses an env change',
      pod({}),
      target({ strategy: 'InPlaceOnly', targetTemplate: envChange }),
      'blocked',
    ],
  ])('%s', (_name, p, t, kind) => {
    expect(planInPlaceUpdate(p, t).kind).toBe(kind);
  });

  it('records previous image IDs and restart counts and sets the revision label in one patch', () => {
    const step = planInPlaceUpdate(
      pod({ gate: 'False', ready: false, imageID: 'sha256:one', restarts: 2 }),
      target({}),
    );
    expect(step.kind).toBe('patch');
    const patch = (
      step as unknown as {
        patch: { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: unknown };
      }
    ).patch;
    expect(patch.metadata.labels[LABEL_CONTROLLER_REVISION_HASH]).toBe('r2');
    expect(patch.spec).toEqual({ containers: [{ name: 'c', image: 'img:v2' }] });
    expect(JSON.parse(patch.metadata.annotations[ANNOTATION_INPLACE_UPDATE_STATE]!)).toMatchObject({
      revision: 'r2',
      lastContainerImageIDs: { c: 'sha256:one' },
      lastRestartCounts: { c: 2 },
      changed: { c: ['image'] },
    });
  });
});

// Issue 44: Kruise Rollout labels the pods of a batch (rollouts.kruise.io/rollout-id, ...); an
// in-place update patches only the labels its templates change, so those labels stay.
describe('an in-place update keeps the labels other controllers put on the pod', () => {
  it.each<[string, PodTemplate]>([
    ['an image change', v2],
    ['a label change of the template', labelChange],
  ])('%s patches neither those labels nor their removal', (_name, targetTemplate) => {
    const drained = pod({ gate: 'False', ready: false });
    const theirs = { 'rollouts.kruise.io/rollout-id': 'r2', 'rollouts.kruise.io/rollout-batch-id': '1' };
    drained.metadata = { ...drained.metadata, labels: { ...drained.metadata?.labels, ...theirs } };
    const step = planInPlaceUpdate(drained, target({ targetTemplate }));
    expect(step.kind).toBe('patch');
    const labels = (step as unknown as { patch: { metadata: { labels: Record<string, string | null> } } }).patch
      .metadata.labels;
    for (const key of Object.keys(theirs)) expect([key, key in labels]).toEqual([key, false]);
  });
});

describe('settleInPlaceUpdate decides when an update is finished', () => {
  const state = {
    revision: 'r2',
    updateTimestamp: '2026-01-01T00:00:00Z',
    lastContainerImageIDs: { c: 'sha256:one' },
    lastRestartCounts: { c: 0 },
    changed: { c: ['image'] },
  };
  it.each([
    ['a pod that is not drained has nothing to settle', pod({ gate: 'True' }), true, 'none'],
    [
      'containers not yet restarted are pending',
      pod({ gate: 'False', revision: 'r2', image: 'img:v2', state }),
      true,
      'pending',
    ],
    [
      'a new imageID completes the update',
      pod({ gate: 'False', revision: 'r2', image: 'img:v2', imageID: 'sha256:two', state }),
      true,
      'complete',
    ],
    [
      'a new tag with the same imageID completes once the container restarted',
      pod({ gate: 'False', revision: 'r2', image: 'img:v2', restarts: 1, state }),
      true,
      'complete',
    ],
    [
      'a drained pod that is no longer selected is undrained (rollback during grace)',
      pod({ gate: 'False', revision: 'r1' }),
      false,
      'undrain',
    ],
    ['a drained pod still selected waits for its patch', pod({ gate: 'False', revision: 'r1' }), true, 'none'],
  ])('%s', (_name, p, selected, expected) => {
    expect(settleInPlaceUpdate(p, selected)).toBe(expected);
  });
});

// Issue 21 and 24: a native sidecar's cpu and image, and the pod's own cpu (Kubernetes >= 1.36),
// change in place; the resize goes to the list it belongs to.
describe('planInPlaceUpdate for sidecars and pod-level resources', () => {
  const res = (cpu: string) => ({ requests: { cpu: '50m' }, limits: { cpu } });
  const template = (opts: { sidecarCpu?: string; sidecarImage?: string; podCpu?: string }): PodTemplate => ({
    metadata: { labels: { app: 'a' } },
    spec: {
      initContainers: [
        {
          name: 'mesh',
          image: opts.sidecarImage ?? 'mesh:v1',
          restartPolicy: 'Always',
          resources: res(opts.sidecarCpu ?? '100m'),
        },
      ],
      containers: [{ name: 'c', image: 'img:v1', resources: res('100m') }],
      resources: { requests: { cpu: '200m' }, limits: { cpu: opts.podCpu ?? '1' } },
    },
  });
  const running = (podLevelReported: boolean): Pod => {
    const t = template({});
    return {
      metadata: { name: 'p', labels: { [LABEL_CONTROLLER_REVISION_HASH]: 'r1' } },
      spec: { ...t.spec!, initContainers: t.spec!.initContainers!, containers: t.spec!.containers },
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        initContainerStatuses: [
          {
            name: 'mesh',
            image: 'mesh:v1',
            imageID: 'sha256:m1',
            restartCount: 0,
            ready: true,
            state: { running: {} },
          },
        ],
        containerStatuses: [
          { name: 'c', image: 'img:v1', imageID: 'sha256:one', restartCount: 0, ready: true, state: { running: {} } },
        ],
        ...(podLevelReported ? { resources: t.spec!.resources } : {}),
      },
    };
  };
  const kubelet = { supported: true, via: 'kubelet' as const };

  it('sends a sidecar cpu change to spec.initContainers of pods/resize, without a drain', () => {
    const step = planInPlaceUpdate(
      running(true),
      target({ podTemplate: template({}), targetTemplate: template({ sidecarCpu: '300m' }), resize: kubelet }),
    );
    expect(step).toMatchObject({
      kind: 'patch',
      resize: { spec: { initContainers: [{ name: 'mesh', resources: { limits: { cpu: '300m' } } }] } },
    });
  });

  it('drains, then patches a sidecar image under spec.initContainers', () => {
    const t = target({
      podTemplate: template({}),
      targetTemplate: template({ sidecarImage: 'mesh:v2' }),
      resize: kubelet,
    });
    expect(planInPlaceUpdate(running(true), t).kind).toBe('drain');
    const drained = running(true);
    drained.status!.conditions = [
      { type: 'Ready', status: 'False' },
      { type: CONDITION_INPLACE_UPDATE_READY, status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ];
    const step = planInPlaceUpdate(drained, t);
    expect(step).toMatchObject({
      kind: 'patch',
      patch: { spec: { initContainers: [{ name: 'mesh', image: 'mesh:v2' }] } },
    });
    expect(
      JSON.parse(
        (step as unknown as { patch: { metadata: { annotations: Record<string, string> } } }).patch.metadata
          .annotations[ANNOTATION_INPLACE_UPDATE_STATE]!,
      ),
    ).toMatchObject({
      lastContainerImageIDs: { mesh: 'sha256:m1' },
    });
  });

  it.each([
    ['a kubelet that reports pod-level resources', true, kubelet, 'patch'],
    ['a kubelet that does not (Kubernetes < 1.36)', false, kubelet, 'recreate'],
    ['the node agent', true, { supported: true, via: 'agent' as const }, 'recreate'],
  ])('a pod-level cpu change on %s: %s', (_, reported, resize, kind) => {
    const step = planInPlaceUpdate(
      running(reported),
      target({ podTemplate: template({}), targetTemplate: template({ podCpu: '2' }), resize }),
    );
    expect(step.kind).toBe(kind);
    if (kind === 'patch') expect(step).toMatchObject({ resize: { spec: { resources: { limits: { cpu: '2' } } } } });
  });
});

// Issues 22.2 and 24.2: a restart without an image change drains, then asks the node agent to stop
// the running container once (by its ID), and completes when the kubelet has restarted it.
describe('planInPlaceUpdate for a restart in place', () => {
  const restarted: PodTemplate = {
    metadata: { labels: { app: 'a' }, annotations: { 'kubectl.kubernetes.io/restartedAt': 'now' } },
    spec: v1.spec,
  };
  const running = (): Pod => {
    const p = pod({ gate: 'False', ready: false, restarts: 2 });
    p.status!.containerStatuses![0]!.containerID = 'containerd://abc';
    return p;
  };
  const t = target({ podTemplate: v1, targetTemplate: restarted });

  it('drains first', () => {
    expect(planInPlaceUpdate(pod({}), t).kind).toBe('drain');
  });

  it('then patches the revision, the update state and a restart request naming the running container', () => {
    const step = planInPlaceUpdate(running(), t);
    expect(step.kind).toBe('patch');
    const annotations = (step as unknown as { patch: { metadata: { annotations: Record<string, string> } } }).patch
      .metadata.annotations;
    expect(JSON.parse(annotations['apps.tailor.dev/restart-request']!)).toEqual({
      revision: 'r2',
      containers: { c: 'containerd://abc' },
    });
    expect(JSON.parse(annotations[ANNOTATION_INPLACE_UPDATE_STATE]!)).toMatchObject({
      changed: { c: ['restart'] },
      lastRestartCounts: { c: 2 },
    });
  });

  it.each([
    [2, 'pending'],
    [3, 'complete'],
  ])('settles when the restart count rose (count %i: %s), whatever the image ID says', (count, expected) => {
    const state = {
      revision: 'r1',
      updateTimestamp: '2026-01-01T00:00:00Z',
      changed: { c: ['restart'] },
      lastRestartCounts: { c: 2 },
    };
    expect(settleInPlaceUpdate(pod({ gate: 'False', state, restarts: count, imageID: 'sha256:other' }), true)).toBe(
      expected,
    );
  });
});

describe('an in-place update in container batches (decision 0021)', () => {
  const PRIORITY_10 = [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }];
  const twoContainers = (nginx: string, redis: string): PodTemplate => ({
    metadata: { labels: { app: 'a' } },
    spec: {
      containers: [
        { name: 'nginx', image: nginx },
        { name: 'redis', image: redis, env: PRIORITY_10 },
      ],
    },
  });
  const from = twoContainers('nginx:v1', 'redis:v1');
  const to = twoContainers('nginx:v2', 'redis:v2');
  type Status = { image: string; imageID: string; ready?: boolean; waiting?: boolean };
  const status = (name: string, s: Status) =>
    s.waiting
      ? {
          ...runningStatus(name, { image: s.image, imageID: s.imageID, ready: false }),
          state: { waiting: { reason: 'CrashLoopBackOff' } },
        }
      : runningStatus(name, { image: s.image, imageID: s.imageID, ready: s.ready ?? true });
  const batchPod = (opts: {
    revision: string;
    specImages: [string, string];
    nginx: Status;
    redis: Status;
    state?: object;
    gate?: string;
  }): Pod =>
    buildPod({
      labels: { [LABEL_CONTROLLER_REVISION_HASH]: opts.revision },
      annotations: opts.state ? { [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(opts.state) } : {},
      // As the controller's cache keeps a pod: no env; the priority is read from the template.
      containers: [
        { name: 'nginx', image: opts.specImages[0] },
        { name: 'redis', image: opts.specImages[1] },
      ],
      conditions: [
        { type: 'Ready', status: 'False' },
        {
          type: CONDITION_INPLACE_UPDATE_READY,
          status: opts.gate ?? 'False',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ] as never,
      containerStatuses: [status('nginx', opts.nginx), status('redis', opts.redis)],
    });
  const OLD_NGINX = { image: 'nginx:v1', imageID: 'sha256:n1' };
  const OLD_REDIS = { image: 'redis:v1', imageID: 'sha256:r1' };
  const NEW_REDIS = { image: 'redis:v2', imageID: 'sha256:r2' };
  const NEW_NGINX = { image: 'nginx:v2', imageID: 'sha256:n2' };
  const stateOf = (patch: unknown): Record<string, unknown> =>
    JSON.parse(
      (patch as { metadata: { annotations: Record<string, string> } }).metadata.annotations[
        ANNOTATION_INPLACE_UPDATE_STATE
      ]!,
    ) as Record<string, unknown>;

  const drained = batchPod({
    revision: 'r1',
    specImages: ['nginx:v1', 'redis:v1'],
    nginx: OLD_NGINX,
    redis: OLD_REDIS,
  });
  const first = planInPlaceUpdate(drained, target({ podTemplate: from, targetTemplate: to }));
  const firstState = stateOf((first as { patch: unknown }).patch);
  const afterFirst = (redis: Status): Pod =>
    batchPod({ revision: 'r2', specImages: ['nginx:v1', 'redis:v2'], nginx: OLD_NGINX, redis, state: firstState });

  it('patches only the higher-priority container first and records the batch and the images to come', () => {
    expect(first).toMatchObject({
      kind: 'patch',
      patch: { spec: { containers: [{ name: 'redis', image: 'redis:v2' }] } },
    });
    expect(firstState).toMatchObject({
      revision: 'r2',
      changed: { redis: ['image'] },
      lastContainerImageIDs: { redis: 'sha256:r1' },
      containerBatchesRecord: [{ containers: ['redis'] }],
      nextContainerImages: { nginx: 'nginx:v2' },
    });
  });

  it.each([
    ['the first batch still runs its old image', OLD_REDIS, undefined, 'pending'],
    ['the first batch runs its new image but is not ready', { ...NEW_REDIS, ready: false }, undefined, 'pending'],
    ['the first batch fails to start (crash loop)', { ...NEW_REDIS, waiting: true }, undefined, 'pending'],
    ['the first batch runs its new image and is ready', NEW_REDIS, 'patch', 'pending'],
  ])('while %s the pod stays drained; next batch: %s', (_name, redis, nextKind, settlement) => {
    const pod = afterFirst(redis);
    expect(planNextContainerBatch(pod, to, NOW)?.kind).toBe(nextKind);
    expect(settleInPlaceUpdate(pod, false)).toBe(settlement);
  });

  it('the next batch patches only the lower-priority container and records both batches', () => {
    const next = planNextContainerBatch(afterFirst(NEW_REDIS), to, NOW);
    expect(next).toMatchObject({
      kind: 'patch',
      patch: { spec: { containers: [{ name: 'nginx', image: 'nginx:v2' }] } },
    });
    expect(next?.patch).not.toHaveProperty('metadata.labels');
    const state = stateOf(next?.patch);
    expect(state).toMatchObject({
      changed: { redis: ['image'], nginx: ['image'] },
      lastContainerImageIDs: { redis: 'sha256:r1', nginx: 'sha256:n1' },
      containerBatchesRecord: [{ containers: ['redis'] }, { containers: ['nginx'] }],
    });
    expect(state).not.toHaveProperty('nextContainerImages');
  });

  it('completes once the last batch runs its new image', () => {
    const state = stateOf(planNextContainerBatch(afterFirst(NEW_REDIS), to, NOW)?.patch);
    const patched = (nginx: Status): Pod =>
      batchPod({ revision: 'r2', specImages: ['nginx:v2', 'redis:v2'], nginx, redis: NEW_REDIS, state });
    expect(settleInPlaceUpdate(patched(OLD_NGINX), false)).toBe('pending');
    expect(planNextContainerBatch(patched(OLD_NGINX), to, NOW)).toBeUndefined();
    expect(settleInPlaceUpdate(patched(NEW_NGINX), false)).toBe('complete');
  });

  it('gives no next batch to a pod that is not drained or no longer at the recorded revision', () => {
    const halfway = {
      specImages: ['nginx:v1', 'redis:v2'] as [string, string],
      nginx: OLD_NGINX,
      redis: NEW_REDIS,
      state: firstState,
    };
    const undrained = batchPod({ ...halfway, revision: 'r2', gate: 'True' });
    const movedOn = batchPod({ ...halfway, revision: 'r3' });
    expect(planNextContainerBatch(undrained, to, NOW)).toBeUndefined();
    expect(planNextContainerBatch(movedOn, to, NOW)).toBeUndefined();
  });

  it('an update taken back between batches changes only containers whose spec image differs', () => {
    // Back from r2 (redis:v2 applied, nginx:v2 still to come) to r1: only redis changes.
    const halfway = afterFirst(NEW_REDIS);
    const back = planInPlaceUpdate(halfway, target({ podTemplate: to, targetTemplate: from, targetRevision: 'r1' }));
    expect(back).toMatchObject({
      kind: 'patch',
      patch: { spec: { containers: [{ name: 'redis', image: 'redis:v1' }] } },
    });
    expect(stateOf((back as { patch: unknown }).patch)).not.toHaveProperty('nextContainerImages');
  });
});

// Issue 32.4: container priority orders everything an in-place update does to a container, as
// Kruise's nextContainerImages/Resources/RefMetadata do: a lower container's resize and restart
// wait, like its image, until the higher batch runs the new revision and is ready. Each row rolls
// one pod through the steps against a small simulated kubelet and node agent.
describe('container priority orders every change an in-place update makes to a container (issue 32.4)', () => {
  type Policy = 'NotRequired' | 'RestartContainer';
  interface Shape {
    priority?: string;
    image?: string;
    cpu?: string;
    policy?: Policy;
    /** Reads the template annotation `config` through the downward API. */
    readsConfig?: boolean;
  }
  type Shapes = Record<string, Shape>;
  const container = (name: string, c: Shape) => ({
    name,
    image: c.image ?? `${name}:v1`,
    resources: { requests: { cpu: c.cpu ?? '100m', memory: '64Mi' }, limits: { cpu: c.cpu ?? '100m', memory: '64Mi' } },
    ...(c.policy ? { resizePolicy: [{ resourceName: 'cpu', restartPolicy: c.policy }] } : {}),
    env: [
      ...(c.priority ? [{ name: 'KRUISE_CONTAINER_PRIORITY', value: c.priority }] : []),
      ...(c.readsConfig
        ? [{ name: 'CONFIG', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['config']" } } }]
        : []),
    ],
  });
  const template = (shapes: Shapes, annotations: Record<string, string> = { config: 'foo' }): PodTemplate => ({
    metadata: { labels: { app: 'a' }, annotations },
    spec: { containers: Object.entries(shapes).map(([name, c]) => container(name, c)) },
  });
  const changed = (shapes: Shapes, changes: Shapes): Shapes =>
    Object.fromEntries(Object.entries(shapes).map(([name, c]) => [name, { ...c, ...changes[name] }]));

  type Status = NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number];
  const statusOf = (c: { name: string; image?: string; resources?: Status['resources'] }, restarts = 0): Status => ({
    ...runningStatus(c.name, { image: c.image ?? '', imageID: `${c.image}@sha`, restartCount: restarts }),
    containerID: `containerd://${c.name}-${restarts}`,
    resources: c.resources,
  });
  /** A pod of `from` as the controller's cache keeps it (no env), Ready, its gate True. */
  const runningPod = (from: PodTemplate): Pod =>
    buildPod({
      labels: { [LABEL_CONTROLLER_REVISION_HASH]: 'r1' },
      annotations: { ...from.metadata?.annotations },
      containers: from.spec!.containers.map(({ env: _env, ...c }) => c),
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: CONDITION_INPLACE_UPDATE_READY, status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ] as never,
      containerStatuses: from.spec!.containers.map((c) => statusOf(c)),
    });
  const drain = (pod: Pod): Pod => ({
    ...pod,
    status: {
      ...pod.status,
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: CONDITION_INPLACE_UPDATE_READY, status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
    },
  });

  type Step = Extract<ReturnType<typeof planInPlaceUpdate>, { kind: 'patch' }>;
  type PatchShape = {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec?: { containers?: { name: string; image: string }[] };
  };
  type ResizeShape = { spec?: { containers?: { name: string; resources: Status['resources'] }[] } };
  /** What a step does to each container: image, resize, restart. */
  function actions(step: Step): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    const add = (name: string, what: string): void => void (out[name] = [...(out[name] ?? []), what]);
    const patch = step.patch as PatchShape;
    for (const c of patch.spec?.containers ?? []) add(c.name, 'image');
    for (const c of (step.resize as ResizeShape | undefined)?.spec?.containers ?? []) add(c.name, 'resize');
    const request = patch.metadata?.annotations?.['apps.tailor.dev/restart-request'];
    for (const name of Object.keys(request ? (JSON.parse(request) as { containers: object }).containers : {}))
      add(name, 'restart');
    return out;
  }

  /**
   * The step written to the pod, then the kubelet and the agent at work: a new image or a
   * restart request naming the running container restarts it; a resize is actuated (restarting
   * the container under RestartContainer). `stuck`: containers that come back never ready;
   * `unactuated`: containers whose resize the kubelet never carries out.
   */
  function carryOut(pod: Pod, step: Step, to: PodTemplate, opts: Options): Pod {
    const patch = step.patch as PatchShape;
    const resize = step.resize as ResizeShape | undefined;
    const annotations = { ...pod.metadata?.annotations, ...patch.metadata?.annotations };
    const request = annotations['apps.tailor.dev/restart-request'];
    const restartIds = new Set(
      Object.values(request ? (JSON.parse(request) as { containers: Record<string, string> }).containers : {}),
    );
    const spec = pod.spec!.containers.map((c) => ({
      ...c,
      ...(patch.spec?.containers?.find((p) => p.name === c.name) ?? {}),
      ...(resize?.spec?.containers?.find((r) => r.name === c.name)
        ? { resources: to.spec!.containers.find((t) => t.name === c.name)!.resources }
        : {}),
    }));
    const statuses = pod.status!.containerStatuses!.map((s) => {
      const c = spec.find((x) => x.name === s.name)!;
      const resized = !opts.unactuated?.includes(s.name) && JSON.stringify(c.resources) !== JSON.stringify(s.resources);
      const restartForResize = resized && c.resizePolicy?.[0]?.restartPolicy === 'RestartContainer';
      const restarts = c.image !== s.image || restartIds.has(s.containerID ?? '') || restartForResize;
      if (!restarts && !resized) return s;
      const next = {
        ...statusOf(c, (s.restartCount ?? 0) + (restarts ? 1 : 0)),
        resources: resized ? c.resources : s.resources,
      };
      return restarts && opts.stuck?.includes(s.name) ? { ...next, ready: false } : next;
    });
    return {
      metadata: { ...pod.metadata, labels: { ...pod.metadata?.labels, ...patch.metadata?.labels }, annotations },
      spec: { ...pod.spec, containers: spec },
      status: { ...pod.status, containerStatuses: statuses },
    };
  }

  interface Options {
    stuck?: string[];
    unactuated?: string[];
  }
  function rollOut(from: PodTemplate, to: PodTemplate, opts: Options = {}) {
    const t = target({ podTemplate: from, targetTemplate: to, resize: { supported: true, via: 'kubelet' } });
    let pod = runningPod(from);
    let step = planInPlaceUpdate(pod, t);
    const drained = step.kind === 'drain';
    if (drained) {
      pod = drain(pod);
      step = planInPlaceUpdate(pod, t);
    }
    if (step.kind !== 'patch') throw new Error(`expected a patch, got ${step.kind}`);
    const batches = [actions(step)];
    const firstState = JSON.parse(
      (step.patch as PatchShape).metadata!.annotations![ANNOTATION_INPLACE_UPDATE_STATE]!,
    ) as Record<string, unknown>;
    pod = carryOut(pod, step, to, opts);
    for (
      let next = planNextContainerBatch(pod, to, NOW, 'kubelet');
      next;
      next = planNextContainerBatch(pod, to, NOW, 'kubelet')
    ) {
      batches.push(actions(next));
      pod = carryOut(pod, next, to, opts);
    }
    return { drained, batches, firstState, pod, settlement: settleInPlaceUpdate(pod, false) };
  }

  const pair: Shapes = { nginx: {}, redis: { priority: '10' } };
  const withPolicy = (policy: Policy): Shapes => ({ nginx: { policy }, redis: { priority: '10', policy } });
  const triple: Shapes = { c: {}, b: { priority: '5', readsConfig: true }, a: { priority: '10' } };
  const BAR = { config: 'bar' };

  it.each<[string, Shapes, Shapes, Record<string, string> | undefined, Record<string, string[]>[]]>([
    [
      'images: the higher first',
      pair,
      { nginx: { image: 'nginx:v2' }, redis: { image: 'redis:v2' } },
      undefined,
      [{ redis: ['image'] }, { nginx: ['image'] }],
    ],
    ...(['NotRequired', 'RestartContainer'] as const).flatMap(
      (policy): [string, Shapes, Shapes, Record<string, string> | undefined, Record<string, string[]>[]][] => [
        [
          `${policy}: image + resize of the lower wait for the higher's image`,
          withPolicy(policy),
          { nginx: { image: 'nginx:v2', cpu: '200m' }, redis: { image: 'redis:v2' } },
          undefined,
          [{ redis: ['image'] }, { nginx: ['image', 'resize'] }],
        ],
        [
          `${policy}: image + resize of the higher go first, the lower's image next`,
          withPolicy(policy),
          { nginx: { image: 'nginx:v2' }, redis: { image: 'redis:v2', cpu: '200m' } },
          undefined,
          [{ redis: ['image', 'resize'] }, { nginx: ['image'] }],
        ],
        [
          `${policy}: the lower's resize waits for the higher's restart (env from metadata)`,
          { nginx: { policy }, redis: { priority: '10', policy, readsConfig: true } },
          { nginx: { cpu: '200m' } },
          BAR,
          [{ redis: ['restart'] }, { nginx: ['resize'] }],
        ],
        [
          `${policy}: mixed as Kruise's case: the higher restarted for metadata, then the lower's image and resize`,
          { nginx: { policy }, redis: { priority: '10', readsConfig: true } },
          { nginx: { image: 'nginx:v2', cpu: '200m' } },
          BAR,
          [{ redis: ['restart'] }, { nginx: ['image', 'resize'] }],
        ],
      ],
    ),
    [
      'RestartContainer: resize only goes by priority',
      withPolicy('RestartContainer'),
      { nginx: { cpu: '200m' }, redis: { cpu: '200m' } },
      undefined,
      [{ redis: ['resize'] }, { nginx: ['resize'] }],
    ],
    [
      'resize only, the higher NotRequired, the lower RestartContainer: the restart waits for the resize',
      { nginx: { policy: 'RestartContainer' }, redis: { priority: '10', policy: 'NotRequired' } },
      { nginx: { cpu: '200m' }, redis: { cpu: '200m' } },
      undefined,
      [{ redis: ['resize'] }, { nginx: ['resize'] }],
    ],
    [
      'restart only (env from metadata): the higher first',
      { nginx: { readsConfig: true }, redis: { priority: '10', readsConfig: true } },
      {},
      BAR,
      [{ redis: ['restart'] }, { nginx: ['restart'] }],
    ],
    [
      'restart only (rolling restart): the higher first',
      pair,
      {},
      { config: 'foo', 'kubectl.kubernetes.io/restartedAt': 'now' },
      [{ redis: ['restart'] }, { nginx: ['restart'] }],
    ],
    [
      'only the lower changes: one batch',
      pair,
      { nginx: { image: 'nginx:v2', cpu: '200m' } },
      undefined,
      [{ nginx: ['image', 'resize'] }],
    ],
    [
      'a triple: resize, restart, image, one batch each by priority',
      triple,
      { a: { cpu: '200m' }, c: { image: 'c:v2' } },
      BAR,
      [{ a: ['resize'] }, { b: ['restart'] }, { c: ['image'] }],
    ],
    [
      'a triple, the middle unchanged: two batches',
      triple,
      { a: { image: 'a:v2' }, c: { image: 'c:v2', cpu: '200m' } },
      undefined,
      [{ a: ['image'] }, { c: ['image', 'resize'] }],
    ],
  ])('%s', (_name, from, changes, annotations, batches) => {
    const result = rollOut(template(from), template(changed(from, changes), annotations));
    expect(result.drained).toBe(true);
    expect(result.batches).toEqual(batches);
    expect((readUpdateState(result.pod)?.containerBatchesRecord ?? []).map((b) => b.containers)).toEqual(
      batches.map(Object.keys),
    );
    expect(result.settlement).toBe('complete');
  });

  it('NotRequired resizes alone restart nothing: one patch, the pod stays in service', () => {
    const from = withPolicy('NotRequired');
    const result = rollOut(template(from), template(changed(from, { nginx: { cpu: '200m' }, redis: { cpu: '200m' } })));
    expect(result.drained).toBe(false);
    expect(result.batches).toEqual([{ nginx: ['resize'], redis: ['resize'] }]);
    expect(result.settlement).toBe('none');
  });

  it("records what is still to come under Kruise's names: nextContainerImages, nextContainerResources, nextContainerRefMetadata", () => {
    const from: Shapes = { nginx: { readsConfig: true }, redis: { priority: '10' } };
    const { firstState } = rollOut(
      template(from),
      template(changed(from, { nginx: { image: 'nginx:v2', cpu: '200m' }, redis: { image: 'redis:v2' } }), BAR),
    );
    expect(firstState).toMatchObject({
      containerBatchesRecord: [{ containers: ['redis'] }],
      changed: { redis: ['image'] },
      nextContainerImages: { nginx: 'nginx:v2' },
      nextContainerResources: {
        nginx: { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
      },
    });
    // nginx restarts for its new image anyway: it is not named for a restart twice.
    expect(firstState).not.toHaveProperty('nextContainerRefMetadata');
    const restartOnly = rollOut(
      template(from),
      template(changed(from, { redis: { image: 'redis:v2' } }), BAR),
    ).firstState;
    expect(restartOnly).toMatchObject({ nextContainerRefMetadata: { nginx: { annotations: { config: 'bar' } } } });
    expect(restartOnly).not.toHaveProperty('nextContainerImages');
    expect(restartOnly).not.toHaveProperty('nextContainerResources');
  });

  it.each<[string, Shapes, Shapes, Record<string, string> | undefined, Options]>([
    [
      'new image never ready',
      pair,
      { nginx: { image: 'nginx:v2', cpu: '200m' }, redis: { image: 'redis:v2' } },
      undefined,
      { stuck: ['redis'] },
    ],
    [
      'restart never ready',
      { nginx: {}, redis: { priority: '10', readsConfig: true } },
      { nginx: { image: 'nginx:v2' } },
      BAR,
      { stuck: ['redis'] },
    ],
    ...(['NotRequired', 'RestartContainer'] as const).map((policy): [string, Shapes, Shapes, undefined, Options] => [
      `${policy} resize never actuated`,
      withPolicy(policy),
      { nginx: { image: 'nginx:v2' }, redis: { cpu: '200m' } },
      undefined,
      { unactuated: ['redis'] },
    ]),
  ])('a first batch whose %s holds the next for good, the pod drained', (_name, from, changes, annotations, opts) => {
    const result = rollOut(template(from), template(changed(from, changes), annotations), opts);
    expect(result.batches).toEqual([{ redis: expect.any(Array) as unknown }]);
    expect(result.settlement).toBe('pending');
    const state = readUpdateState(result.pod);
    expect(state?.containerBatchesRecord?.map((b) => b.containers)).toEqual([['redis']]);
    expect(
      Object.keys({
        ...state?.nextContainerImages,
        ...state?.nextContainerResources,
        ...state?.nextContainerRefMetadata,
      }),
    ).toEqual(['nginx']);
  });
});

describe('a resize split over container batches keeps the QoS class at every step (decision 0021)', () => {
  const cpu = (request: string, limit: string) => ({
    requests: { cpu: request, memory: '64Mi' },
    limits: { cpu: limit, memory: '64Mi' },
  });
  const two = (nginx: ReturnType<typeof cpu>, redis: ReturnType<typeof cpu>, redisImage = 'redis:v1'): PodTemplate => ({
    metadata: { labels: { app: 'a' } },
    spec: {
      containers: [
        {
          name: 'nginx',
          image: 'nginx:v1',
          resources: nginx,
          resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
        },
        {
          name: 'redis',
          image: redisImage,
          resources: redis,
          env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }],
        },
      ],
    },
  });
  // Burstable before (redis) and after (nginx), Guaranteed once redis alone is resized.
  const from = two(cpu('100m', '100m'), cpu('100m', '200m'));
  const running = (): Pod =>
    buildPod({
      labels: { [LABEL_CONTROLLER_REVISION_HASH]: 'r1' },
      containers: from.spec!.containers.map(({ env: _env, ...c }) => c),
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [runningStatus('nginx'), runningStatus('redis')],
    });
  const kubelet = { supported: true, via: 'kubelet' as const };

  it.each([
    [
      'in batches (redis restarts for its new image): recreated',
      two(cpu('100m', '200m'), cpu('200m', '200m'), 'redis:v2'),
      'recreate',
    ],
    ['in one batch (nothing restarts): resized in place', two(cpu('100m', '200m'), cpu('200m', '200m')), 'patch'],
  ])('swapping which container is burstable %s', (_name, to, kind) => {
    const step = planInPlaceUpdate(running(), target({ podTemplate: from, targetTemplate: to, resize: kubelet }));
    expect(step.kind).toBe(kind);
    if (step.kind === 'recreate') expect(step.reason).toContain('changes the pod QoS class between container batches');
  });
});
