// The control-plane test bed serves real API calls: an object created through
// @kubernetes/client-node is seen by a watch as it is added, changed and removed.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { loadTestKubeConfig } from '../support/cluster/kube.js';
import { controlPlaneVersion } from '../support/cluster/kube-version.js';

const kc = loadTestKubeConfig();
const core = kc.makeApiClient(k8s.CoreV1Api);
const namespace = `testbed-${Date.now().toString(36)}`;

beforeAll(async () => {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
});
afterAll(async () => {
  await core.deleteNamespace({ name: namespace });
});

describe('the control-plane test bed', () => {
  it("reports the control plane's Kubernetes version (hack/versions.sh's default, whatever KUBE_VERSION's kubelet)", async () => {
    const info = await kc.makeApiClient(k8s.VersionApi).getCode();
    expect(info.gitVersion).toBe(`v${controlPlaneVersion()}`);
  });

  it('delivers added, modified and deleted events for an object to a watch', async () => {
    const seen: string[] = [];
    let done!: () => void;
    const allSeen = new Promise<void>((resolve) => (done = resolve));
    const watch = await new k8s.Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/configmaps`,
      // Only our object: the controller-manager adds kube-root-ca.crt to every namespace.
      { fieldSelector: 'metadata.name=probe' },
      (type: string, obj: k8s.V1ConfigMap) => {
        seen.push(`${type} ${obj.metadata?.name} ${obj.data?.['colour'] ?? '-'}`);
        if (type === 'DELETED') done();
      },
      () => undefined,
    );
    try {
      await core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name: 'probe' }, data: { colour: 'red' } },
      });
      await core.patchNamespacedConfigMap(
        { namespace, name: 'probe', body: { data: { colour: 'blue' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await core.deleteNamespacedConfigMap({ namespace, name: 'probe' });
      await allSeen;
    } finally {
      watch.abort();
    }
    expect(seen).toEqual(['ADDED probe red', 'MODIFIED probe blue', 'DELETED probe blue']);
  });
});
