// What the node agent keeps of each pod of its node (docs/decisions/0074-ended-pods-cached-as-identity.md):
// an ended pod as its identity, whatever it weighs; of a live pod, only what its decisions read,
// each field within its bound; a value past its bound is dropped where that decides the same, or
// kept as a marker its reader refuses (never a part of it). And the agent decides the same from
// what it keeps as from whole pods: the resize, the restart in place, the pre-pull, the node's
// evidence.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { admit, holdsResources } from '../../../../src/agent/pure/admission.js';
import {
  workloadOwner,
  qosClassChange,
  requestNotInRevision,
  restartRequiredBy,
} from '../../../../src/agent/pure/authorize.js';
import type { ControllerRevision } from '../../../../src/api/revision.js';
import { POD_BOUNDS, trimPodForAgent, trimRevisionForAgent } from '../../../../src/agent/pure/cache.js';
import { decide, type Action, type Evidence } from '../../../../src/agent/pure/decide.js';
import { namespaceLimitsVerdict, type LimitRange } from '../../../../src/agent/pure/namespace-limits.js';
import { podCgroupValues } from '../../../../src/agent/pure/order.js';
import { imagesToPrePull } from '../../../../src/agent/pure/prepull-plan.js';
import { PRESTOP_HOOKS_MAX_CHARS, stopPlan } from '../../../../src/agent/pure/prestop-plan.js';
import { containersToStop } from '../../../../src/agent/restart.js';
import {
  ANNOTATION_RESIZE_REQUEST,
  ANNOTATION_RESIZE_STATUS,
  ANNOTATION_RESTART_REQUEST,
  LABEL_CONTROLLER_REVISION_HASH,
} from '../../../../src/api/types.js';
import type { Pod } from '../../../../src/api/wire.js';
import { readResizeRequest, readResizeStatus } from '../../../../src/resize/agent-protocol.js';
import { nodeResizeEvidence } from '../../../../src/resize/backend.js';

type Container = NonNullable<Pod['spec']>['containers'][number];

const NODE = 'node-a';
const OWNER = {
  apiVersion: 'apps.tailor.dev/v1alpha1',
  kind: 'CloneSet',
  name: 'web',
  uid: 'cs-uid',
  controller: true,
};
const OTHER_OWNER = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-uid', controller: true };
const OLD = 'web-old';
const NEW = 'web-new';

const revision = (name: string, number: number, image: string, cpu: string): ControllerRevision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  revision: number,
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, ownerReferences: [OWNER] },
  data: {
    template: {
      spec: {
        containers: [
          {
            name: 'app',
            image,
            resources: { requests: { cpu, memory: '64Mi' }, limits: { cpu, memory: '64Mi' } },
          },
        ],
      },
    },
  },
});
const REVISIONS = [revision(OLD, 1, 'app:v1', '100m'), revision(NEW, 2, 'app:v2', '200m')].map(trimRevisionForAgent);

/** Much of what a pod carries and no decision of the agent reads. */
function noisy(p: Pod, scale = 1): Pod {
  const out = structuredClone(p);
  const big = (n: number, size: number): Record<string, string> =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`example.com/k${i}`, 'v'.repeat(size)]));
  out.metadata = {
    ...out.metadata,
    labels: { ...out.metadata?.labels, ...big(Math.ceil(2000 * scale), 63) },
    annotations: { ...out.metadata?.annotations, ...big(2, Math.ceil(200_000 * scale)) },
    managedFields: [
      { manager: 'kubelet', operation: 'Update', fieldsV1: { f: 'x'.repeat(Math.ceil(50_000 * scale)) } },
    ],
    ownerReferences: [
      ...(out.metadata?.ownerReferences ?? []),
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'cm-uid' },
    ],
  };
  out.spec = {
    ...out.spec!,
    volumes: [{ name: 'data', emptyDir: {} }],
    containers: out.spec!.containers.map((c) => ({
      ...c,
      env: [{ name: 'PASSWORD', value: 'hunter2'.repeat(Math.ceil(1000 * scale)) }],
      command: ['sh', '-c', 'x'.repeat(Math.ceil(20_000 * scale))],
      resources: {
        ...c.resources,
        requests: { ...c.resources?.requests, 'example.com/gpu': '1' },
      },
    })),
  };
  return out;
}

// ---- Ended pods --------------------------------------------------------------------------------

