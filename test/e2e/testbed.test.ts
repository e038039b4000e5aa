// The full test bed runs real pods: a busybox pod reaches Running and Ready on the node's kubelet,
// its container exists in containerd, and deleting the pod removes the container.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { loadTestKubeConfig } from '../support/cluster/kube.js';
import { NODE_NAME, containerdContainerIds, eventually } from '../support/cluster/testbed.js';

const kc = loadTestKubeConfig();
const core = kc.makeApiClient(k8s.CoreV1Api);
const namespace = `testbed-e2e-${Date.now().toString(36)}`;

beforeAll(async () => {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  // The namespace's default ServiceAccount is created by the controller-manager; pods wait for it.
  await eventually('default service account', () =>
    core.readNamespacedServiceAccount({ namespace, name: 'default' }).catch(() => undefined),
  );
});
afterAll(async () => {
  await core.deleteNamespace({ name: namespace });
});

describe('the full test bed', () => {
  it('has one Ready node', async () => {
    // Integration tests' fake kubelet registers a tainted stand-in node; only real ones count.
    const nodes = await core.listNode({ labelSelector: '!tailor.dev/fake-node' });
    expect(nodes.items.map((n) => n.metadata?.name)).toEqual([NODE_NAME]);
    const ready = nodes.items[0]?.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready?.status).toBe('True');
  });

  it('runs a busybox pod to Ready in containerd and removes its container when the pod is deleted', async () => {
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'hello' },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'main',
              image: 'tailor.local/busybox:v1',
              imagePullPolicy: 'Never',
              command: ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
              readinessProbe: { exec: { command: ['/bin/cat', '/etc/tailor-release'] }, periodSeconds: 1 },
            },
          ],
        },
      },
    });
    const ready = await eventually('pod Ready', async () => {
      const pod = await core.readNamespacedPod({ namespace, name: 'hello' });
      const isReady = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      return isReady ? pod : undefined;
    });
    expect(ready.status?.phase).toBe('Running');
    expect(ready.spec?.nodeName).toBe(NODE_NAME);
    expect(ready.status?.podIP).toMatch(/^198\.18\./);
    const containerId = ready.status?.containerStatuses?.[0]?.containerID?.replace('containerd://', '') ?? '';
    expect(containerdContainerIds()).toContain(containerId);

    await core.deleteNamespacedPod({ namespace, name: 'hello' });
    await eventually('pod gone', () =>
      core.readNamespacedPod({ namespace, name: 'hello' }).then(
        () => undefined,
        () => true,
      ),
    );
    await eventually('container removed from containerd', async () => (containerdContainerIds().includes(containerId) ? undefined : true));
  });
});
