// Rollout benchmark on the full test bed (docs/architecture.md §7 Performance targets, issue 16), all figures from one run, for
// two kinds of pods:
//  - plain: one container that exits on SIGTERM, no probe;
//  - realistic: an init container (2 s), a sidecar that needs 3 s to become ready, the app; only
//    the app's image changes;
// each as an in-place image rollout of N pods by a CloneSet (InPlaceIfPossible, maxUnavailable 1)
// against a Deployment's rolling recreate of the same pods (maxUnavailable 1, maxSurge 0), printed
// as a ratio (goals: plain <= 2.0, realistic <= 0.3), with API writes per in-place-updated pod from
// the controller's rest_client_requests_total (goal <= 4 at 10 pods); then resize latency through
// the kubelet: from the CloneSet edit until every pod's container reports the new resources (goal
// <= 5 s for 3 pods).
// Needs `make cluster-up MODE=full`; it runs the controller in this process, in its own namespace.
// Owns: that namespace, deleted at the end. Must not: start or stop the cluster.
import * as k8s from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { setupCloneSetController } from '../src/cloneset/setup.js';
import { KubeClient } from '../src/runtime/kube-client.js';
import type { Pod } from '../src/api/wire.js';
import { silentLogger } from '../src/runtime/logger.js';
import { Manager } from '../src/runtime/manager.js';
import { Timeline, describeShare, type TimelineShare } from './timeline.js';
import { BENCH_CLONESET_LABELS, sleep, until, verdict } from './kwok-common.js';

const N = Number(process.env.BENCH_PODS ?? 10);
const KUBECONFIG = process.env.TAILOR_KUBECONFIG ?? '.tailor/cluster/kubeconfig';
const ns = `bench-${Date.now().toString(36)}`;

type Kind = 'plain' | 'realistic';
interface RoundResult {
  recreateMs: number;
  inPlaceMs: number;
  writesPerPod: number;
  /** Of writesPerPod, the events (created or bumped); the rest are pod and CloneSet status writes. */
  eventsPerPod: number;
  share: TimelineShare;
}
const COMPONENT = 'tailor-bench';
const resizable = [
  { resourceName: 'cpu', restartPolicy: 'NotRequired' },
  { resourceName: 'memory', restartPolicy: 'NotRequired' },
];
const container = (image: string, cpu = '50m', memory = '32Mi'): Record<string, unknown> => ({
  name: 'web',
  image,
  imagePullPolicy: 'Never',
  // Exits on SIGTERM, as a well-behaved server does (busybox httpd as PID 1 would not).
  command: ['/bin/sh', '-c', 'trap "exit 0" TERM; /bin/httpd -f -p 8080 -h /etc & wait'],
  resources: { requests: { cpu, memory }, limits: { cpu, memory } },
  resizePolicy: resizable,
});
const podSpec = (kind: Kind, image: string, cpu?: string, memory?: string): Record<string, unknown> =>
  kind === 'plain'
    ? { terminationGracePeriodSeconds: 1, containers: [container(image, cpu, memory)] }
    : {
        terminationGracePeriodSeconds: 1,
        initContainers: [
          { name: 'init', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never', command: ['/bin/sleep', '2'] },
        ],
        containers: [
          {
            name: 'sidecar',
            image: 'tailor.local/busybox:v1',
            imagePullPolicy: 'Never',
            command: ['/bin/sh', '-c', 'trap "exit 0" TERM; sleep 3; touch /tmp/ready; while true; do sleep 1; done'],
            readinessProbe: { exec: { command: ['/bin/test', '-f', '/tmp/ready'] }, periodSeconds: 1 },
          },
          // The app serves on 8080 once started; its readiness is its port.
          { ...container(image, cpu, memory), readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } },
        ],
      };

const WAIT_MS = 600_000;

const pods = async (client: KubeClient, app: string): Promise<Pod[]> =>
  (await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: `app=${app}` })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
