// Peer benchmark on simulated nodes (issue 16): Tailor against OpenKruise's kruise-manager, the Go
// controller Tailor's CloneSet follows, on the same test bed (the test bed's API server, kwok's
// nodes and Stages, the same pod template), from one run. For each size (1,000 and 200 pods, and
// 1,000 for the stateful kinds: InPlaceStatefulSet beside Advanced StatefulSet, Parallel, no claims):
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
// controllers; bench/sides.ts creates them with no webhooks in them (the API server calls nothing)
// and points kruise-manager's self-signed certificates at localhost.
// Owns: its namespaces and the two controller processes; kruise's cluster objects are sides.ts's
// (removed at the end through removePeerObjects). Must not: start or stop the cluster or kwok.
import * as k8s from '@kubernetes/client-node';
import { existsSync, mkdirSync } from 'node:fs';
import { Informer } from '../src/runtime/informer.js';
import { errorMessage } from '../src/api/errors.js';
import { KubeClient } from '../src/runtime/kube-client.js';
import type { Pod } from '../src/api/wire.js';
import { silentLogger } from '../src/runtime/logger.js';
import {
  type BenchProcess,
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
  template,
  until,
  usage,
  verdict,
  writes,
} from './kwok-common.js';
import {
  alive,
  CONTROLLER,
  KRUISE_RAISED,
  KRUISE_VERSION,
  KUBECONFIG,
  kruise,
  LOGS,
  preparePeer,
  removePeerObjects,
  type Side,
  tailor,
  whenReady,
} from './sides.js';

const SIZES = (process.env.BENCH_PEER_SIZES ?? '1000 200').split(/\s+/).filter(Boolean).map(Number);
/** The stateful kinds' rollout (issue 43): InPlaceStatefulSet beside Advanced StatefulSet, at these sizes. */
const STATEFUL_SIZES = (process.env.BENCH_PEER_STATEFUL_SIZES ?? '1000').split(/\s+/).filter(Boolean).map(Number);
type Kind = 'CloneSet' | 'StatefulSet';
const RUN = `bench-peer-${Date.now().toString(36)}`;
const APP = 'peer';
// Simulated kubelet timings, from hack/kwok/stages-pod.yaml: a container restart takes 1.0–1.5 s.
const KWOK_RESTART_S = [1.0, 1.5] as const;

const GOAL = { rolloutS: 20, writesPerPod: 3.5, peakRssMiB: 120 };

// ---------------------------------------------------------------- one run: create, then roll out

interface RunResult {
  createMs: number;
  rolloutMs: number;
  writesPerPod: number;
  peakRssMiB: number;
  createPeakRssMiB: number;
  memory: MemoryPeaks;
}

async function runSide(client: KubeClient, side: Side, pods: number, kind: Kind = 'CloneSet'): Promise<RunResult> {
  const ns = `${RUN}-${side.name === 'Tailor' ? 'tailor' : 'kruise'}-${kind === 'CloneSet' ? '' : 'sts-'}${pods}`;
  const logFile = `${LOGS}/${ns}.log`;
  const path = kind === 'CloneSet' ? side.collection(ns) : side.statefulCollection(ns);
  const manifest = kind === 'CloneSet' ? side.cloneSet.bind(side) : side.statefulSet.bind(side);
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
    proc = side.start({ slot: 0, namespace: ns, logFile, ...(side === kruise ? { rate: KRUISE_RAISED } : {}) });
    const running = proc;
    await whenReady(side, running, 0, logFile);

    const settled = (rolled: (p: Pod) => boolean) => (): boolean => {
      alive(side, running, logFile);
      const list = live(watched.list());
      return list.length === pods && list.every(rolled);
    };
    const t0 = Date.now();
    await client.create(path, manifest({ name: APP, replicas: pods, tag: 'v1' }));
    await until(
      `${pods} ${side.name} pods Ready`,
      settled((p) => condition(p, side.gate) === 'True' && ready(p)),
      600_000,
    );
    const createMs = Date.now() - t0;
    const createPeak = usage(running.pid).hwmKiB;

    await sleep(1000); // let the creation's trailing status writes settle
    const before = writes(await metricsText(side.metricsPort(0)));
    const sampler = new MemorySampler(running.pid, side.metricsPort(0));
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
    const after = writes(await metricsText(side.metricsPort(0)));
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

// ---------------------------------------------------------------- report

const mib = (r: RunResult): string => `${r.peakRssMiB.toFixed(0)} MiB`;
type Peer = RunResult | { unavailable: string };
const peerOf = (p: Peer): RunResult | undefined => ('unavailable' in p ? undefined : p);

function report(shape: { kind: Kind; pods: number; nodes: number }, t: RunResult, p: Peer): void {
  const { kind, pods, nodes } = shape;
  const k = peerOf(p);
  const peerCol = (f: (r: RunResult) => string): string => (k ? f(k) : 'unavailable');
  const vsPeer = (ok: (k: RunResult) => boolean, what: string): string =>
    k ? `${what}: ${verdict(ok(k))}` : `${what}: no peer figure`;
  const waves = Math.ceil(pods / Math.max(1, Math.floor(pods * 0.1)));
  const kinds = kind === 'CloneSet' ? 'CloneSet' : 'InPlaceStatefulSet | Advanced StatefulSet';
  console.log(
    `${pods} pods on ${nodes} simulated nodes, ${kinds}, in-place image rollout at maxUnavailable 10% (Tailor | kruise-manager v${KRUISE_VERSION})`,
  );
  console.log(`  created, every pod Ready:   ${seconds(t.createMs)} s | ${peerCol((r) => `${seconds(r.createMs)} s`)}`);
  const time = `  rollout time:               ${seconds(t.rolloutMs)} s | ${peerCol((r) => `${seconds(r.rolloutMs)} s`)}`;
  const writesLine = `  API writes per pod:         ${t.writesPerPod.toFixed(2)} | ${peerCol((r) => r.writesPerPod.toFixed(2))}`;
  const rss = `  peak RSS during the rollout: ${mib(t)} | ${peerCol(mib)}`;
  if (pods >= 1000 && kind === 'CloneSet') {
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
      `peer: kruise-manager v${KRUISE_VERSION} (client QPS ${KRUISE_RAISED.qps}, burst ${KRUISE_RAISED.burst}) ${peerDown ? `unavailable: ${peerDown}` : 'ready'}; Tailor's node flags "${controllerNodeFlags().join(' ')}"; logs in ${LOGS}/${RUN}-*.log`,
    );
    const runs: [Kind, number][] = [
      ...SIZES.map((n): [Kind, number] => ['CloneSet', n]),
      ...STATEFUL_SIZES.map((n): [Kind, number] => ['StatefulSet', n]),
    ];
    for (const [kind, pods] of runs) {
      const t = await runSide(client, tailor, pods, kind);
      let p: Peer = { unavailable: peerDown ?? '' };
      if (!peerDown) {
        // A peer that fails leaves its column unavailable; Tailor's figures still print.
        p = await runSide(client, kruise, pods, kind).catch((err: unknown) => ({
          unavailable: errorMessage(err),
        }));
        if ('unavailable' in p && kind === 'CloneSet') peerDown = p.unavailable;
      }
      report({ kind, pods, nodes }, t, p);
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
