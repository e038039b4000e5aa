// The full test bed is a real cluster of NODES nodes (three on the default release, one on the
// others; hack/test.sh): each Ready on containerd 2.x, each running pods in its own runtime and
// cgroup root, pods on different nodes reaching each other, and a claim of the default
// StorageClass bound to a volume on its pod's node (decision 61).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { KubeClient } from '../../src/runtime/kube-client.js';
import { createTestNamespace, loadTestKubeConfig } from '../support/cluster/kube.js';
import { kubeVersion } from '../support/cluster/kube-version.js';
import { NODE_NAMES, containerdContainerIds, eventually, kubectl } from '../support/cluster/testbed.js';
import { APISERVER_HOST, APISERVER_PORT } from '../support/cluster/bed.js';

const kc = loadTestKubeConfig();
const core = kc.makeApiClient(k8s.CoreV1Api);
const namespace = `testbed-e2e-${Date.now().toString(36)}`;
const nodes = NODE_NAMES.slice(0, Number(process.env.NODES ?? NODE_NAMES.length));

beforeAll(async () => {
  const client = new KubeClient(kc);
  try {
    await createTestNamespace(client, namespace, { anyNode: true });
  } finally {
    client.close();
  }
});
afterAll(async () => {
  await core.deleteNamespace({ name: namespace });
});

/** A busybox pod on `node` serving HTTP on 8080 (busybox httpd), Ready when it serves. */
function serverPod(name: string, node: string, extra: Partial<k8s.V1PodSpec> = {}): k8s.V1Pod {
  return {
    metadata: { name },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': node },
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: 'tailor.local/busybox:v1',
          imagePullPolicy: 'Never',
          command: [
            '/bin/sh',
            '-c',
            'mkdir -p /www && echo served-by-$(hostname) > /www/index.html && exec httpd -f -p 8080 -h /www',
          ],
          readinessProbe: { exec: { command: ['/bin/cat', '/etc/tailor-release'] }, periodSeconds: 1 },
        },
      ],
      ...extra,
    },
  };
}

async function readyPod(name: string): Promise<k8s.V1Pod> {
  return eventually(`pod ${name} Ready`, async () => {
    const pod = await core.readNamespacedPod({ namespace, name });
    return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? pod : undefined;
  });
}

describe('the full test bed', () => {
  it("has NODES Ready nodes, each on containerd 2.x and the targeted release's kubelet, with its own address", async () => {
    // Integration tests' fake kubelet registers a tainted stand-in node; only real ones count.
    const listed = await core.listNode({ labelSelector: '!tailor.dev/fake-node' });
    const seen = listed.items.map((n) => ({
      name: n.metadata?.name,
      ready: n.status?.conditions?.find((c) => c.type === 'Ready')?.status,
      runtime: n.status?.nodeInfo?.containerRuntimeVersion?.replace(/\.\d+\.\d+$/, ''),
      kubelet: n.status?.nodeInfo?.kubeletVersion,
    }));
    expect(seen).toEqual(
      nodes.map((name) => ({ name, ready: 'True', runtime: 'containerd://2', kubelet: `v${kubeVersion()}` })),
    );
    const addresses = listed.items.map((n) => n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address);
    expect(new Set(addresses).size).toBe(nodes.length);
  });

  it('runs a pod on every node in that node own containerd and cgroup root, and removes its container when the pod is deleted', async () => {
    for (const node of nodes) await core.createNamespacedPod({ namespace, body: serverPod(`on-${node}`, node) });
    for (const node of nodes) {
      const pod = await readyPod(`on-${node}`);
      expect(pod.spec?.nodeName).toBe(node);
      expect(pod.status?.podIP).toMatch(/^198\.18\./);
      const id = pod.status?.containerStatuses?.[0]?.containerID?.replace('containerd://', '') ?? '';
      expect(nodes.filter((n) => containerdContainerIds(n).includes(id))).toEqual([node]);
      // The node's kubelet keeps its pods below its own cgroup root (/<node>), never another's.
      expect(existsSync(`/sys/fs/cgroup/memory/${node}/kubepods/besteffort/pod${pod.metadata?.uid}`)).toBe(true);
    }
    const first = await core.readNamespacedPod({ namespace, name: `on-${nodes[0]}` });
    const id = first.status?.containerStatuses?.[0]?.containerID?.replace('containerd://', '') ?? '';
    await core.deleteNamespacedPod({ namespace, name: `on-${nodes[0]}` });
    await eventually('container removed from containerd', async () =>
      containerdContainerIds(nodes[0]).includes(id) ? undefined : true,
    );
  });

  it('lets pods on different nodes reach each other and the API server', async () => {
    const names = nodes.map((node) => `net-${node}`);
    for (const [i, node] of nodes.entries())
      await core.createNamespacedPod({ namespace, body: serverPod(names[i]!, node) });
    const pods = await Promise.all(names.map(readyPod));
    for (const from of pods) {
      for (const to of pods) {
        const got = kubectl([
          '-n',
          namespace,
          'exec',
          from.metadata!.name!,
          '--',
          'sh',
          '-c',
          `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${to.status?.podIP} 8080 | tail -1`,
        ]).trim();
        expect({ from: from.spec?.nodeName, to: to.spec?.nodeName, got }).toEqual({
          from: from.spec?.nodeName,
          to: to.spec?.nodeName,
          got: `served-by-${to.metadata?.name}`,
        });
      }
      // Plain HTTP to the TLS port: the API server answers 400, which proves the connection.
      const api = kubectl([
        '-n',
        namespace,
        'exec',
        from.metadata!.name!,
        '--',
        'sh',
        '-c',
        `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${APISERVER_HOST} ${APISERVER_PORT} | head -1`,
      ]);
      expect(api.trim()).toMatch(/^HTTP\/1\.0 400/);
    }
  });

  it('binds a claim of the default StorageClass to a volume on the node its pod was scheduled to', async () => {
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    const node = nodes.at(-1)!;
    const pod = serverPod('with-claim', node, {
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    });
    pod.spec!.containers[0]!.volumeMounts = [{ name: 'data', mountPath: '/www' }];
    await core.createNamespacedPod({ namespace, body: pod });
    await readyPod('with-claim');
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    expect(claim.status?.phase).toBe('Bound');
    expect(claim.spec?.storageClassName).toBe('local-path');
    const volume = await core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
    const term = volume.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0];
    expect(term?.values).toEqual([node]);
  });
});