describe('an ended pod is kept as its identity', () => {
  const heavy = (phase: string, owners: object[]): Pod =>
    noisy({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-a1b2c',
        namespace: 'ns',
        uid: 'pod-1',
        resourceVersion: '42',
        labels: { [LABEL_CONTROLLER_REVISION_HASH]: OLD },
        annotations: {
          [ANNOTATION_RESIZE_REQUEST]: '{"revision":"web-old","containers":{"app":{}}}',
          [ANNOTATION_RESTART_REQUEST]: '{"revision":"web-old","containers":{"c0":"containerd://c0"}}',
        },
        ownerReferences: owners as NonNullable<Pod['metadata']>['ownerReferences'],
      },
      spec: {
        nodeName: NODE,
        containers: Array.from({ length: 40 }, (_, i) => ({
          name: `c${i}`,
          image: `registry.example.com/${'i'.repeat(2000)}:v1`,
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'y'.repeat(5_000)] } } },
        })),
      },
      status: {
        phase,
        podIP: '198.18.16.3',
        // As the pod GC leaves a pod of a node out of service: Failed, its containers "running".
        containerStatuses: Array.from({ length: 40 }, (_, i) => ({
          name: `c${i}`,
          image: 'x',
          imageID: 'y',
          ready: true,
          restartCount: 0,
          containerID: `containerd://c${i}`,
          state: { running: {} },
          resources: { requests: { cpu: '1' } },
        })),
      },
    });

  it.each([
    ['Succeeded', [OWNER]],
    ['Failed', [OWNER]],
    ['Failed', [OTHER_OWNER]],
  ])('%s, of about 1 MB, owned by %j: under 1 KB', (phase, owners) => {
    const whole = heavy(phase, owners);
    expect(JSON.stringify(whole).length).toBeGreaterThan(1_000_000);
    const trimmed = trimPodForAgent(whole);
    expect(JSON.stringify(trimmed).length).toBeLessThan(1024);
    expect(trimmed).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-a1b2c',
        namespace: 'ns',
        uid: 'pod-1',
        resourceVersion: '42',
        ...(owners[0] === OWNER ? { ownerReferences: [OWNER] } : {}),
      },
      spec: { nodeName: NODE, containers: [] },
      status: { phase },
    });
  });

  it('no decision of the agent acts on it, trimmed or whole', () => {
    const whole = heavy('Failed', [OWNER]);
    for (const p of [whole, trimPodForAgent(whole)]) {
      expect(containersToStop(p)).toEqual([]);
      expect(imagesToPrePull([p], REVISIONS).size).toBe(0);
      expect(nodeResizeEvidence(NODE, [p]).kubeletResizes).toBeUndefined();
      expect(decide(p, readResizeRequest(p), readResizeStatus(p), evidenceFor(p, [p])).action).toBe('None');
    }
  });
});

// ---- Bounds per field --------------------------------------------------------------------------

function cloneSetPod(over: { container?: Partial<Container>; annotations?: Record<string, string> } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-1',
      namespace: 'ns',
      uid: 'pod-1',
      resourceVersion: '1',
      labels: { [LABEL_CONTROLLER_REVISION_HASH]: OLD },
      annotations: over.annotations ?? {},
      ownerReferences: [OWNER],
    },
    spec: {
      nodeName: NODE,
      containers: [
        {
          name: 'app',
          image: 'app:v1',
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
          ...over.container,
        },
      ],
    },
    status: {
      phase: 'Running',
      podIP: '198.18.16.3',
      containerStatuses: [
        {
          name: 'app',
          image: 'app:v1',
          imageID: 'sha256:1',
          ready: true,
          restartCount: 0,
          containerID: 'containerd://abc',
          state: { running: {} },
        },
      ],
    },
  };
}

