// Stateful benchmark on the full test bed (issue 43, item 2), all figures from one run: a
// 3-replica set with a claim per pod (the bed's default class, local-path: node-local volumes, as
// databases run), as a native apps/v1 StatefulSet and as Tailor's InPlaceStatefulSet from the same
// manifest, through an image update and then a cpu/memory resize. For each: the time from the
// edit until every pod runs the change and is Ready, the pods that kept their UID, and the volume
// mounts and unmounts the kubelets made (their storage_operation_duration_seconds_count for the
// claims' plugin, through the API server's node proxy). Printed side by side, with the ratio.
// Needs `make cluster-up MODE=full`; it runs the InPlaceStatefulSet controller in this process, in
// its own namespace. Owns: that namespace, deleted at the end (and the CRD, if it installed it: it
// stays, as the test tiers share it). Must not: start or stop the cluster.
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { existsSync, readFileSync } from 'node:fs';
import { setupInPlaceStatefulSetController } from '../src/inplacestatefulset/setup.js';
import { isAlreadyExists, KubeClient } from '../src/runtime/kube-client.js';
import type { KubeObject, Pod } from '../src/api/wire.js';
import { silentLogger } from '../src/runtime/logger.js';
import { Manager } from '../src/runtime/manager.js';
import { BENCH_CLONESET_LABELS, live, ready, seconds, sleep, until } from './kwok-common.js';

const N = 3;
const KUBECONFIG = process.env.TAILOR_KUBECONFIG ?? '.tailor/cluster/kubeconfig';
const ns = `bench-sts-${Date.now().toString(36)}`;
const WAIT_MS = 600_000;
const CRD = 'inplacestatefulsets.apps.tailor.dev';
/** The kubelet's volume plugins of what the bed's claims bind to (local-path makes hostPath or local volumes). */
const CLAIM_PLUGINS = /host-path|local-volume|csi/;

type Side = 'native' | 'tailor';
interface Step {
  ms: number;
  keptUids: number;
  mounts: number;
  unmounts: number;
}

const container = (image: string, cpu: string, memory: string): Record<string, unknown> => ({
  name: 'db',
  image,
  imagePullPolicy: 'Never',
  // Exits on SIGTERM, as a well-behaved server does; Ready once it has read its data.
  command: [
    '/bin/sh',
    '-c',
    'trap "exit 0" TERM; cat /data/state >/dev/null 2>&1; touch /tmp/ready; sleep 100000 & wait',
  ],
  readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1, failureThreshold: 1 },
  resources: { requests: { cpu, memory }, limits: { cpu, memory } },
  resizePolicy: [
    { resourceName: 'cpu', restartPolicy: 'NotRequired' },
    { resourceName: 'memory', restartPolicy: 'NotRequired' },
  ],
  volumeMounts: [{ name: 'data', mountPath: '/data' }],
});

/** The same StatefulSet manifest for both sides; only apiVersion and kind differ. */
function manifest(side: Side, image: string, cpu = '50m', memory = '32Mi'): Record<string, unknown> {
  return {
    apiVersion: side === 'native' ? 'apps/v1' : 'apps.tailor.dev/v1alpha1',
    kind: side === 'native' ? 'StatefulSet' : 'InPlaceStatefulSet',
    metadata: { name: side, labels: BENCH_CLONESET_LABELS },
    spec: {
      replicas: N,
      serviceName: side,
      podManagementPolicy: 'OrderedReady',
      selector: { matchLabels: { app: side } },
      template: {
        metadata: { labels: { app: side } },
        spec: { terminationGracePeriodSeconds: 1, containers: [container(image, cpu, memory)] },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
        },
      ],
    },
  };
}

const setsPath = (side: Side): string =>
  side === 'native'
    ? `/apis/apps/v1/namespaces/${ns}/statefulsets`
    : `/apis/apps.tailor.dev/v1alpha1/namespaces/${ns}/inplacestatefulsets`;

const podsOf = async (client: KubeClient, side: Side): Promise<Pod[]> =>
  live((await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: `app=${side}` })).items);

/** Every pod runs `image` with `memory` and is Ready. */
const allOn = (pods: Pod[], image: string, memory: string): boolean =>
  pods.length === N &&
  pods.every((p) => {
    const status = p.status?.containerStatuses?.[0];
    return status?.image?.endsWith(image) === true && status.resources?.limits?.['memory'] === memory && ready(p);
  });

async function getText(client: KubeClient, path: string): Promise<string> {
  const response = await client.request('GET', path);
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) chunks.push(Buffer.from(chunk as Uint8Array));
  if (response.statusCode >= 300) throw new Error(`GET ${path}: ${response.statusCode}`);
  return Buffer.concat(chunks).toString('utf8');
}

