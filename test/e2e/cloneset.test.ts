// The CloneSet controller on the full test bed: real scheduler, kubelet and containerd. Pods run
// busybox, become Ready through their probes, roll to a new image with ReCreate, scale through
// `kubectl scale clone`, and are garbage-collected when the CloneSet is deleted.
import { describe, expect, it } from '@jest/globals';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  patchTemplateAndWait,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import { eventually, kubectl } from '../support/cluster/testbed.js';

const { client, ns } = controllerTestBed('cloneset-e2e');

const container = (image: string): Record<string, unknown> => ({
  name: 'main',
  image,
  imagePullPolicy: 'Never',
  command: ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
  readinessProbe: { exec: { command: ['/bin/cat', '/etc/tailor-release'] }, periodSeconds: 1 },
});

describe('a CloneSet on a real kubelet', () => {
  it('runs its pods to Ready, rolls them to a new image with ReCreate, scales with kubectl and is garbage-collected', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'web',
        { replicas: 3, updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } },
        { containers: [container('tailor.local/busybox:v1')] },
      ),
    );
    await waitForReady(client, ns, 'web', 3, 90_000);

    await patchTemplateAndWait(client, ns, 'web', {
      template: { spec: { containers: [container('tailor.local/busybox:v2')] } },
      what: 'all pods on v2 and ready',
      until: (cs, pods) =>
        cs.status?.updatedReadyReplicas === 3 &&
        pods.length === 3 &&
        pods.every((p) => p.status?.containerStatuses?.[0]?.image?.endsWith('busybox:v2')),
      timeoutMs: 120_000,
    });

    expect(kubectl(['-n', ns, 'scale', 'clone', 'web', '--replicas=2'])).toContain('scaled');
    await waitForReady(client, ns, 'web', 2, 60_000);
    const columns = kubectl(['-n', ns, 'get', 'clone', 'web']);
    expect(columns.split('\n')[0]).toMatch(/DESIRED\s+UPDATED\s+UPDATED_READY\s+READY/);

    kubectl(['-n', ns, 'delete', 'clone', 'web', '--wait=true']);
    await eventually('pods garbage-collected', async () =>
      (await activePods(client, ns, 'web')).length === 0 ? true : undefined,
    );
  });
});
