// The agent backend on a node whose kubelet cannot resize: the test bed is switched to the
// profile with InPlacePodVerticalScaling=false (the 1.34 kubelet restarted with it; the 1.37 control
// plane keeps the gate, locked on: decision 62), Tailor's node agent runs for the node against the test bed's containerd,
// and the controller (backend auto) sends resizes to it. Pods are resized with restartCount
// unchanged, container and pod cgroups take the kubelet-identical values, and a request above
// node allocatable is reported Infeasible. The agent is the in-cluster DaemonSet that `make dev`
// deploys, under the admission policy `make dev` installs (the chart's templates/policy): its resize-status
// writes pass as the agent's service account on its own node, a pod editor's are refused. A pod
// with a RuntimeClass overhead keeps it in its pod cgroup through a resize. The default profile is
// restored afterwards. An InPlaceStatefulSet's pods resize the same way (one engine, decision 88).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  patchTemplateAndWait,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { grantPodPatch } from '../support/cluster/rbac.js';
import { eventually, kubectl, podCgroupFile, sizedContainer } from '../support/cluster/testbed.js';
import {
  newStatefulSet,
  patchSet,
  readSet,
  setPods,
  setsPath,
  waitForRunningAndReady,
} from '../support/fixtures/stateful.js';
import type { Pod } from '../../src/api/wire.js';

/** The revision the agent's resize answer on a pod is about. */
const resizeStatusRevision = (pod: Pod): string | undefined =>
  (JSON.parse(pod.metadata?.annotations?.['apps.tailor.dev/resize-status'] ?? '{}') as { revision?: string }).revision;

const profile = (gates: string): void => {
  execFileSync('bash', ['hack/cluster.sh', 'up', 'full'], {
    stdio: 'pipe',
    env: { ...process.env, FEATURE_GATES: gates },
  });
};

beforeAll(() => {
  // `make dev` on the gate-off profile: the cluster switches, and the agent runs as its DaemonSet
  // (the chart with hack/dev-values.yaml: the image, RBAC, CRI socket and cgroup mounts are what is under test).
  execFileSync('bash', ['hack/dev.sh'], {
    stdio: 'pipe',
    env: {
      ...process.env,
      FEATURE_GATES: 'InPlacePodVerticalScaling=false',
      KUBECONFIG: process.env.TAILOR_KUBECONFIG,
    },
  });
}, 300_000);
const { client, ns } = controllerTestBed('agent-e2e');
afterAll(() => profile('InPlacePodVerticalScaling=true'), 180_000);

const container = sizedContainer;

