// What current Kubernetes resizes and updates in place beyond a pod's containers, on a real
// kubelet: a native sidecar's cpu (1.33+) and image, and the pod's own cpu limit
// (spec.resources, in place from 1.36; recreated on older clusters, as before).
import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  patchTemplateAndWait,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import { RESIZE_WITHOUT_RESTART, RUN_UNTIL_TERM } from '../support/cluster/testbed.js';

const { client, ns } = controllerTestBed('current-k8s');

const loop = RUN_UNTIL_TERM;
const notRequired = RESIZE_WITHOUT_RESTART;
const res = (cpu: string) => ({ requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu, memory: '64Mi' } });
const sidecar = (image: string, cpu: string) => ({
  name: 'mesh',
  image,
  imagePullPolicy: 'Never',
  restartPolicy: 'Always',
  command: loop,
  resources: res(cpu),
  resizePolicy: notRequired,
});
const app = {
  name: 'main',
  image: 'tailor.local/busybox:v1',
  imagePullPolicy: 'Never',
  command: loop,
  resources: res('100m'),
  resizePolicy: notRequired,
};

const uids = (pods: Pod[]): Set<string> => new Set(pods.map((p) => p.metadata?.uid ?? ''));
const restarts = (pod: Pod, name: string): number | undefined =>
  [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].find((s) => s.name === name)
    ?.restartCount;
const status = (pod: Pod, name: string) =>
  [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].find((s) => s.name === name);

/** The minor release of the kubelet on the node the pods run on (the control plane may be newer: decision 62). */
async function kubeletMinor(): Promise<number> {
  const node = await client.get<{ status?: { nodeInfo?: { kubeletVersion?: string } } }>(
    `/api/v1/nodes/${process.env.TAILOR_TEST_NODE ?? 'tailor-node'}`,
  );
  return Number(/^v1\.(\d+)\./.exec(node.status?.nodeInfo?.kubeletVersion ?? '')?.[1] ?? 0);
}

describe('native sidecars in place', () => {
  it('resizes a sidecar cpu limit on 3 pods with the same UIDs and no restart', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'mesh-cpu',
        { replicas: 3, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          initContainers: [sidecar('tailor.local/busybox:v1', '100m')],
          containers: [app],
        },
      ),
    );
    await waitForReady(client, ns, 'mesh-cpu', 3);
    const before = await activePods(client, ns, 'mesh-cpu');
    const started = Date.now();
    const after = await patchTemplateAndWait(client, ns, 'mesh-cpu', {
      template: { spec: { initContainers: [sidecar('tailor.local/busybox:v1', '200m')] } },
      what: 'sidecars resized',
      until: (cs, pods) =>
        cs.status?.updatedReadyReplicas === 3 &&
        (cs.status?.resize?.resizing ?? 1) === 0 &&
        pods.length === 3 &&
        pods.every((p) => status(p, 'mesh')?.resources?.limits?.['cpu'] === '200m'),
    });
    process.stdout.write(
      `[current-k8s] sidecar cpu resize of 3 pods: ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    const pods = await activePods(client, ns, 'mesh-cpu');
    expect(after.status?.updatedReplicas).toBe(3);
    expect(uids(pods)).toEqual(uids(before));
    for (const pod of pods) {
      expect(restarts(pod, 'mesh')).toBe(0);
      expect(restarts(pod, 'main')).toBe(0);
    }
  });

  it("changes a sidecar's image in place: same UID, the sidecar restarts once with the new image, the app not at all", async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'mesh-image',
        { replicas: 3, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          initContainers: [sidecar('tailor.local/busybox:v1', '100m')],
          containers: [app],
        },
      ),
    );
    await waitForReady(client, ns, 'mesh-image', 3);
    const before = await activePods(client, ns, 'mesh-image');
    const imageIds = new Map(before.map((p) => [p.metadata?.uid, status(p, 'mesh')?.imageID]));
    const started = Date.now();
    await patchTemplateAndWait(client, ns, 'mesh-image', {
      template: { spec: { initContainers: [sidecar('tailor.local/busybox:v2', '100m')] } },
      what: 'sidecars on v2',
      until: (cs, pods) =>
        cs.status?.updatedReadyReplicas === 3 &&
        pods.length === 3 &&
        pods.every((p) => status(p, 'mesh')?.image?.endsWith('busybox:v2') && status(p, 'mesh')?.ready),
    });
    const seconds = (Date.now() - started) / 1000;
    const pods = await activePods(client, ns, 'mesh-image');
    const appRestarts = pods.map((p) => restarts(p, 'main') ?? 0).reduce((a, b) => a + b, 0);
    const kept = [...uids(pods)].filter((uid) => uids(before).has(uid)).length;
    process.stdout.write(
      `[current-k8s] sidecar image update of 3 pods: ${seconds.toFixed(1)} s, ${kept} of 3 UIDs kept, app restarts ${appRestarts}\n`,
    );
    expect(uids(pods)).toEqual(uids(before));
    for (const pod of pods) {
      expect(restarts(pod, 'mesh')).toBe(1);
      expect(status(pod, 'mesh')?.imageID).not.toBe(imageIds.get(pod.metadata?.uid));
      expect(restarts(pod, 'main')).toBe(0);
    }
  });
});

describe('pod-level resources', () => {
  it('resizes a pod-level cpu limit in place on a kubelet >= 1.36 (same UIDs, no restarts), and recreates on older kubelets', async () => {
    const minor = await kubeletMinor();
    const podLevel = (cpu: string) => ({ requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu, memory: '128Mi' } });
    const plain = { name: 'main', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never', command: loop };
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'pod-level',
        { replicas: 3, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          resources: podLevel('200m'),
          containers: [plain],
        },
      ),
    );
    await waitForReady(client, ns, 'pod-level', 3);
    const before = await activePods(client, ns, 'pod-level');
    const started = Date.now();
    await patchTemplateAndWait(client, ns, 'pod-level', {
      template: { spec: { resources: podLevel('400m') } },
      what: 'pods at the new pod-level limit',
      until: (cs, pods) =>
        cs.status?.updatedReadyReplicas === 3 &&
        (cs.status?.resize?.resizing ?? 1) === 0 &&
        pods.length === 3 &&
        pods.every((p) => p.spec?.resources?.limits?.['cpu'] === '400m'),
      timeoutMs: 180_000,
    });
    process.stdout.write(
      `[current-k8s] pod-level cpu limit change of 3 pods on 1.${minor}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    const pods = await activePods(client, ns, 'pod-level');
    if (minor >= 36) {
      expect(uids(pods)).toEqual(uids(before));
      for (const pod of pods) expect(restarts(pod, 'main')).toBe(0);
    } else {
      expect([...uids(pods)].some((uid) => uids(before).has(uid))).toBe(false);
    }
  });
});