const allOn = (list: Pod[], image: string): boolean =>
  list.length === N &&
  list.every(
    (p) =>
      p.status?.containerStatuses?.find((c) => c.name === 'web')?.image?.endsWith(image) &&
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );

async function writes(manager: Manager): Promise<number> {
  const metric = await manager.metrics.restClientRequestsTotal.get();
  return metric.values
    .filter((v) => ['POST', 'PATCH', 'PUT', 'DELETE'].includes(String(v.labels.method)))
    .reduce((s, v) => s + v.value, 0);
}

/** A Deployment's recreate rollout, then a CloneSet's in-place one, of N pods of `kind`. */
async function round(client: KubeClient, manager: Manager, kind: Kind): Promise<RoundResult> {
  const deploy = `deploy-${kind}`;
  await client.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
    metadata: { name: deploy },
    spec: {
      replicas: N,
      selector: { matchLabels: { app: deploy } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      template: { metadata: { labels: { app: deploy } }, spec: podSpec(kind, 'tailor.local/busybox:v1') },
    },
  });
  await until(`${deploy} ready`, async () => allOn(await pods(client, deploy), 'busybox:v1'), WAIT_MS);
  let t0 = Date.now();
  await client.patch(
    `/apis/apps/v1/namespaces/${ns}/deployments/${deploy}`,
    { spec: { template: { spec: podSpec(kind, 'tailor.local/busybox:v2') } } },
    'strategic',
  );
  await until(`${deploy} rolled`, async () => allOn(await pods(client, deploy), 'busybox:v2'), WAIT_MS);
  const recreateMs = Date.now() - t0;
  await client.delete(`/apis/apps/v1/namespaces/${ns}/deployments/${deploy}`, { propagationPolicy: 'Foreground' });
  await until(`${deploy} pods gone`, async () => (await pods(client, deploy)).length === 0, WAIT_MS);

  const cs = `/apis/apps.tailor.dev/v1alpha1/namespaces/${ns}/clonesets`;
  await client.create(cs, {
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: kind, labels: BENCH_CLONESET_LABELS },
    spec: {
      replicas: N,
      selector: { matchLabels: { app: kind } },
      updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 },
      template: { metadata: { labels: { app: kind } }, spec: podSpec(kind, 'tailor.local/busybox:v1') },
    },
  });
  await until(`${kind} cloneset ready`, async () => allOn(await pods(client, kind), 'busybox:v1'), WAIT_MS);
  await sleep(1000);
  const writesBefore = await writes(manager);
  // The app container is "web" in both kinds (the realistic pod lists its sidecar first).
  const timeline = new Timeline('web', ':v2');
  let rolled = false;
  const watching = follow(client, kind, timeline, () => rolled);
  t0 = Date.now();
  await client.patch(
    `${cs}/${kind}`,
    { spec: { template: { spec: podSpec(kind, 'tailor.local/busybox:v2') } } },
    'merge',
  );
  await until(`${kind} cloneset rolled in place`, async () => allOn(await pods(client, kind), 'busybox:v2'), WAIT_MS);
  const inPlaceMs = Date.now() - t0;
  rolled = true;
  await watching;
  // Count-only status writes are spaced 5 s apart: wait for the last one before counting.
  await sleep(6000);
  const writesPerPod = ((await writes(manager)) - writesBefore) / N;
  const eventsPerPod = (await eventWrites(client, t0)) / N;
  // The realistic CloneSet goes; the plain one stays for the resize round.
  if (kind !== 'plain') {
    await client.delete(`${cs}/${kind}`);
    await until(`${kind} pods gone`, async () => (await pods(client, kind)).length === 0, WAIT_MS);
  }
  return { recreateMs, inPlaceMs, writesPerPod, eventsPerPod, share: timeline.share() };
}

/** The controller's event writes since `since`: each event's count is its create plus its bumps. */
async function eventWrites(client: KubeClient, since: number): Promise<number> {
  interface Event {
    source?: { component?: string };
    firstTimestamp?: string;
    count?: number;
  }
  const events = await client.list<Event>(`/api/v1/namespaces/${ns}/events`);
  return events.items
    .filter((e) => e.source?.component === COMPONENT && Date.parse(e.firstTimestamp ?? '') >= since - 1000)
    .reduce((sum, e) => sum + (e.count ?? 1), 0);
}

