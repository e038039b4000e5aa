// The story of docs/architecture.md §1 What Tailor does, for images on a real kubelet: `kubectl edit` the image of a 4-pod
// CloneSet and every pod keeps its UID, IP and node while its container restarts once with the
// new image; at most one pod is unready at a time, and each pod leaves the Service's ready
// endpoints before its container restarts.
import { describe, expect, it } from '@jest/globals';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import type { Pod } from '../../src/api/wire.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  waitForCloneSet,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import { PodWatch } from '../support/cluster/pod-watch.js';
import { kubectl } from '../support/cluster/testbed.js';
import { setTimeout as sleep } from 'node:timers/promises';

const { client, ns } = controllerTestBed('inplace-e2e');

const container = (image: string): Record<string, unknown> => ({
  name: 'web',
  image,
  imagePullPolicy: 'Never',
  command: ['/bin/httpd', '-f', '-p', '8080', '-h', '/etc'],
  ports: [{ containerPort: 8080 }],
  readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
});

interface Slice {
  endpoints?: { targetRef?: { name?: string }; conditions?: { ready?: boolean } }[];
}

describe('in-place image update on a real kubelet', () => {
  it('keeps UID, IP and node, restarts the container once, drains endpoints first, one pod at a time', async () => {
    await client.create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'web',
        { replicas: 4, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          containers: [container('tailor.local/busybox:v1')],
        },
      ),
    );
    await waitForReady(client, ns, 'web', 4, 120_000);
    const before = new Map((await activePods(client, ns, 'web')).map((p) => [p.metadata?.uid ?? '', p]));

    // For each pod: when it left the ready endpoints, and when its container started again.
    const leftEndpoints = new Map<string, number>();
    const poll = setInterval(() => {
      client
        .list<Slice>(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
          labelSelector: 'kubernetes.io/service-name=web',
        })
        .then((slices) => {
          for (const e of slices.items.flatMap((s) => s.endpoints ?? [])) {
            const name = e.targetRef?.name ?? '';
            if (e.conditions?.ready === false && !leftEndpoints.has(name)) leftEndpoints.set(name, Date.now());
          }
        })
        .catch(() => undefined);
    }, 100);
    const watch = await PodWatch.start(client, ns, 'app=web', 4);

    // What `kubectl edit` does: a patch of the image in the CloneSet's template.
    kubectl([
      '-n',
      ns,
      'patch',
      'clone',
      'web',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"tailor.local/busybox:v2"}]',
    ]);
    await waitForCloneSet(
      client,
      ns,
      'web',
      'all pods on v2 and ready',
      (cs, pods) =>
        cs.status?.updatedReadyReplicas === 4 &&
        pods.every((p) => p.status?.containerStatuses?.[0]?.image?.endsWith('busybox:v2')),
      180_000,
    );
    // The kubelet's status reconcile runs every 10 s: a Ready it disagrees with would flip back
    // within that time (decision 0007), so keep watching past the last pod's completion.
    await sleep(11_000);
    clearInterval(poll);
    watch.stop();

    const after = await activePods(client, ns, 'web');
    expect(new Set(after.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    for (const pod of after) {
      const old = before.get(pod.metadata?.uid ?? '') as Pod;
      const [was, now] = [old.status?.containerStatuses?.[0], pod.status?.containerStatuses?.[0]];
      expect(pod.status?.podIP).toBe(old.status?.podIP);
      expect(pod.spec?.nodeName).toBe(old.spec?.nodeName);
      expect(now?.restartCount).toBe((was?.restartCount ?? 0) + 1);
      expect(now?.imageID).not.toBe(was?.imageID);
      const restartedAt = Date.parse(now?.state?.running?.startedAt ?? '');
      const left = leftEndpoints.get(pod.metadata?.name ?? '');
      expect(left).toBeDefined();
      // Endpoint timestamps are polled (100 ms); startedAt has 1 s resolution, rounded down.
      expect(left!).toBeLessThanOrEqual(restartedAt + 1000);
    }
    expect(watch.uidsEverSeen.size).toBe(4);
    watch.expectUnavailableAtMost(1);
  });
});
