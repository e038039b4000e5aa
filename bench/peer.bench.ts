// Peer benchmark on simulated nodes (issue 16): Tailor against OpenKruise's kruise-manager, the Go
// controller Tailor's CloneSet follows, on the same test bed (the test bed's API server, kwok's
// nodes and Stages, the same pod template), from one run. For each size (1,000 and 200 pods):
// a CloneSet created and every pod Ready (not timed against a goal), then an in-place image
// rollout at maxUnavailable 10% (InPlaceIfPossible, maxSurge 0): time until every pod runs the new
// image with its in-place readiness gate True and is Ready, API writes per pod, and the
// controller's peak RSS during the rollout. Goals (issue 16): at 1,000 pods Tailor <= 20 s,
// <= 3.5 writes per pod, <= 120 MiB and below the peer; at 200 pods faster and smaller than the peer.
//
// A file of its own rather than rows in scale.bench.ts: the scale bench's later phases (resize,
// 10,000 pods cached) are Tailor's alone, and BENCH=peer runs just this comparison; a peer that
// cannot be built or started prints "unavailable" here without touching the scale figures.
//
// Both controllers run as processes scoped to a namespace of their own per run (one run at a time,
// each started fresh, so caches and RSS hold only that run's pods); RSS from /proc (VmHWM, reset
// through clear_refs when the rollout starts), writes from each process's own
// rest_client_requests_total (POST/PUT/PATCH/DELETE, events included; both are client-go-style
// counters of requests sent). kruise-manager (hack/build-kruise.sh, decision 31) runs with leader
// election off, client QPS 5000 / burst 10000, feature gates PodWebhook=false and KruiseDaemon=false
// (no admission webhook, no node daemon: the simulated kubelets report the new imageID, which is how
// kruise-manager sees an in-place update complete without its daemon). Its webhook controller still
// has to find its two webhook configurations and serve TLS before kruise-manager sets up its
// controllers, so this bench creates them with no webhooks in them (the API server calls nothing)
// and points kruise-manager's self-signed certificates at localhost.
// Owns: its namespaces, the two controller processes, and — only when it created them, or an
// earlier run stopped before its end left them (the webhook configurations are there, empty) —
// kruise's CRDs and the empty kruise-* webhook configurations, all removed at the end. Must not: start or stop the cluster or kwok; touch a kruise installation it did not create
// (it refuses to run the peer when one is present).
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { Informer } from '../src/runtime/informer.js';
import { KubeClient, isAlreadyExists, isNotFound } from '../src/runtime/kube-client.js';
import type { KubeObject, Pod } from '../src/api/wire.js';
import { silentLogger } from '../src/runtime/logger.js';
import {
  BENCH_CLONESET_LABELS,
  BenchProcess,
  condition,
  controllerNodeFlags,
  createNamespace,
  deleteNamespace,
  image,
  kwokNodes,
  live,
  MemorySampler,
  describeMemory,
  metricsText,
  type MemoryPeaks,
  ready,
  seconds,
  sleep,
  startTailor,
  template,
  until,
  usage,
  verdict,
  writes,
} from './kwok-common.js';

const SIZES = (process.env.BENCH_PEER_SIZES ?? '1000 200').split(/\s+/).filter(Boolean).map(Number);
const KUBECONFIG = resolve(process.env.TAILOR_KUBECONFIG ?? '.tailor/cluster/kubeconfig');
const CONTROLLER = process.env.TAILOR_CONTROLLER_JS ?? 'dist/cli/main.js';
const KRUISE_VERSION = /^KRUISE_VERSION=(\S+)/m.exec(readFileSync('hack/versions.sh', 'utf8'))?.[1] ?? 'unknown';
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
const KRUISE_QPS = 5000;
const KRUISE_BURST = 10000;
const PORTS = {
  tailorMetrics: 18484,
  tailorHealth: 18485,
  kruiseMetrics: 18490,
  kruiseHealth: 18491,
  kruiseWebhook: 18492,
};
const RUN = `bench-peer-${Date.now().toString(36)}`;
const APP = 'peer';
const LOGS = resolve('.tailor/bench');
// Simulated kubelet timings, from hack/kwok/stages-pod.yaml: a container restart takes 1.0–1.5 s.
const KWOK_RESTART_S = [1.0, 1.5] as const;

const GOAL = { rolloutS: 20, writesPerPod: 3.5, peakRssMiB: 120 };

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