describe('resize through the node agent', () => {
  it('resizes 3 pods through CRI with no restart, kubelet-identical cgroups, and status.resize settling', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'web',
        { replicas: 3, updateStrategy: { type: 'InPlaceIfPossible' } },
        { containers: [container('100m', '64Mi')] },
      ),
    );
    await waitForReady(client, ns, 'web', 3, 120_000);
    const before = await activePods(client, ns, 'web');
    expect(before.every((p) => p.status?.containerStatuses?.[0]?.resources === undefined)).toBe(true);

    const done = await patchTemplateAndWait(client, ns, 'web', {
      template: { spec: { containers: [container('200m', '128Mi')] } },
      what: 'agent applied',
      until: (cs, pods) =>
        cs.status?.updatedReplicas === 3 &&
        (cs.status?.resize?.resizing ?? 1) === 0 &&
        pods.every(
          (p) =>
            (
              JSON.parse(p.metadata?.annotations?.['apps.tailor.dev/resize-status'] ?? '{}') as {
                state?: string;
                revision?: string;
              }
            ).revision === cs.status?.updateRevision,
        ),
      timeoutMs: 120_000,
    });
    expect(done.status?.resize?.pods ?? []).toEqual([]);
    const after = await activePods(client, ns, 'web');
    expect(new Set(after.map((p) => p.metadata?.uid))).toEqual(new Set(before.map((p) => p.metadata?.uid)));
    for (const pod of after) {
      expect(pod.status?.containerStatuses?.[0]?.restartCount).toBe(
        before.find((b) => b.metadata?.uid === pod.metadata?.uid)?.status?.containerStatuses?.[0]?.restartCount,
      );
      for (const level of ['container', 'pod'] as const) {
        expect(podCgroupFile('cpu', pod, 'cpu.shares', level)).toBe('204');
        expect(podCgroupFile('cpu', pod, 'cpu.cfs_quota_us', level)).toBe('20000');
        expect(podCgroupFile('memory', pod, 'memory.limit_in_bytes', level)).toBe(String(128 * 1024 * 1024));
      }
    }
  });

  it("resizes an InPlaceStatefulSet's pods through CRI: the same pods and names, no restart, kubelet-identical cgroups", async () => {
    const set = newStatefulSet('db', 2, { podManagementPolicy: 'Parallel' });
    set.spec.template.spec.containers = [container('100m', '64Mi')];
    await client.create(setsPath(ns), set);
    const before = await waitForRunningAndReady(client, ns, 2);

    await patchSet(client, ns, 'db', {
      spec: {
        template: {
          ...set.spec.template,
          spec: { ...set.spec.template.spec, containers: [container('200m', '128Mi')] },
        },
      },
    });
    const done = await eventually(
      'db resized through the agent',
      async () => {
        const now = await readSet(client, ns, 'db');
        const s = now.status;
        const pods = await setPods(client, ns);
        const answered = pods.every((p) => resizeStatusRevision(p) === s?.updateRevision);
        const settled =
          s?.observedGeneration === now.metadata.generation &&
          s?.updatedReplicas === 2 &&
          (s.resize?.resizing ?? 1) === 0;
        return settled && answered ? { set: now, pods } : undefined;
      },
      120_000,
    );
    expect(done.set.status?.resize?.pods ?? []).toEqual([]);
    expect(done.pods.map((p) => [p.metadata?.name, p.metadata?.uid])).toEqual(
      before.map((p) => [p.metadata?.name, p.metadata?.uid]),
    );
    for (const [i, pod] of done.pods.entries()) {
      expect(pod.status?.containerStatuses?.[0]?.restartCount).toBe(
        before[i]?.status?.containerStatuses?.[0]?.restartCount,
      );
      expect(podCgroupFile('cpu', pod, 'cpu.cfs_quota_us', 'container')).toBe('20000');
      expect(podCgroupFile('memory', pod, 'memory.limit_in_bytes', 'container')).toBe(String(128 * 1024 * 1024));
    }
  });

  it("keeps a RuntimeClass's overhead in the pod cgroup: a cpu-only resize leaves the pod memory limit at limits + overhead", async () => {
    const Mi = 1024 * 1024;
    const runtimeClass = `tailor-overhead-${ns}`;
    await client.create('/apis/node.k8s.io/v1/runtimeclasses', {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: runtimeClass },
      handler: 'runc',
      overhead: { podFixed: { cpu: '50m', memory: '128Mi' } },
    });
    try {
      await client.create(
        cloneSetPath(ns),
        cloneSetManifest(
          'overhead',
          { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' } },
          { runtimeClassName: runtimeClass, containers: [container('100m', '128Mi')] },
        ),
      );
      await waitForReady(client, ns, 'overhead', 1, 120_000);
      const [before] = await activePods(client, ns, 'overhead');
      if (!before) throw new Error('no pod');
      expect(before.spec?.overhead).toEqual({ cpu: '50m', memory: '128Mi' });
      expect(podCgroupFile('memory', before, 'memory.limit_in_bytes', 'pod')).toBe(String(256 * Mi));

      await patchTemplateAndWait(client, ns, 'overhead', {
        template: { spec: { containers: [container('200m', '128Mi')] } },
        what: 'agent applied',
        until: (cs, pods) =>
          cs.status?.updatedReplicas === 1 &&
          (cs.status?.resize?.resizing ?? 1) === 0 &&
          pods.every(
            (p) =>
              (JSON.parse(p.metadata?.annotations?.['apps.tailor.dev/resize-status'] ?? '{}') as { revision?: string })
                .revision === cs.status?.updateRevision,
          ),
        timeoutMs: 120_000,
      });
      const [after] = await activePods(client, ns, 'overhead');
      if (!after) throw new Error('no pod');
      expect(after.metadata?.uid).toBe(before.metadata?.uid);
      expect(podCgroupFile('cpu', after, 'cpu.cfs_quota_us', 'container')).toBe('20000');
      // The pod's values count the overhead: (200m + 50m) cpu, (128Mi + 128Mi) memory.
      expect(podCgroupFile('cpu', after, 'cpu.cfs_quota_us', 'pod')).toBe('25000');
      expect(podCgroupFile('cpu', after, 'cpu.shares', 'pod')).toBe('256');
      expect(podCgroupFile('memory', after, 'memory.limit_in_bytes', 'pod')).toBe(String(256 * Mi));
    } finally {
      await client.delete(`/apis/node.k8s.io/v1/runtimeclasses/${runtimeClass}`).catch(() => undefined);
    }
  });

  it('refuses a forged resize-status from a user who may patch pods, through the policy make dev installs', async () => {
    const [pod] = await activePods(client, ns, 'web');
    await grantPodPatch(client, ns, [{ kind: 'User', name: 'pod-editor' }]);
    const forged = '{"revision":"forged","state":"","since":"2026-01-01T00:00:00Z","applied":{}}';
    let refusal = '';
    try {
      kubectl([
        '-n',
        ns,
        'annotate',
        '--overwrite',
        `pod/${pod?.metadata?.name ?? ''}`,
        '--as=pod-editor',
        `apps.tailor.dev/resize-status=${forged}`,
      ]);
    } catch (err) {
      refusal = String((err as { stderr?: unknown }).stderr ?? err);
    }
    expect(refusal).toMatch(
      /ValidatingAdmissionPolicy 'tailor-pod-annotations' with binding 'tailor-pod-annotations' denied request: the annotation apps\.tailor\.dev\/resize-status may be set or changed only by Tailor's node agent/,
    );
  });

  it('reports a request above node allocatable as Infeasible, and ResizeBlocked with onInfeasible Wait', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'big',
        { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible', resizeStrategy: { onInfeasible: 'Wait' } } },
        { containers: [container('50m', '32Mi')] },
      ),
    );
    await waitForReady(client, ns, 'big', 1, 120_000);
    const cs = await patchTemplateAndWait(client, ns, 'big', {
      template: { spec: { containers: [container('500', '32Mi')] } },
      what: 'Infeasible',
      until: (c) => c.status?.resize?.infeasible === 1,
      timeoutMs: 60_000,
    });
    expect(cs.status?.conditions?.find((c) => c.type === 'ResizeBlocked')?.status).toBe('True');
    await eventually('pod still running', async () =>
      (await activePods(client, ns, 'big')).length === 1 ? true : undefined,
    );
  });
});
