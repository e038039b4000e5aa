// The two controllers the benchmarks on simulated nodes compare (peer, fleet): Tailor and
// OpenKruise's kruise-manager (decision 31), each as a process started fresh for a run, with the
// CloneSet manifest each one reads, the readiness gate it flips around an in-place update, and —
// for kruise-manager — the cluster objects it needs before it will start (its CRDs and two empty
// webhook configurations), installed once and removed again.
// Owns: the processes it starts (the caller stops them) and the kruise objects it created (or an
// earlier stopped run left), removed by removePeerObjects. Must not: start or stop the cluster or
// kwok; touch a kruise installation it did not create (preparePeer refuses when one is present).
import yaml from 'js-yaml';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { isAlreadyExists, isNotFound, type KubeClient } from '../src/runtime/kube-client.js';
import type { KubeObject, Pod } from '../src/api/wire.js';
import { BENCH_CLONESET_LABELS, BenchProcess, pool, startTailor, template, until } from './kwok-common.js';

export const KUBECONFIG = resolve(process.env.TAILOR_KUBECONFIG ?? '.tailor/cluster/kubeconfig');
export const CONTROLLER = process.env.TAILOR_CONTROLLER_JS ?? 'dist/cli/main.js';
export const LOGS = resolve('.tailor/bench');
export const KRUISE_VERSION = /^KRUISE_VERSION=(\S+)/m.exec(readFileSync('hack/versions.sh', 'utf8'))?.[1] ?? 'unknown';
const KRUISE_ROOT = resolve(process.env.TAILOR_CACHE ?? `${homedir()}/.cache/tailor`, 'kruise', `v${KRUISE_VERSION}`);
const KRUISE = process.env.TAILOR_KRUISE_MANAGER ?? `${KRUISE_ROOT}/bin/kruise-manager`;
// Every CRD of the module: kruise-manager indexes ImagePullJob at start whatever runs, and a
// controller whose CRD is missing spends ~15 s in discovery retries, or (a missing group version,
// apps.kruise.io/v1beta1) stops the start. Controllers of kinds nobody creates have nothing to do.
const KRUISE_CRD_DIR = `${KRUISE_ROOT}/crds`;
const kruiseCrds = (): { file: string; name: string }[] =>
  readdirSync(KRUISE_CRD_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => ({
      file: `${KRUISE_CRD_DIR}/${f}`,
      name: f.replace(/\.yaml$/, '').replace(/^([^_]+)_(.+)$/, '$2.$1'),
    }));

/** The client rate kruise-manager runs with when "raised": the same QPS/burst the kwok scheduler gets. */
export const KRUISE_RAISED = { qps: 5000, burst: 10000 } as const;

/** How a controller process is started for one run. */
export interface StartOptions {
  /** Names the ports' slot: two processes of one side may run at once (leader and standby). */
  slot: 0 | 1;
  namespace: string;
  logFile: string;
  /** Leader election on a Lease in `namespace` (both sides' own flags). */
  leaderElect?: boolean;
  /** kruise-manager only: its client QPS and burst; unset, its own defaults. */
  rate?: { qps: number; burst: number };
}

export interface CloneSetShape {
  name: string;
  replicas: number;
  tag: string;
  paused?: boolean;
}

export interface Side {
  name: string;
  /** The CloneSet collection in a namespace. */
  collection(ns: string): string;
  cloneSet(shape: CloneSetShape): Record<string, unknown>;
  /** The stateful kind's collection (InPlaceStatefulSet, Advanced StatefulSet) in a namespace. */
  statefulCollection(ns: string): string;
  /** The same shape as a stateful set: Parallel, in place at maxUnavailable 10%, no claims (kwok binds none). */
  statefulSet(shape: CloneSetShape): Record<string, unknown>;
  /** The readiness gate the controller flips around an in-place update. */
  gate: string;
  metricsPort(slot: 0 | 1): number;
  healthPort(slot: 0 | 1): number;
  start(o: StartOptions): BenchProcess;
}