/** The kubelets' volume mounts and unmounts of the claims' plugins so far, over every node. */
async function volumeOperations(client: KubeClient): Promise<{ mounts: number; unmounts: number }> {
  const nodes = (await client.list<KubeObject>('/api/v1/nodes')).items.map((n) => n.metadata?.name ?? '');
  let mounts = 0;
  let unmounts = 0;
  for (const node of nodes) {
    const text = await getText(client, `/api/v1/nodes/${node}/proxy/metrics`);
    for (const line of text.split('\n')) {
      const m = /^storage_operation_duration_seconds_count\{(.*)\} (\d+)/.exec(line);
      if (!m || !CLAIM_PLUGINS.test(/volume_plugin="([^"]*)"/.exec(m[1]!)?.[1] ?? '')) continue;
      const operation = /operation_name="([^"]*)"/.exec(m[1]!)?.[1];
      if (operation === 'volume_mount') mounts += Number(m[2]);
      if (operation === 'volume_unmount') unmounts += Number(m[2]);
    }
  }
  return { mounts, unmounts };
}

/** Changes the side's container to `to` and times it until every pod runs `image` with `memory` and is Ready. */
async function step(client: KubeClient, side: Side, to: { image: string; cpu: string; memory: string }): Promise<Step> {
  const { image, cpu, memory } = to;
  const before = await podsOf(client, side);
  const ops = await volumeOperations(client);
  const t0 = Date.now();
  await client.patch(
    `${setsPath(side)}/${side}`,
    { spec: { template: { spec: { containers: [container(image, cpu, memory)] } } } },
    'merge',
  );
  await until(`${side} on ${image} ${memory}`, async () => allOn(await podsOf(client, side), image, memory), WAIT_MS);
  const ms = Date.now() - t0;
  // The kubelets' metrics lag their operations by a sync; the last unmount follows the last pod.
  await sleep(3000);
  const after = await podsOf(client, side);
  const uids = new Set(before.map((p) => p.metadata?.uid));
  const opsAfter = await volumeOperations(client);
  return {
    ms,
    keptUids: after.filter((p) => uids.has(p.metadata?.uid)).length,
    mounts: opsAfter.mounts - ops.mounts,
    unmounts: opsAfter.unmounts - ops.unmounts,
  };
}

async function run(client: KubeClient, side: Side): Promise<{ image: Step; resize: Step }> {
  await client.create(setsPath(side), manifest(side, 'tailor.local/busybox:v1'));
  await until(`${side} ready`, async () => allOn(await podsOf(client, side), 'busybox:v1', '32Mi'), WAIT_MS);
  await sleep(2000);
  const image = await step(client, side, { image: 'tailor.local/busybox:v2', cpu: '50m', memory: '32Mi' });
  const resize = await step(client, side, { image: 'tailor.local/busybox:v2', cpu: '100m', memory: '64Mi' });
  await client.delete(`${setsPath(side)}/${side}`);
  await until(`${side} pods gone`, async () => (await podsOf(client, side)).length === 0, WAIT_MS);
  return { image, resize };
}

async function ensureCrd(client: KubeClient): Promise<void> {
  const crd = yaml.load(readFileSync('crds/apps.tailor.dev_inplacestatefulsets.yaml', 'utf8')) as KubeObject;
  await client.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd).catch((err: unknown) => {
    if (!isAlreadyExists(err)) throw err;
  });
  await until(
    `CRD ${CRD} established`,
    async () => {
      const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`,
      );
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    },
    60_000,
  );
}

function print(what: string, native: Step, tailor: Step): void {
  console.log(
    `${what}, ${N} pods with a claim each: InPlaceStatefulSet ${seconds(tailor.ms)} s, StatefulSet ${seconds(native.ms)} s (ratio ${(tailor.ms / native.ms).toFixed(2)})`,
  );
  console.log(`  UIDs kept: InPlaceStatefulSet ${tailor.keptUids}/${N}, StatefulSet ${native.keptUids}/${N}`);
  console.log(
    `  volume mounts/unmounts by the kubelets: InPlaceStatefulSet ${tailor.mounts}/${tailor.unmounts}, StatefulSet ${native.mounts}/${native.unmounts}`,
  );
}

async function main(): Promise<void> {
  if (!existsSync(KUBECONFIG)) throw new Error(`no test bed at ${KUBECONFIG}: run 'make cluster-up MODE=full' first`);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG);
  const client = new KubeClient(kc);
  await ensureCrd(client);
  await client.create('/api/v1/namespaces', { metadata: { name: ns } });
  await until(
    'service account',
    async () => !!(await client.get(`/api/v1/namespaces/${ns}/serviceaccounts/default`).catch(() => undefined)),
    WAIT_MS,
  );
  const manager = new Manager({ kubeConfig: kc, logger: silentLogger(), component: 'tailor-bench' });
  setupInPlaceStatefulSetController(manager, { namespace: ns, workers: 4, logger: silentLogger() });
  const running = manager.run();
  try {
    const native = await run(client, 'native');
    const tailor = await run(client, 'tailor');
    print('image update', native.image, tailor.image);
    print('cpu/memory resize', native.resize, tailor.resize);
  } finally {
    await manager.stop();
    await running;
    await client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error('stateful bench failed:', err);
  process.exitCode = 1;
});