// ---------------------------------------------------------------- the two sides

interface Side {
  name: string;
  /** The CloneSet collection in a namespace. */
  collection(ns: string): string;
  cloneSet(replicas: number): Record<string, unknown>;
  /** The readiness gate the controller flips around an in-place update. */
  gate: string;
  metricsPort: number;
  healthPort: number;
  start(ns: string, logFile: string): BenchProcess;
}

const tailor: Side = {
  name: 'Tailor',
  collection: (ns) => `/apis/apps.tailor.dev/v1alpha1/namespaces/${ns}/clonesets`,
  cloneSet: (replicas) => ({
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: APP, labels: BENCH_CLONESET_LABELS },
    spec: {
      replicas,
      selector: { matchLabels: { app: APP } },
      updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '10%' },
      template: template(APP, 'v1', '10m', '16Mi'),
    },
  }),
  gate: 'apps.tailor.dev/InPlaceUpdateReady',
  metricsPort: PORTS.tailorMetrics,
  healthPort: PORTS.tailorHealth,
  start: (ns, logFile) =>
    startTailor({
      controllerJs: CONTROLLER,
      kubeconfig: KUBECONFIG,
      namespace: ns,
      metricsPort: PORTS.tailorMetrics,
      healthPort: PORTS.tailorHealth,
      logFile,
    }),
};

const kruise: Side = {
  name: 'kruise-manager',
  collection: (ns) => `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/clonesets`,
  // Every field kruise's defaulting webhook would fill in is set here, since no webhook runs.
  cloneSet: (replicas) => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: APP },
    spec: {
      replicas,
      revisionHistoryLimit: 10,
      selector: { matchLabels: { app: APP } },
      updateStrategy: {
        type: 'InPlaceIfPossible',
        partition: 0,
        maxUnavailable: '10%',
        maxSurge: 0,
        inPlaceUpdateStrategy: { gracePeriodSeconds: 0 },
      },
      template: template(APP, 'v1', '10m', '16Mi'),
    },
  }),
  gate: 'InPlaceUpdateReady',
  metricsPort: PORTS.kruiseMetrics,
  healthPort: PORTS.kruiseHealth,
  start: (ns, logFile) => {
    const certs = `${LOGS}/${ns}-certs`;
    mkdirSync(certs, { recursive: true });
    return BenchProcess.start(
      KRUISE,
      [
        '--enable-leader-election=false',
        // No --namespace: its CloneSet controller fails on the multi-namespace cache that flag
        // builds ("informer *cache.multiNamespaceInformer ... is not a SharedIndexInformer").
        `--metrics-addr=127.0.0.1:${PORTS.kruiseMetrics}`,
        `--health-probe-addr=127.0.0.1:${PORTS.kruiseHealth}`,
        '--enable-pprof=false',
        `--rest-config-qps=${KRUISE_QPS}`,
        `--rest-config-burst=${KRUISE_BURST}`,
        '--feature-gates=PodWebhook=false,KruiseDaemon=false',
        `--protection-log-path=${LOGS}/${ns}-protection`,
      ],
      logFile,
      {
        ...process.env,
        KUBECONFIG,
        // Its webhook controller keeps its secret watch and the (empty) configurations here.
        POD_NAMESPACE: ns,
        // Self-signed certificates for localhost, written to files: kruise-manager's readiness
        // check calls its own webhook server at https://localhost:<port>/healthz with them.
        WEBHOOK_HOST: 'localhost',
        WEBHOOK_PORT: String(PORTS.kruiseWebhook),
        WEBHOOK_CERT_DIR: certs,
        WEBHOOK_CERT_WRITER: 'fs',
      },
    );
  },
};

// ---------------------------------------------------------------- one run: create, then roll out

interface RunResult {
  createMs: number;
  rolloutMs: number;
  writesPerPod: number;
  peakRssMiB: number;
  createPeakRssMiB: number;
  memory: MemoryPeaks;
}