const port = (base: number, slot: 0 | 1, offset: number): number => base + slot * 10 + offset;

export const tailor: Side = {
  name: 'Tailor',
  collection: (ns) => `/apis/apps.tailor.dev/v1alpha1/namespaces/${ns}/clonesets`,
  cloneSet: ({ name, replicas, tag, paused }) => ({
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'CloneSet',
    metadata: { name, labels: BENCH_CLONESET_LABELS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '10%', ...(paused ? { paused } : {}) },
      template: template(name, tag, '10m', '16Mi'),
    },
  }),
  statefulCollection: (ns) => `/apis/apps.tailor.dev/v1alpha1/namespaces/${ns}/inplacestatefulsets`,
  statefulSet: ({ name, replicas, tag }) => ({
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'InPlaceStatefulSet',
    metadata: { name, labels: BENCH_CLONESET_LABELS },
    spec: {
      replicas,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: name } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } },
      template: template(name, tag, '10m', '16Mi'),
    },
  }),
  gate: 'apps.tailor.dev/InPlaceUpdateReady',
  metricsPort: (slot) => port(18484, slot, 0),
  healthPort: (slot) => port(18484, slot, 1),
  start: (o) =>
    startTailor({
      controllerJs: CONTROLLER,
      kubeconfig: KUBECONFIG,
      namespace: o.namespace,
      metricsPort: tailor.metricsPort(o.slot),
      healthPort: tailor.healthPort(o.slot),
      logFile: o.logFile,
      ...(o.leaderElect ? { leaderElectionNamespace: o.namespace } : {}),
    }),
};

export const kruise: Side = {
  name: 'kruise-manager',
  collection: (ns) => `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/clonesets`,
  // Every field kruise's defaulting webhook would fill in is set here, since no webhook runs.
  cloneSet: ({ name, replicas, tag, paused }) => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name },
    spec: {
      replicas,
      revisionHistoryLimit: 10,
      selector: { matchLabels: { app: name } },
      updateStrategy: {
        type: 'InPlaceIfPossible',
        partition: 0,
        maxUnavailable: '10%',
        maxSurge: 0,
        paused: paused ?? false,
        inPlaceUpdateStrategy: { gracePeriodSeconds: 0 },
      },
      template: template(name, tag, '10m', '16Mi'),
    },
  }),
  statefulCollection: (ns) => `/apis/apps.kruise.io/v1beta1/namespaces/${ns}/statefulsets`,
  // Advanced StatefulSet: maxUnavailable works under Parallel only; its webhook's defaults set here.
  statefulSet: ({ name, replicas, tag }) => ({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas,
      revisionHistoryLimit: 10,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: name } },
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          podUpdatePolicy: 'InPlaceIfPossible',
          partition: 0,
          maxUnavailable: '10%',
          inPlaceUpdateStrategy: { gracePeriodSeconds: 0 },
        },
      },
      template: withGate(template(name, tag, '10m', '16Mi'), 'InPlaceUpdateReady'),
    },
  }),
  gate: 'InPlaceUpdateReady',
  metricsPort: (slot) => port(18500, slot, 0),
  healthPort: (slot) => port(18500, slot, 1),
  start: (o) => {
    const certs = `${LOGS}/${o.namespace}-${o.slot}-certs`;
    mkdirSync(certs, { recursive: true });
    const webhookPort = port(18500, o.slot, 2);
    return BenchProcess.start(
      KRUISE,
      [
        `--enable-leader-election=${o.leaderElect === true}`,
        ...(o.leaderElect ? [`--leader-election-namespace=${o.namespace}`] : []),
        // No --namespace: its CloneSet controller fails on the multi-namespace cache that flag
        // builds ("informer *cache.multiNamespaceInformer ... is not a SharedIndexInformer").
        `--metrics-addr=127.0.0.1:${kruise.metricsPort(o.slot)}`,
        `--health-probe-addr=127.0.0.1:${kruise.healthPort(o.slot)}`,
        '--enable-pprof=false',
        ...(o.rate ? [`--rest-config-qps=${o.rate.qps}`, `--rest-config-burst=${o.rate.burst}`] : []),
        '--feature-gates=PodWebhook=false,KruiseDaemon=false',
        `--protection-log-path=${LOGS}/${o.namespace}-${o.slot}-protection`,
      ],
      o.logFile,
      {
        ...process.env,
        KUBECONFIG,
        // Its webhook controller keeps its secret watch and the (empty) configurations here.
        POD_NAMESPACE: o.namespace,
        // Self-signed certificates for localhost, written to files: kruise-manager's readiness
        // check calls its own webhook server at https://localhost:<port>/healthz with them.
        WEBHOOK_HOST: 'localhost',
        WEBHOOK_PORT: String(webhookPort),
        WEBHOOK_CERT_DIR: certs,
        WEBHOOK_CERT_WRITER: 'fs',
      },
    );
  },
};