describe('each field the agent keeps is bounded', () => {
  it('a resize request past its bound is kept as its length, and refused as unreadable, saying so', () => {
    const huge = `{"revision":"web-old","containers":{"app":{}},"pad":"${'x'.repeat(POD_BOUNDS.annotationChars)}"}`;
    const trimmed = trimPodForAgent(cloneSetPod({ annotations: { [ANNOTATION_RESIZE_REQUEST]: huge } }));
    const kept = trimmed.metadata?.annotations?.[ANNOTATION_RESIZE_REQUEST] ?? '';
    expect(kept.length).toBeLessThan(64);
    const request = readResizeRequest(trimmed);
    expect(request).toEqual({
      ok: false,
      error: `${ANNOTATION_RESIZE_REQUEST} is ${huge.length} characters, more than the ${POD_BOUNDS.annotationChars} kept of it`,
    });
    const action = decide(trimmed, request, readResizeStatus(trimmed), evidenceFor(trimmed, [trimmed]));
    expect(action).toMatchObject({
      action: 'Report',
      status: { state: 'Infeasible', reason: 'InvalidRequest', message: expect.stringMatching(/more than the 65536/) },
    });
  });

  it('a request within its bound is kept whole', () => {
    const request = '{"revision":"web-old","containers":{"app":{"requests":{"cpu":"200m"}}}}';
    const trimmed = trimPodForAgent(cloneSetPod({ annotations: { [ANNOTATION_RESIZE_REQUEST]: request } }));
    expect(trimmed.metadata?.annotations?.[ANNOTATION_RESIZE_REQUEST]).toBe(request);
  });

  it('an image past its bound is dropped: it differs from every revision image all the same', () => {
    const long = `registry.example.com/${'i'.repeat(POD_BOUNDS.imageChars)}`;
    const whole = cloneSetPod({ container: { image: long } });
    const trimmed = trimPodForAgent(whole);
    expect(trimmed.spec?.containers[0]?.image).toBeUndefined();
    expect([...imagesToPrePull([trimmed], REVISIONS).keys()]).toEqual([...imagesToPrePull([whole], REVISIONS).keys()]);
    expect([...imagesToPrePull([trimmed], REVISIONS).keys()]).toEqual(['app:v2']);
  });

  it('a container ID past its bound is dropped: no restart request can name it', () => {
    const whole = cloneSetPod({
      annotations: { [ANNOTATION_RESTART_REQUEST]: '{"revision":"web-old","containers":{"app":"containerd://abc"}}' },
    });
    expect(containersToStop(trimPodForAgent(whole))).toEqual([{ name: 'app', containerId: 'abc' }]);
    whole.status!.containerStatuses![0]!.containerID = `containerd://${'a'.repeat(POD_BOUNDS.containerIdChars)}`;
    expect(trimPodForAgent(whole).status?.containerStatuses?.[0]?.containerID).toBeUndefined();
    expect(containersToStop(trimPodForAgent(whole))).toEqual(containersToStop(whole));
  });

  it('pull secrets past their bound are dropped, in the pod order', () => {
    const whole = cloneSetPod();
    whole.spec!.imagePullSecrets = Array.from({ length: 100 }, (_, i) => ({ name: `s${i}` }));
    const kept = trimPodForAgent(whole).spec?.imagePullSecrets;
    expect(kept).toHaveLength(POD_BOUNDS.pullSecrets);
    expect(kept?.[0]).toEqual({ name: 's0' });
  });

  it('only the named port an httpGet hook goes to is kept', () => {
    const whole = cloneSetPod({
      container: {
        ports: [
          { name: 'http', containerPort: 8080 },
          { name: 'admin', containerPort: 9901 },
          ...Array.from({ length: 200 }, (_, i) => ({ name: `p${i}`, containerPort: 10_000 + i })),
        ],
        lifecycle: { preStop: { httpGet: { port: 'admin', path: '/drain' } } },
      },
    });
    const trimmed = trimPodForAgent(whole);
    expect(trimmed.spec?.containers[0]?.ports).toEqual([{ name: 'admin', containerPort: 9901 }]);
    expect(stopPlan(trimmed, 'app')).toEqual(stopPlan(whole, 'app'));
  });

  it("a preStop hook past what is left of the pod's bound is kept as its size, and its restart refused", () => {
    const command = ['sh', '-c', 'z'.repeat(PRESTOP_HOOKS_MAX_CHARS)];
    const whole = cloneSetPod({ container: { lifecycle: { preStop: { exec: { command } } } } });
    const trimmed = trimPodForAgent(whole);
    expect(JSON.stringify(trimmed).length).toBeLessThan(2048);
    const plan = stopPlan(trimmed, 'app');
    expect(plan.hook).toBeUndefined();
    expect(plan.refused).toMatch(/preStop hook of container app \(\d+ characters\) is past the 16384 characters/);
    expect(stopPlan(whole, 'app').hook).toEqual({ kind: 'exec', command });
  });

  it("a pod's hooks are kept whole while they fit its bound together, in spec order", () => {
    const hook = (n: number): Container['lifecycle'] => ({
      preStop: { exec: { command: ['sh', '-c', 'z'.repeat(n)] } },
    });
    const whole = cloneSetPod();
    const quarter = PRESTOP_HOOKS_MAX_CHARS / 4;
    whole.spec!.containers = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, lifecycle: hook(quarter - 100) }));
    whole.spec!.containers[4]!.lifecycle = hook(500);
    const trimmed = trimPodForAgent(whole);
    expect(['a', 'b', 'c', 'd', 'e'].map((name) => stopPlan(trimmed, name).refused === undefined)).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    for (const name of ['a', 'b', 'c', 'd']) expect(stopPlan(trimmed, name)).toEqual(stopPlan(whole, name));
  });

  it('a pod no CloneSet of ours controls keeps what admission and the evidence read only', () => {
    const whole = noisy(cloneSetPod({ container: { lifecycle: { preStop: { sleep: { seconds: 5 } } } } }), 0.01);
    whole.metadata!.ownerReferences = [OTHER_OWNER];
    expect(trimPodForAgent(whole)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-1', namespace: 'ns', uid: 'pod-1', resourceVersion: '1' },
      spec: {
        nodeName: NODE,
        containers: [
          {
            name: 'app',
            resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
          },
        ],
      },
      status: { phase: 'Running', containerStatuses: [{ name: 'app', state: { running: {} } }] },
    });
  });
});