/** Polls the CloneSet's pods every 25 ms into `timeline` until `stopped()`. */
async function follow(client: KubeClient, app: string, timeline: Timeline, stopped: () => boolean): Promise<void> {
  while (!stopped()) {
    const now = Date.now();
    for (const p of await pods(client, app)) timeline.observe(p, now);
    await sleep(25);
  }
}

async function main(): Promise<void> {
  if (!existsSync(KUBECONFIG)) throw new Error(`no test bed at ${KUBECONFIG}: run 'make cluster-up MODE=full' first`);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG);
  const client = new KubeClient(kc);
  await client.create('/api/v1/namespaces', { metadata: { name: ns } });
  await until(
    'service account',
    async () => !!(await client.get(`/api/v1/namespaces/${ns}/serviceaccounts/default`)),
    WAIT_MS,
  );
  const manager = new Manager({ kubeConfig: kc, logger: silentLogger(), component: COMPONENT });
  setupCloneSetController(manager, { namespace: ns, workers: 4, logger: silentLogger() });
  const run = manager.run();
  try {
    const results: Record<Kind, RoundResult> = {
      plain: await round(client, manager, 'plain'),
      realistic: await round(client, manager, 'realistic'),
    };

    // Resize of 3 pods through the kubelet (the plain CloneSet, kept by round()).
    const cs = `/apis/apps.tailor.dev/v1alpha1/namespaces/${ns}/clonesets`;
    await client.patch(`${cs}/plain`, { spec: { replicas: 3 } }, 'merge');
    await until('3 pods', async () => (await pods(client, 'plain')).length === 3, WAIT_MS);
    const t0 = Date.now();
    await client.patch(
      `${cs}/plain`,
      { spec: { template: { spec: podSpec('plain', 'tailor.local/busybox:v2', '100m', '64Mi') } } },
      'merge',
    );
    await until(
      'resized',
      async () =>
        (await pods(client, 'plain')).every(
          (p) => p.status?.containerStatuses?.[0]?.resources?.limits?.['memory'] === '64Mi',
        ),
      WAIT_MS,
    );
    const resizeMs = Date.now() - t0;

    for (const [kind, goal] of [
      ['plain', 2.0],
      ['realistic', 0.3],
    ] as const) {
      const r = results[kind];
      const ratio = r.inPlaceMs / r.recreateMs;
      console.log(
        `${kind} pods, rollout of ${N}: in place ${(r.inPlaceMs / 1000).toFixed(1)} s, Deployment recreate ${(r.recreateMs / 1000).toFixed(1)} s`,
      );
      console.log(`  in-place/recreate ratio: ${ratio.toFixed(2)} (goal <= ${goal}: ${verdict(ratio <= goal)})`);
      console.log(
        `  API writes per in-place-updated pod (controller's rest_client_requests_total): ${r.writesPerPod.toFixed(2)} (goal <= 4: ${verdict(r.writesPerPod <= 4)})`,
      );
      console.log(
        `    of which events ${r.eventsPerPod.toFixed(2)}; pod writes (3 per pod by design) and CloneSet status ${(r.writesPerPod - r.eventsPerPod).toFixed(2)}`,
      );
      const s = r.share;
      const tailorMs = s.drainToPatch.median + s.runningToGate.median;
      console.log(`  per-pod timeline (medians, 25 ms polling): ${describeShare(s)}`);
      console.log(
        `  Tailor's share (drain→patch + running→gate): ${tailorMs} ms (goal <= 50 ms: ${verdict(tailorMs <= 50)})`,
      );
    }
    console.log(
      `resize of 3 pods through the kubelet, edit to actuated: ${(resizeMs / 1000).toFixed(2)} s (goal <= 5 s: ${verdict(resizeMs <= 5000)})`,
    );
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