/** The template with a readiness gate (Advanced StatefulSet's in-place update needs it in the template). */
function withGate(t: Record<string, unknown>, conditionType: string): Record<string, unknown> {
  const spec = t['spec'] as Record<string, unknown>;
  return { ...t, spec: { ...spec, readinessGates: [{ conditionType }] } };
}

/** Waits until a started controller answers /readyz; throws at once if its process exits. */
export async function whenReady(side: Side, proc: BenchProcess, slot: 0 | 1, logFile: string): Promise<void> {
  await until(
    `${side.name} /readyz`,
    () => {
      alive(side, proc, logFile);
      return fetch(`http://127.0.0.1:${side.healthPort(slot)}/readyz`).then((r) => r.ok);
    },
    180_000,
    250,
  );
}

/** Thrown synchronously, so `until` stops at once instead of waiting out its deadline. */
export function alive(side: Side, proc: BenchProcess, logFile: string): void {
  if (proc.exited)
    throw new Error(`${side.name} exited (code ${proc.child.exitCode ?? proc.child.signalCode}); see ${logFile}`);
}

// ---------------------------------------------------------------- pods only to be cached

/**
 * `count` pods shaped like `sample` (a pod the side's controller made), owned by paused CloneSets
 * `<prefix>-<i>` of `perSet` pods each (the last one the rest), bound round-robin to `nodes`,
 * without readiness gates (kwok makes them Ready in one write, as pods settled long ago). Waits
 * until kwok reports them all Running; returns how long creating them took. A controller has
 * nothing to do for them but cache them.
 */
export async function parkPods(
  client: KubeClient,
  at: { side: Side; ns: string; prefix: string },
  sample: Pod,
  fleet: { count: number; perSet: number; nodes: readonly string[] },
): Promise<number> {
  const { side, ns, prefix } = at;
  const { count, perSet, nodes } = fleet;
  const sets = Math.ceil(count / perSet);
  const t0 = Date.now();
  const owners: { name: string; uid: string }[] = new Array(sets);
  await pool(
    Array.from({ length: sets }, (_, i) => i),
    32,
    async (i) => {
      const name = `${prefix}-${i}`;
      const replicas = Math.min(perSet, count - i * perSet);
      const cs = await client.create<KubeObject>(
        side.collection(ns),
        side.cloneSet({ name, replicas, tag: 'v1', paused: true }),
      );
      owners[i] = { name, uid: cs.metadata?.uid ?? '' };
    },
  );
  const ownerRef = sample.metadata?.ownerReferences?.[0];
  if (!ownerRef) throw new Error(`the sample pod ${sample.metadata?.name} has no owner`);
  await pool(
    Array.from({ length: count }, (_, i) => i),
    64,
    async (i) => {
      const owner = owners[Math.floor(i / perSet)];
      if (!owner) return;
      const name = `${owner.name}-${(i % perSet).toString(36)}`;
      const labels: Record<string, string> = { ...(sample.metadata?.labels ?? {}), app: owner.name };
      for (const k of Object.keys(labels)) if (k.endsWith('instance-id')) labels[k] = name;
      await client.create(`/api/v1/namespaces/${ns}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          labels,
          annotations: sample.metadata?.annotations ?? {},
          ownerReferences: [{ ...ownerRef, name: owner.name, uid: owner.uid }],
        },
        spec: { ...(sample.spec ?? { containers: [] }), readinessGates: undefined, nodeName: nodes[i % nodes.length] },
      });
    },
  );
  const createdMs = Date.now() - t0;
  await until(
    `${count} parked pods Running`,
    async () =>
      (await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`, { fieldSelector: 'status.phase!=Running', limit: 1 }))
        .items.length === 0,
    900_000,
    2000,
  );
  return createdMs;
}