// ---- The agent decides the same on what it keeps ------------------------------------------------

const ALLOCATABLE = { cpuMilli: 4000n, memoryBytes: 8n * 1024n ** 3n };
const LIMIT_RANGES: LimitRange[] = [
  { metadata: { name: 'lr', namespace: 'ns' }, spec: { limits: [{ type: 'Container', max: { cpu: '1500m' } }] } },
];

/** The evidence AgentReconciler.evidence gathers, from the pods the cache holds (nothing the agent applied). */
function evidenceFor(pod: Pod, nodePods: readonly Pod[]): Evidence {
  const request = readResizeRequest(pod);
  const kubeletResizes = nodeResizeEvidence(NODE, nodePods).kubeletResizes;
  const base = { workloadOwned: workloadOwner(pod) !== undefined, kubeletResizes, applied: undefined };
  if (!request.ok) return { ...base, admission: undefined };
  const r = request.value;
  const rev = REVISIONS.find((x) => x.metadata?.name === r.revision);
  let qosChange: string | undefined;
  let restart: string | undefined;
  try {
    qosChange = qosClassChange(pod, r);
    restart = restartRequiredBy(pod, r, () => undefined);
  } catch {
    // An unreadable quantity: validateRequest reports it first.
  }
  return {
    ...base,
    revisionPending:
      rev === undefined && base.workloadOwned && pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] === r.revision,
    notInRevision: requestNotInRevision(pod, r, rev),
    qosChange,
    restartRequired: restart,
    namespaceLimits: namespaceLimitsVerdict(pod, r, LIMIT_RANGES, [], false),
    admission: admit(r, pod, ALLOCATABLE, nodePods, new Map()),
  };
}

/** An action, the reason it does nothing left out (it is a log line). */
const actionShape = (a: Action): unknown =>
  a.action === 'None' ? { action: 'None', retryAfterMs: a.retryAfterMs } : a;

const outcome = <T>(f: () => T): T | string => {
  try {
    return f();
  } catch (err) {
    return `throws ${String(err)}`;
  }
};

/** Everything the agent decides about one pod of its node, from the node's pods as given. */
function decisions(pod: Pod, nodePods: readonly Pod[]): unknown {
  const targets = containersToStop(pod);
  return {
    resize: actionShape(decide(pod, readResizeRequest(pod), readResizeStatus(pod), evidenceFor(pod, nodePods))),
    stop: targets,
    plans: targets.map((t) => stopPlan(pod, t.name)),
    // What an actuation writes to the pod cgroup (a live pod of a CloneSet's: the only ones resized).
    cgroup:
      workloadOwner(pod) && holdsResources(pod)
        ? outcome(() => podCgroupValues(pod.spec ?? { containers: [] }))
        : undefined,
  };
}