async function runSide(client: KubeClient, side: Side, pods: number): Promise<RunResult> {
  const ns = `${RUN}-${side.name === 'Tailor' ? 'tailor' : 'kruise'}-${pods}`;
  const logFile = `${LOGS}/${ns}.log`;
  const path = side.collection(ns);
  await createNamespace(client, ns);
  const watched = new Informer<Pod>({
    name: `${ns}-pods`,
    client,
    path: `/api/v1/namespaces/${ns}/pods`,
    labelSelector: `app=${APP}`,
    logger: silentLogger(),
  });
  let proc: BenchProcess | undefined;
  try {
    watched.start();
    await watched.waitForSync();
    proc = side.start(ns, logFile);
    const running = proc;
    const alive = (): void => {
      // Thrown synchronously, so `until` stops at once instead of waiting out its deadline.
      if (running.exited)
        throw new Error(
          `${side.name} exited (code ${running.child.exitCode ?? running.child.signalCode}); see ${logFile}`,
        );
    };
    await until(
      `${side.name} /readyz`,
      () => {
        alive();
        return fetch(`http://127.0.0.1:${side.healthPort}/readyz`).then((r) => r.ok);
      },
      120_000,
      250,
    );

    const settled = (rolled: (p: Pod) => boolean) => (): boolean => {
      alive();
      const list = live(watched.list());
      return list.length === pods && list.every(rolled);
    };
    const t0 = Date.now();
    await client.create(path, side.cloneSet(pods));
    await until(
      `${pods} ${side.name} pods Ready`,
      settled((p) => condition(p, side.gate) === 'True' && ready(p)),
      600_000,
    );
    const createMs = Date.now() - t0;
    const createPeak = usage(running.pid).hwmKiB;

    await sleep(1000); // let the creation's trailing status writes settle
    const before = writes(await metricsText(side.metricsPort));
    const sampler = new MemorySampler(running.pid, side.metricsPort);
    sampler.start();
    const t1 = Date.now();
    await client.patch(`${path}/${APP}`, { spec: { template: template(APP, 'v2', '10m', '16Mi') } }, 'merge');
    const rolled = (p: Pod): boolean =>
      p.spec?.containers?.[0]?.image === image('v2') &&
      p.status?.containerStatuses?.[0]?.image === image('v2') &&
      condition(p, side.gate) === 'True' &&
      ready(p);
    await until(`${side.name} image rollout`, settled(rolled), 600_000);
    const rolloutMs = Date.now() - t1;
    await sleep(1000); // writes that trail the last pod (final status) belong to the rollout
    const memory = await sampler.stop();
    const after = writes(await metricsText(side.metricsPort));
    return {
      createMs,
      rolloutMs,
      writesPerPod: (after - before) / pods,
      peakRssMiB: usage(running.pid).hwmKiB / 1024,
      createPeakRssMiB: createPeak / 1024,
      memory,
    };
  } finally {
    await proc?.stop();
    await watched.stop().catch(() => undefined);
    await deleteNamespace(client, ns, [path]);
  }
}

// ---------------------------------------------------------------- kruise-manager's cluster objects

/** What this bench created for kruise-manager (or an earlier run left) and must remove again. */
const created: { path: string; name: string }[] = [];
let leftoverOfBench = false;

/** Installs the CloneSet CRD and the empty webhook configurations kruise-manager waits for; returns why not, or undefined. */
async function preparePeer(client: KubeClient): Promise<string | undefined> {
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
      created.push({ path: c.path, name: c.name });
    } else {
      await client.create(c.path, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: c.kind,
        metadata: { name: c.name },
        webhooks: [],
      });
      created.push({ path: c.path, name: c.name });
    }
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

async function removePeerObjects(client: KubeClient): Promise<void> {
  for (const o of created.reverse()) await client.delete(`${o.path}/${o.name}`).catch(() => undefined);
}

// ---------------------------------------------------------------- report

const mib = (r: RunResult): string => `${r.peakRssMiB.toFixed(0)} MiB`;
type Peer = RunResult | { unavailable: string };
const peerOf = (p: Peer): RunResult | undefined => ('unavailable' in p ? undefined : p);