// ---------------------------------------------------------------- kruise-manager's cluster objects

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const WEBHOOK_CONFIGS = [
  {
    path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    kind: 'MutatingWebhookConfiguration',
    name: 'kruise-mutating-webhook-configuration',
  },
  {
    path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    name: 'kruise-validating-webhook-configuration',
  },
] as const;

/** What this process created for kruise-manager (or an earlier run left) and must remove again. */
const created: { path: string; name: string }[] = [];
let leftoverOfBench = false;

/** Installs kruise's CRDs and the empty webhook configurations kruise-manager waits for; returns why not, or undefined. */
export async function preparePeer(client: KubeClient): Promise<string | undefined> {
  if (!existsSync(KRUISE))
    return `no kruise-manager at ${KRUISE} (hack/build-kruise.sh builds it; see .tailor/bench/build-kruise.log)`;
  const crds = existsSync(KRUISE_CRD_DIR) ? kruiseCrds() : [];
  if (!crds.some((c) => c.name === 'clonesets.apps.kruise.io'))
    return `no CloneSet CRD in ${KRUISE_CRD_DIR} (hack/build-kruise.sh keeps it)`;
  for (const c of WEBHOOK_CONFIGS) {
    const existing = await client.get<{ webhooks?: unknown[] }>(`${c.path}/${c.name}`).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    // One with webhooks in it belongs to a real kruise installation: leave that cluster alone.
    if (existing && (existing.webhooks?.length ?? 0) > 0)
      return `${c.kind} ${c.name} has webhooks: a kruise installation is present`;
    // One without is what an earlier bench, stopped before its end, left behind: so are the CRDs
    // beside it, and this run removes them all (left, they answer kubectl's short name `clone`).
    if (existing) {
      leftoverOfBench = true;
    } else {
      await client.create(c.path, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: c.kind,
        metadata: { name: c.name },
        webhooks: [],
      });
    }
    created.push({ path: c.path, name: c.name });
  }
  for (const c of crds) await installCrd(client, c.file, c.name);
  return undefined;
}

async function installCrd(client: KubeClient, file: string, name: string): Promise<void> {
  // js-yaml, not k8s.loadYaml: that one maps to typed models, whose field names (x_kubernetes_…)
  // are not the wire's, and the API server would read a different schema.
  const crd = yaml.load(readFileSync(file, 'utf8')) as KubeObject;
  try {
    await client.create(CRD_PATH, crd);
    created.push({ path: CRD_PATH, name });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    if (leftoverOfBench) created.push({ path: CRD_PATH, name });
  }
  await until(
    `CRD ${name} established`,
    async () => {
      const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
        `${CRD_PATH}/${name}`,
      );
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    },
    60_000,
    250,
  );
}

export async function removePeerObjects(client: KubeClient): Promise<void> {
  for (const o of created.reverse()) await client.delete(`${o.path}/${o.name}`).catch(() => undefined);
  created.length = 0;
}