const quantity = fc.constantFrom(undefined, '100m', '200m', '2', '64Mi', '1Gi');
/** Mostly what the old revision gives (Guaranteed, 100m and 64Mi), sometimes anything. */
const resourcesArb: fc.Arbitrary<NonNullable<Container['resources']>> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constant({ requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ rc: quantity, rm: quantity, lc: quantity, lm: quantity }).map(({ rc, rm, lc, lm }) => ({
      requests: { ...(rc ? { cpu: rc } : {}), ...(rm ? { memory: rm } : {}) },
      limits: { ...(lc ? { cpu: lc } : {}), ...(lm ? { memory: lm } : {}) },
    })),
  },
);

const hookArb: fc.Arbitrary<Container['lifecycle']> = fc.constantFrom(
  undefined,
  { preStop: { exec: { command: ['sh', '-c', 'sleep 5 && nginx -s quit'] } } },
  { preStop: { httpGet: { port: 'admin', path: '/drain', httpHeaders: [{ name: 'X-Drain', value: '1' }] } } },
  { preStop: { httpGet: { port: 8080, host: '10.0.0.1' } } },
  { preStop: { sleep: { seconds: 3 } } },
  { preStop: { tcpSocket: { port: 80 } } },
);

const containerArb = (name: string): fc.Arbitrary<{ c: Container; running: boolean }> =>
  fc
    .record({
      image: fc.constantFrom('app:v1', 'app:v2', `registry.example.com/${'i'.repeat(1100)}`),
      resources: resourcesArb,
      lifecycle: hookArb,
      running: fc.constantFrom(true, true, false),
      restartPolicyNotRequired: fc.constantFrom(true, true, false),
    })
    .map((r) => ({
      c: {
        name,
        image: r.image,
        resources: r.resources,
        resizePolicy: [
          { resourceName: 'cpu', restartPolicy: r.restartPolicyNotRequired ? 'NotRequired' : 'RestartContainer' },
          { resourceName: 'example.com/gpu', restartPolicy: 'NotRequired' },
        ],
        ports: [{ name: 'admin', containerPort: 9901 }, { containerPort: 9090 }],
        ...(r.lifecycle ? { lifecycle: r.lifecycle } : {}),
      },
      running: r.running,
    }));

const requestArb = fc.constantFrom(
  undefined,
  'not json',
  '{"revision":"web-new","containers":{"app":{"requests":{"cpu":"200m","memory":"64Mi"},"limits":{"cpu":"200m","memory":"64Mi"}}}}',
  '{"revision":"web-new","containers":{"app":{"requests":{"cpu":"200m","memory":"64Mi"},"limits":{"cpu":"200m","memory":"64Mi"}}}}',
  '{"revision":"web-old","containers":{"app":{"requests":{"cpu":"2","memory":"64Mi"},"limits":{"cpu":"2","memory":"64Mi"}}}}',
  '{"revision":"web-old","containers":{"side":{"requests":{"cpu":"100m"}}}}',
);