function report(pods: number, nodes: number, t: RunResult, p: Peer): void {
  const k = peerOf(p);
  const peerCol = (f: (r: RunResult) => string): string => (k ? f(k) : 'unavailable');
  const vsPeer = (ok: (k: RunResult) => boolean, what: string): string =>
    k ? `${what}: ${verdict(ok(k))}` : `${what}: no peer figure`;
  const waves = Math.ceil(pods / Math.max(1, Math.floor(pods * 0.1)));
  console.log(
    `${pods} pods on ${nodes} simulated nodes, in-place image rollout at maxUnavailable 10% (Tailor | kruise-manager v${KRUISE_VERSION})`,
  );
  console.log(`  created, every pod Ready:   ${seconds(t.createMs)} s | ${peerCol((r) => `${seconds(r.createMs)} s`)}`);
  const time = `  rollout time:               ${seconds(t.rolloutMs)} s | ${peerCol((r) => `${seconds(r.rolloutMs)} s`)}`;
  const writesLine = `  API writes per pod:         ${t.writesPerPod.toFixed(2)} | ${peerCol((r) => r.writesPerPod.toFixed(2))}`;
  const rss = `  peak RSS during the rollout: ${mib(t)} | ${peerCol(mib)}`;
  if (pods >= 1000) {
    console.log(`${time} (goal Tailor <= ${GOAL.rolloutS} s: ${verdict(t.rolloutMs <= GOAL.rolloutS * 1000)})`);
    console.log(`${writesLine} (goal Tailor <= ${GOAL.writesPerPod}: ${verdict(t.writesPerPod <= GOAL.writesPerPod)})`);
    console.log(
      `${rss} (goal Tailor <= ${GOAL.peakRssMiB} MiB: ${verdict(t.peakRssMiB <= GOAL.peakRssMiB)}; ${vsPeer((r) => t.peakRssMiB < r.peakRssMiB, 'below the peer')})`,
    );
  } else {
    console.log(`${time} (${vsPeer((r) => t.rolloutMs < r.rolloutMs, 'goal Tailor faster than the peer')})`);
    console.log(writesLine);
    console.log(`${rss} (${vsPeer((r) => t.peakRssMiB < r.peakRssMiB, 'goal Tailor smaller than the peer')})`);
  }
  console.log(`  Tailor's memory in the rollout:         ${describeMemory(t.memory, true)}`);
  if (k) console.log(`  kruise-manager's memory in the rollout: ${describeMemory(k.memory, true)}`);
  if (k)
    console.log(
      '  (RSS and VmHWM: /proc of each process alone, the same measure; heap: V8 used/total vs Go heap_alloc/heap_sys)',
    );
  console.log(
    `  peak RSS while creating:    ${t.createPeakRssMiB.toFixed(0)} MiB | ${peerCol((r) => `${r.createPeakRssMiB.toFixed(0)} MiB`)}`,
  );
  console.log(
    `  simulated kubelets' floor: ${waves} waves x ${KWOK_RESTART_S[0]}–${KWOK_RESTART_S[1]} s restart = ${(waves * KWOK_RESTART_S[0]).toFixed(0)}–${(waves * KWOK_RESTART_S[1]).toFixed(0)} s`,
  );
  if (!k) console.log(`  peer column unavailable: ${'unavailable' in p ? p.unavailable : ''}`);
}

async function main(): Promise<void> {
  if (!existsSync(KUBECONFIG)) throw new Error(`no test bed at ${KUBECONFIG}: run 'make cluster-up' first`);
  if (!existsSync(CONTROLLER)) throw new Error(`no ${CONTROLLER}: run 'npx tsc -p tsconfig.build.json' first`);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG);
  const client = new KubeClient(kc);
  mkdirSync(LOGS, { recursive: true });
  try {
    const nodes = (await kwokNodes(client)).length;
    let peerDown = await preparePeer(client).catch(
      (err: unknown) => `could not prepare the cluster for it: ${String(err)}`,
    );
    console.log(
      `peer: kruise-manager v${KRUISE_VERSION} (client QPS ${KRUISE_QPS}, burst ${KRUISE_BURST}) ${peerDown ? `unavailable: ${peerDown}` : 'ready'}; Tailor's node flags "${controllerNodeFlags().join(' ')}"; logs in ${LOGS}/${RUN}-*.log`,
    );
    for (const pods of SIZES) {
      const t = await runSide(client, tailor, pods);
      let p: Peer = { unavailable: peerDown ?? '' };
      if (!peerDown) {
        // A peer that fails leaves its column unavailable; Tailor's figures still print.
        p = await runSide(client, kruise, pods).catch((err: unknown) => ({
          unavailable: err instanceof Error ? err.message : String(err),
        }));
        if ('unavailable' in p) peerDown = p.unavailable;
      }
      report(pods, nodes, t, p);
    }
  } finally {
    await removePeerObjects(client);
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error('peer bench failed:', err);
  process.exitCode = 1;
});
