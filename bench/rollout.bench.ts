// Rollout benchmark on the full test bed (DESIGN.md §6), all figures from one run:
//  - an in-place image rollout of N pods by a CloneSet (InPlaceIfPossible, maxUnavailable 1)
//    against a Deployment's rolling recreate of the same pods (maxUnavailable 1, maxSurge 0),
//    printed as a ratio (target <= 0.5);
//  - API writes per in-place-updated pod, from the controller's rest_client_requests_total
//    (target <= 3.5);
//  - resize latency through the kubelet: from the CloneSet edit until every pod's container
//    reports the new resources (target <= 5 s for 3 pods).
// Needs `make cluster-up MODE=full`; it runs the controller in this process, in its own namespace.
// Owns: that namespace, deleted at the end. Must not: start or stop the cluster.
import * as k8s from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { setupCloneSetController } from '../src/cloneset/setup.js';
import { KubeClient, type Pod } from '../src/runtime/kube-client.js';
import { silentLogger } from '../src/runtime/logger.js';
import { Manager } from '../src/runtime/manager.js';

const N = Number(process.env.BENCH_PODS ?? 10);
const KUBECONFIG = process.env.TAILOR_KUBECONFIG ?? '.tailor/cluster/kubeconfig';
const ns = `bench-${Date.now().toString(36)}`;

const container = (image: string, cpu = '50m', memory = '32Mi'): Record<string, unknown> => ({
  name: 'web',
  image,
  imagePullPolicy: 'Never',
  // A server that exits on SIGTERM, as a well-behaved one does (busybox httpd as PID 1 would not).
  command: ['/bin/sh', '-c', 'trap "exit 0" TERM; /bin/httpd -f -p 8080 -h /etc & wait'],
  readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
  resources: { requests: { cpu, memory }, limits: { cpu, memory } },
  resizePolicy: [
    { resourceName: 'cpu', restartPolicy: 'NotRequired' },
    { resourceName: 'memory', restartPolicy: 'NotRequired' },
  ],
});
const podSpec = (image: string, cpu?: string, memory?: string): Record<string, unknown> => ({
  terminationGracePeriodSeconds: 1,
  containers: [container(image, cpu, memory)],
});

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const pods = async (client: KubeClient, app: string): Promise<Pod[]> =>
  (await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: `app=${app}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
const allOn = (list: Pod[], image: string): boolean =>
  list.length === N &&
  list.every(
    (p) =>
      p.status?.containerStatuses?.[0]?.image?.endsWith(image) &&
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );

async function writes(manager: Manager): Promise<number> {
  const metric = await manager.metrics.restClientRequestsTotal.get();
  return metric.values.filter((v) => ['POST', 'PATCH', 'PUT', 'DELETE'].includes(String(v.labels.method))).reduce((s, v) => s + v.value, 0);
}

async function main(): Promise<void> {
  if (!existsSync(KUBECONFIG)) throw new Error(`no test bed at ${KUBECONFIG}: run 'make cluster-up MODE=full' first`);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG);
  const client = new KubeClient(kc);
  await client.create('/api/v1/namespaces', { metadata: { name: ns } });
  await until('service account', async () => !!(await client.get(`/api/v1/namespaces/${ns}/serviceaccounts/default`)));
  const manager = new Manager({ kubeConfig: kc, logger: silentLogger(), component: 'tailor-bench' });
  setupCloneSetController(manager, { namespace: ns, workers: 4, logger: silentLogger() });
  const run = manager.run();
  try {
    // Deployment, rolling recreate: one pod down at a time, no surge.
    await client.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      metadata: { name: 'deploy' },
      spec: {
        replicas: N,
        selector: { matchLabels: { app: 'deploy' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        template: { metadata: { labels: { app: 'deploy' } }, spec: podSpec('tailor.local/busybox:v1') },
      },
    });
    await until('deployment ready', async () => allOn(await pods(client, 'deploy'), 'busybox:v1'));
    let t0 = Date.now();
    await client.patch(`/apis/apps/v1/namespaces/${ns}/deployments/deploy`, { spec: { template: { spec: podSpec('tailor.local/busybox:v2') } } }, 'strategic');
    await until('deployment rolled', async () => allOn(await pods(client, 'deploy'), 'busybox:v2'));
    const recreateMs = Date.now() - t0;
    await client.delete(`/apis/apps/v1/namespaces/${ns}/deployments/deploy`, { propagationPolicy: 'Foreground' });
    await until('deployment pods gone', async () => (await pods(client, 'deploy')).length === 0);

    // CloneSet, in place.
    const cs = `/apis/apps.tailor.dev/v1alpha1/namespaces/${ns}/clonesets`;
    await client.create(cs, {
      apiVersion: 'apps.tailor.dev/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'clone' },
      spec: {
        replicas: N,
        selector: { matchLabels: { app: 'clone' } },
        updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 },
        template: { metadata: { labels: { app: 'clone' } }, spec: podSpec('tailor.local/busybox:v1') },
      },
    });
    await until('cloneset ready', async () => allOn(await pods(client, 'clone'), 'busybox:v1'));
    await new Promise((r) => setTimeout(r, 1000));
    const writesBefore = await writes(manager);
    t0 = Date.now();
    await client.patch(`${cs}/clone`, { spec: { template: { spec: podSpec('tailor.local/busybox:v2') } } }, 'merge');
    await until('cloneset rolled in place', async () => allOn(await pods(client, 'clone'), 'busybox:v2'));
    const inPlaceMs = Date.now() - t0;
    await new Promise((r) => setTimeout(r, 1000));
    const writesPerPod = ((await writes(manager)) - writesBefore) / N;

    // Resize of 3 pods through the kubelet.
    await client.patch(`${cs}/clone`, { spec: { replicas: 3 } }, 'merge');
    await until('3 pods', async () => (await pods(client, 'clone')).length === 3);
    t0 = Date.now();
    await client.patch(`${cs}/clone`, { spec: { template: { spec: podSpec('tailor.local/busybox:v2', '100m', '64Mi') } } }, 'merge');
    await until('resized', async () =>
      (await pods(client, 'clone')).every((p) => p.status?.containerStatuses?.[0]?.resources?.limits?.['memory'] === '64Mi'),
    );
    const resizeMs = Date.now() - t0;

    const ratio = inPlaceMs / recreateMs;
    console.log(`rollout of ${N} pods: in place ${(inPlaceMs / 1000).toFixed(1)} s, Deployment recreate ${(recreateMs / 1000).toFixed(1)} s`);
    console.log(`in-place/recreate ratio: ${ratio.toFixed(2)} (target <= 0.5; ${ratio <= 0.5 ? 'meets target' : 'MISSES target'})`);
    console.log(`API writes per in-place-updated pod: ${writesPerPod.toFixed(2)} (target <= 3.5; ${writesPerPod <= 3.5 ? 'meets target' : 'MISSES target'})`);
    console.log(`resize of 3 pods through the kubelet, edit to actuated: ${(resizeMs / 1000).toFixed(2)} s (target <= 5 s; ${resizeMs <= 5000 ? 'meets target' : 'MISSES target'})`);
  } finally {
    await manager.stop();
    await run;
    await client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error('rollout bench failed:', err);
  process.exitCode = 1;
});