/** A pod of the node; `reports`: the node's kubelet reports its containers' resources (it resizes). */
const podArb = (i: number, reports: boolean): fc.Arbitrary<Pod> =>
  fc
    .record({
      owner: fc.constantFrom('cloneset', 'cloneset', 'cloneset', 'other', 'none'),
      phase: fc.constantFrom('Running', 'Running', 'Running', 'Running', 'Pending', 'Succeeded', 'Failed'),
      terminating: fc.boolean().map((b) => b && i % 3 === 0),
      revision: fc.constantFrom(OLD, NEW, NEW),
      app: containerArb('app'),
      sidecar: fc.option(containerArb('side'), { nil: undefined }),
      request: requestArb,
      status: fc.constantFrom(undefined, '{"revision":"web-new","state":"Deferred","since":"2026-01-01T00:00:00Z"}'),
      restart: fc.constantFrom(undefined, 'app', 'side', 'stale'),
      overhead: fc.boolean(),
      qosClass: fc.constantFrom(undefined, 'Burstable', 'Guaranteed'),
      grace: fc.constantFrom(undefined, 0, 30),
    })
    .map((r) => {
      const name = `p${i}`;
      const containers = [r.app, ...(r.sidecar ? [r.sidecar] : [])];
      const statuses = containers.map(({ c, running }) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: 'sha256:x',
        ready: running,
        restartCount: 0,
        containerID: `containerd://${name}-${c.name}`,
        state: running
          ? { running: { startedAt: '2026-01-01T00:00:00Z' } }
          : { waiting: { reason: 'CrashLoopBackOff' } },
        ...(reports ? { resources: c.resources } : {}),
      }));
      const restartId = r.restart === 'stale' ? 'containerd://old' : `containerd://${name}-${r.restart}`;
      const pod: Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace: 'ns',
          uid: `uid-${name}`,
          resourceVersion: '1',
          labels: { [LABEL_CONTROLLER_REVISION_HASH]: r.revision, app: 'web' },
          annotations: {
            ...(r.request ? { [ANNOTATION_RESIZE_REQUEST]: r.request } : {}),
            ...(r.status ? { [ANNOTATION_RESIZE_STATUS]: r.status } : {}),
            ...(r.restart
              ? {
                  [ANNOTATION_RESTART_REQUEST]: JSON.stringify({
                    revision: r.revision,
                    containers: { [r.restart === 'stale' ? 'app' : r.restart]: restartId },
                  }),
                }
              : {}),
          },
          ...(r.owner === 'cloneset'
            ? { ownerReferences: [OWNER] }
            : r.owner === 'other'
              ? { ownerReferences: [OTHER_OWNER] }
              : {}),
          ...(r.terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
        },
        spec: {
          nodeName: NODE,
          containers: [r.app.c],
          ...(r.sidecar ? { initContainers: [{ ...r.sidecar.c, restartPolicy: 'Always' }] } : {}),
          ...(r.overhead ? { overhead: { cpu: '50m', memory: '32Mi', 'example.com/x': '1' } } : {}),
          ...(r.grace !== undefined ? { terminationGracePeriodSeconds: r.grace } : {}),
          imagePullSecrets: [{ name: 'regcred' }],
        },
        status: {
          phase: r.phase,
          podIP: '198.18.16.3',
          ...(r.qosClass ? { qosClass: r.qosClass } : {}),
          containerStatuses: statuses.filter((s) => s.name === 'app'),
          ...(r.sidecar ? { initContainerStatuses: statuses.filter((s) => s.name === 'side') } : {}),
        },
      };
      return noisy(pod, 0.01);
    });

const nodeArb = fc
  .record({ pods: fc.integer({ min: 1, max: 5 }), reports: fc.constantFrom(false, false, true) })
  .chain(({ pods, reports }) => fc.tuple(...Array.from({ length: pods }, (_, i) => podArb(i, reports))));

describe('the agent decides the same on the pods it keeps as on whole ones', () => {
  it('resize, restart in place, preStop plan and pod cgroup, for every pod of the node', () => {
    fc.assert(
      fc.property(nodeArb, (whole) => {
        const trimmed = whole.map(trimPodForAgent);
        whole.forEach((pod, i) => {
          expect(decisions(trimmed[i]!, trimmed)).toEqual(decisions(pod, whole));
        });
      }),
      { numRuns: 300 },
    );
  });

  it("the pre-pull and the node's evidence", () => {
    fc.assert(
      fc.property(nodeArb, (whole) => {
        const trimmed = whole.map(trimPodForAgent);
        expect(imagesToPrePull(trimmed, REVISIONS)).toEqual(imagesToPrePull(whole, REVISIONS));
        expect(nodeResizeEvidence(NODE, trimmed).kubeletResizes).toEqual(
          nodeResizeEvidence(NODE, whole).kubeletResizes,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('within its bounds, whatever the pod carries', () => {
    fc.assert(
      fc.property(nodeArb, (whole) => {
        for (const pod of whole.map(trimPodForAgent)) {
          const size = JSON.stringify(pod).length;
          if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') expect(size).toBeLessThan(1024);
          // Two containers at most here: a few KB whatever the noise (the whole pods are over 30 KB).
          else expect(size).toBeLessThan(4096);
          for (const value of Object.values(pod.metadata?.annotations ?? {}))
            expect(value.length).toBeLessThanOrEqual(POD_BOUNDS.annotationChars);
          for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
            expect((c.image ?? '').length).toBeLessThanOrEqual(POD_BOUNDS.imageChars);
            expect(c.ports?.length ?? 0).toBeLessThanOrEqual(1);
            expect(c.env).toBeUndefined();
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});
