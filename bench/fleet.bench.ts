// Cost as the cluster grows (issue 35), on simulated nodes, Tailor beside kruise-manager (the pinned
// release, its client QPS raised and at its defaults) on the same API server, all from one run:
//  ceiling   what the bed's API server takes: pod metadata and status patches (the writes a rollout
//            makes) per second at high concurrency, kwok running; every throughput below is also
//            printed as a fraction of it;
//  bump      400 CloneSets x 25 pods (BENCH_FLEET_BUMP) patched to a new image within a second:
//            time until all are done, p50/p99 of per-CloneSet completion, CPU per pod, peak RSS,
//            API writes per pod;
//  big       one CloneSet of 10,000 pods (BENCH_FLEET_BIG) rolled out in place at maxUnavailable
//            10%: time, CPU per pod, reconcile p99, beside Tailor's own 1,000-pod figures;
//  failover  2,000 CloneSets x 25 pods (BENCH_FLEET_FAILOVER) cached by a leader and a standby; the
//            leader is stopped and one CloneSet edited: time until the new leader has reconciled it,
//            time until every key was reconciled once, GET requests made at start, peak RSS and
//            memory per cached pod.
// Two profiles, one after the other in one run (BENCH_FLEET_PROFILES, default "lab realistic"):
//  lab        the API server alone (its default APF and inflight limits), kwok and its scheduler;
//  realistic  the same, plus kube-controller-manager at its defaults (hack/kwok/kwok.sh
//             controller-manager: client QPS 20, the EndpointSlice controller among the rest) and
//             one Service per CloneSet: the ceiling, the bump and a 1,000-pod rollout (BENCH_FLEET_BASE)
//             beside the peer, with the EndpointSlice convergence time (every slice consistent with
//             the pods' readiness) and the bound 2 x Services x batches / 20 QPS it cannot beat.
// For each of Tailor's rollouts, where its time went: the per-pod spans (Tailor's and kwok's, from
// the watch) and the CPU of Tailor, kube-apiserver and kwok over the rollout, named as the bound.
// BENCH_FLEET_PEER=off leaves the peer out (a profiling run of Tailor alone).
// A peer run that has not finished within BENCH_FLEET_PEER_CAP_S (default 300 s) is stopped and
// printed as a lower bound with the pods it finished; its ratio is then "< x" (Tailor is at least that
// much faster). The peer at its default QPS reuses the pods its raised run created (restarted
// with its defaults, then rolled out again), so only the rollout is timed at the default rate.
// The failover's pods are created by the bench (copies of a pod the controller made, owned by paused
// CloneSets, bound round-robin to the kwok nodes), as scale.bench.ts does: the controllers only cache them.
// Owns: its namespaces (one per side and shape) and the controller processes, removed at the end.
// Must not: start or stop the cluster or kwok (hack/bench.sh does; the realistic profile's
// kube-controller-manager excepted, through hack/kwok/kwok.sh), or touch other namespaces.
import * as k8s from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { Informer } from '../src/runtime/informer.js';
import { errorMessage } from '../src/api/errors.js';
import { KubeClient } from '../src/runtime/kube-client.js';
import type { KubeObject, Pod } from '../src/api/wire.js';
import { silentLogger } from '../src/runtime/logger.js';
import {
  type BenchProcess,
  condition,
  controllerNodeFlags,
  createNamespace,
  deleteNamespace,
  describeMemory,
  image,
  kwokNodes,
  live,
  MemorySampler,
  type MemoryPeaks,
  metricsText,
  pool,
  quantile,
  ready,
  reconcileBuckets,
  reconciles,
  samples,
  seconds,
  sleep,
  template,
  until,
  usage,
  verdict,
  writes,
  writeKindsPerPod,
} from './kwok-common.js';
import {
  alive,
  CONTROLLER,
  KRUISE_RAISED,
  KRUISE_VERSION,
  KUBECONFIG,
  kruise,
  LOGS,
  parkPods,
  preparePeer,
  removePeerObjects,
  type Side,
  tailor,
  whenReady,
} from './sides.js';
import { Timeline, describeShare, type TimelineShare } from './timeline.js';

const shape = (text: string): { sets: number; size: number } => {
  const [sets, size] = text.split('x').map(Number);
  return { sets: sets ?? 1, size: size ?? 1 };
};
const BUMP = shape(process.env.BENCH_FLEET_BUMP ?? '400x25');
const BIG = Number(process.env.BENCH_FLEET_BIG ?? 10_000);
const BASE = Number(process.env.BENCH_FLEET_BASE ?? 1000);
const FAILOVER = shape(process.env.BENCH_FLEET_FAILOVER ?? '2000x25');
const PEER_CAP_MS = Number(process.env.BENCH_FLEET_PEER_CAP_S ?? 300) * 1000;
const OWN_CAP_MS = 1_200_000;
const SHAPES = new Set((process.env.BENCH_FLEET_SHAPES ?? 'ceiling bump big failover').split(/\s+/));
type Profile = 'lab' | 'realistic';
const PROFILES = (process.env.BENCH_FLEET_PROFILES ?? 'lab realistic')
  .split(/\s+/)
  .filter((p): p is Profile => p === 'lab' || p === 'realistic');
/** kube-controller-manager's default client rate: its EndpointSlice writes are bounded by it. */
const KCM_DEFAULT_QPS = 20;
/** The CloneSets' maxUnavailable in every shape here: without surge it rounds up (workload/pure/limits.ts). */
const MAX_UNAVAILABLE_FRACTION = 0.1;
const batchesOf = (size: number): number => Math.ceil(size / Math.max(1, Math.ceil(size * MAX_UNAVAILABLE_FRACTION)));
const CORES = availableParallelism();
const RUN = `bench-fleet-${Date.now().toString(36)}`;

const GOAL = {
  bumpVsPeer: 0.3,
  bumpOfCeiling: 0.6,
  writesPerPod: 3.5,
  bigCpuVsBase: 1.2,
  firstReconcileS: 10,
  cachedPodKB: 5,
  cpuMsPerPod: 5,
  reconcileP99Ms: 50,
};

/** A controller as one column: a side with the client rate it runs at. */
interface Contender {
  side: Side;
  label: string;
  rate?: { qps: number; burst: number };
}
const TAILOR: Contender = { side: tailor, label: 'Tailor' };
const KRUISE_FAST: Contender = { side: kruise, label: `kruise QPS ${KRUISE_RAISED.qps}`, rate: KRUISE_RAISED };
const KRUISE_DEFAULT: Contender = { side: kruise, label: 'kruise default QPS' };

// ---------------------------------------------------------------- one rollout, measured

interface Rollout {
  ms: number;
  /** False when the cap stopped it: ms is then a lower bound. */
  finished: boolean;
  pods: number;
  podsDone: number;
  writesPerPod: number;
  /** Each "METHOD code" of the writes, per pod, largest first. */
  writesByKind: string;
  cpuMsPerPod: number;
  /** Reconcile rounds of the CloneSet controller per pod: CPU that grows with the bump's time, not its pods, shows here. */
  roundsPerPod: number;
  p99Ms: number;
  /** Per-CloneSet completion, from the patch. */
  setP50Ms: number;
  setP99Ms: number;
  memory: MemoryPeaks;
  patchMs: number;
  /** Tailor's rollouts: where the time went. */
  split?: TimeSplit;
  /** With Services: when every EndpointSlice agreed with the pods' readiness, and the slice writes seen. */
  slices?: { consistentMs: number; writes: number } | string;
}

/** Per-pod spans from the watch, and each process's CPU over the rollout in cores. */
interface TimeSplit {
  share: TimelineShare;
  /** rest: etcd, the schedulers and the kube-controller-managers together. */
  cores: { tailor: number; apiServer: number; kwok: number; rest: number };
}

/** The fields of an EndpointSlice the convergence check reads. */
interface EndpointSlice extends KubeObject {
  endpoints?: { conditions?: { ready?: boolean } }[];
}

/** The control plane's processes besides kube-apiserver and kwok, by pid file name (those running count). */
const REST_OF_BED = [
  'etcd',
  'kube-scheduler',
  'kube-controller-manager',
  'tailor-kwok-scheduler',
  'tailor-kwok-controller-manager',
];
const restCpuMs = (): number =>
  REST_OF_BED.map(cpuMsOf)
    .filter((ms) => !Number.isNaN(ms))
    .reduce((a, b) => a + b, 0);

/** CPU time (ms) of a process the bed or kwok started, by its pid file's name; NaN when it is not running. */
function cpuMsOf(name: string): number {
  try {
    return usage(Number(readFileSync(`${dirname(KUBECONFIG)}/pids/${name}.pid`, 'utf8').trim())).cpuMs;
  } catch {
    return Number.NaN;
  }
}

const pct = (sorted: number[], q: number): number =>
  sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN);

/** How many CloneSets of how many pods, each behind a Service of its own when `services`. */
interface FleetShape {
  sets: number;
  size: number;
  services?: boolean;
}

/**
 * CloneSets of one side in a namespace of their own, the controller that runs them, and a watch on
 * their pods. A fleet is created once and may be rolled out several times, with the controller
 * restarted in between (the peer's default-QPS run reuses the pods its raised run created).
 */
class Fleet {
  private proc: BenchProcess | undefined;
  private readonly watched: Informer<Pod>;
  /** With Services: their EndpointSlices, and how many writes to them the watch delivered. */
  private readonly slices: Informer<EndpointSlice> | undefined;
  private sliceWrites = 0;
  /** When the watch last delivered a slice write: the write that made every slice consistent, once they are. */
  private lastSliceWriteAt = 0;
  private timeline: Timeline | undefined;
  readonly ns: string;
  readonly logFile: string;
  readonly sets: number;
  readonly size: number;
  readonly services: boolean;

  constructor(
    private readonly client: KubeClient,
    readonly side: Side,
    { sets, size, services = false }: FleetShape,
    what: string,
  ) {
    this.sets = sets;
    this.size = size;
    this.services = services;
    this.ns = `${RUN}-${what}-${side === tailor ? 'tailor' : 'kruise'}`;
    this.logFile = `${LOGS}/${this.ns}.log`;
    this.watched = new Informer<Pod>({
      name: `${this.ns}-pods`,
      client,
      path: `/api/v1/namespaces/${this.ns}/pods`,
      logger: silentLogger(),
    });
    const observe = (pod: Pod): void => this.timeline?.observe(pod, Date.now());
    this.watched.addHandler({ onAdd: observe, onUpdate: (_, pod) => observe(pod) });
    if (services) {
      this.slices = new Informer<EndpointSlice>({
        name: `${this.ns}-endpointslices`,
        client,
        path: `/apis/discovery.k8s.io/v1/namespaces/${this.ns}/endpointslices`,
        logger: silentLogger(),
      });
      const count = (): void => {
        this.sliceWrites += 1;
        this.lastSliceWriteAt = Date.now();
      };
      this.slices.addHandler({ onAdd: count, onUpdate: count, onDelete: count });
    }
  }

  get pods(): number {
    return this.sets * this.size;
  }

  get pid(): number {
    if (!this.proc) throw new Error('no controller running');
    return this.proc.pid;
  }

  name(i: number): string {
    return `fleet-${i}`;
  }

  async open(): Promise<void> {
    await createNamespace(this.client, this.ns);
    this.watched.start();
    await this.watched.waitForSync();
    if (this.slices) {
      this.slices.start();
      await this.slices.waitForSync();
    }
  }

  /** Every Service's EndpointSlices list as many endpoints as it has pods, all ready. */
  private slicesConsistent(): boolean {
    const bySet = new Map<string, { endpoints: number; ready: number }>();
    for (const slice of this.slices?.list() ?? []) {
      const service = slice.metadata?.labels?.['kubernetes.io/service-name'] ?? '';
      const seen = bySet.get(service) ?? { endpoints: 0, ready: 0 };
      for (const e of slice.endpoints ?? []) {
        seen.endpoints += 1;
        if (e.conditions?.ready === true) seen.ready += 1;
      }
      bySet.set(service, seen);
    }
    return Array.from({ length: this.sets }, (_, i) => bySet.get(this.name(i))).every(
      (s) => s?.endpoints === this.size && s.ready === this.size,
    );
  }

  async startController(c: Contender): Promise<void> {
    await this.proc?.stop();
    this.proc = this.side.start({
      slot: 0,
      namespace: this.ns,
      logFile: this.logFile,
      ...(c.rate ? { rate: c.rate } : {}),
    });
    await whenReady(this.side, this.proc, 0, this.logFile);
  }

  metrics(): Promise<string> {
    return metricsText(this.side.metricsPort(0));
  }

  /** Creates every CloneSet at `tag` and waits until every pod is Ready with its gate True. */
  async create(tag: string): Promise<number> {
    const t0 = Date.now();
    const path = this.side.collection(this.ns);
    if (this.services)
      await pool(
        Array.from({ length: this.sets }, (_, i) => this.name(i)),
        16,
        async (name) =>
          void (await this.client.create(`/api/v1/namespaces/${this.ns}/services`, {
            metadata: { name },
            spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }] },
          })),
      );
    await pool(
      Array.from({ length: this.sets }, (_, i) => i),
      16,
      async (i) =>
        void (await this.client.create(path, this.side.cloneSet({ name: this.name(i), replicas: this.size, tag }))),
    );
    await until(
      `${this.pods} ${this.side.name} pods Ready`,
      () => this.settled((p) => this.serving(p)),
      OWN_CAP_MS,
      250,
    );
    return Date.now() - t0;
  }

  /** The pod runs `tag`, in service again. */
  private runs(p: Pod, tag: string): boolean {
    return (
      p.spec?.containers?.[0]?.image === image(tag) &&
      p.status?.containerStatuses?.[0]?.image === image(tag) &&
      this.serving(p)
    );
  }

  /** Waits, uncapped, until every pod runs `tag` (a capped rollout left to finish). */
  async settle(tag: string): Promise<void> {
    await until(`every ${this.side.name} pod on ${tag}`, () => this.settled((p) => this.runs(p, tag)), OWN_CAP_MS, 500);
  }

  private serving(p: Pod): boolean {
    return condition(p, this.side.gate) === 'True' && ready(p);
  }

  private settled(done: (p: Pod) => boolean): boolean {
    if (this.proc) alive(this.side, this.proc, this.logFile);
    const list = live(this.watched.list());
    return list.length === this.pods && list.every(done);
  }

  /** Patches every CloneSet's template to `tag` at once and waits until every pod runs it, or the cap. */
  async rollout(tag: string, capMs: number): Promise<Rollout> {
    await sleep(1000); // the previous phase's trailing status writes
    const before = await this.metrics();
    const sampler = new MemorySampler(this.pid, this.side.metricsPort(0));
    sampler.start();
    const u0 = usage(this.pid);
    const others0 = { apiServer: cpuMsOf('kube-apiserver'), kwok: cpuMsOf('tailor-kwok'), rest: restCpuMs() };
    const writes0 = this.sliceWrites;
    this.timeline = this.side === tailor ? new Timeline('app', image(tag)) : undefined;
    const rolled = (p: Pod): boolean => this.runs(p, tag);
    const setDone = new Map<string, number>();
    const t0 = Date.now();
    const path = this.side.collection(this.ns);
    await pool(
      Array.from({ length: this.sets }, (_, i) => this.name(i)),
      64,
      async (name) =>
        void (await this.client.patch(
          `${path}/${name}`,
          { spec: { template: template(name, tag, '10m', '16Mi') } },
          'merge',
        )),
    );
    const patchMs = Date.now() - t0;
    let podsDone = 0;
    const check = (): boolean => {
      if (this.proc) alive(this.side, this.proc, this.logFile);
      const bySet = new Map<string, { all: number; done: number }>();
      for (const p of live(this.watched.list())) {
        const app = p.metadata?.labels?.['app'] ?? '';
        const s = bySet.get(app) ?? { all: 0, done: 0 };
        s.all++;
        if (rolled(p)) s.done++;
        bySet.set(app, s);
      }
      podsDone = 0;
      for (const [app, s] of bySet) {
        podsDone += s.done;
        if (s.done === this.size && s.all === this.size && !setDone.has(app)) setDone.set(app, Date.now() - t0);
      }
      return setDone.size === this.sets;
    };
    const finished = await until(`${this.side.name} rollout`, check, capMs, 200).then(
      () => true,
      () => false,
    );
    const ms = Date.now() - t0;
    await sleep(1000); // writes that trail the last pod (final status) belong to the rollout
    const memory = await sampler.stop();
    const after = await this.metrics();
    const u1 = usage(this.pid);
    const wallMs = Date.now() - t0;
    const per = Math.max(1, finished ? this.pods : podsDone);
    const times = [...setDone.values()].sort((a, b) => a - b);
    const split: TimeSplit | undefined = this.timeline && {
      share: this.timeline.share(),
      cores: {
        tailor: (u1.cpuMs - u0.cpuMs) / wallMs,
        apiServer: (cpuMsOf('kube-apiserver') - others0.apiServer) / wallMs,
        kwok: (cpuMsOf('tailor-kwok') - others0.kwok) / wallMs,
        rest: (restCpuMs() - others0.rest) / wallMs,
      },
    };
    this.timeline = undefined;
    // After the figures above: kube-controller-manager may lag the last pod by minutes.
    const slices = !this.services
      ? undefined
      : !finished
        ? 'not waited for (the rollout was capped)'
        : await until('EndpointSlices consistent', () => this.slicesConsistent(), OWN_CAP_MS, 200).then(
            () => ({ consistentMs: Math.max(this.lastSliceWriteAt, t0) - t0, writes: this.sliceWrites - writes0 }),
            () => `not consistent within ${OWN_CAP_MS / 1000} s`,
          );
    return {
      ...(split ? { split } : {}),
      ...(slices ? { slices } : {}),
      ms,
      finished,
      pods: this.pods,
      podsDone: finished ? this.pods : podsDone,
      writesPerPod: (writes(after) - writes(before)) / per,
      writesByKind: writeKindsPerPod(before, after, per),
      cpuMsPerPod: (u1.cpuMs - u0.cpuMs) / per,
      roundsPerPod: (reconciles(after) - reconciles(before)) / per,
      p99Ms: quantile(0.99, reconcileBuckets(before), reconcileBuckets(after)).value * 1000,
      setP50Ms: finished ? pct(times, 0.5) : NaN,
      setP99Ms: finished ? pct(times, 0.99) : NaN,
      memory,
      patchMs,
    };
  }

  async close(): Promise<void> {
    await this.proc?.stop();
    this.proc = undefined;
    await this.watched.stop().catch(() => undefined);
    await this.slices?.stop().catch(() => undefined);
    await deleteNamespace(this.client, this.ns, [this.side.collection(this.ns)]);
  }
}

/** Runs `body` on a fleet opened for it, closing it whatever happens. */
async function withFleet<T>(fleet: Fleet, body: (f: Fleet) => Promise<T>): Promise<T> {
  await fleet.open();
  try {
    return await body(fleet);
  } finally {
    await fleet.close();
  }
}

// ---------------------------------------------------------------- the ceiling

/** Pod patches per second the API server completes, at the best of a few concurrencies. */
async function ceiling(
  client: KubeClient,
  nodes: string[],
  profile: string,
): Promise<{ perSecond: number; at: number; all: string }> {
  // One namespace per profile: the last profile's may still be terminating.
  const ns = `${RUN}-ceiling-${profile}`;
  const count = 1000;
  await createNamespace(client, ns);
  const path = `/api/v1/namespaces/${ns}/pods`;
  try {
    await pool(
      Array.from({ length: count }, (_, i) => i),
      64,
      async (i) => {
        const spec = (template('ceiling', 'v1', '10m', '16Mi') as { spec: Pod['spec'] }).spec;
        await client.create(path, {
          metadata: { name: `ceiling-${i}`, labels: { app: 'ceiling' } },
          spec: { ...spec, nodeName: nodes[i % nodes.length] },
        });
      },
    );
    await until(
      'ceiling pods Running',
      async () =>
        (await client.list<Pod>(path, { fieldSelector: 'status.phase!=Running', limit: 1 })).items.length === 0,
      300_000,
      1000,
    );
    const results: { at: number; perSecond: number }[] = [];
    for (const concurrency of [32, 128, 256]) {
      let done = 0;
      let n = 0;
      const deadline = Date.now() + 10_000;
      const t0 = Date.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (Date.now() < deadline) {
            const i = n++;
            const pod = `${path}/ceiling-${i % count}`;
            // The two kinds of pod write a rollout makes: its metadata/spec, and its status conditions.
            if (i % 2 === 0)
              await client.patch(pod, { metadata: { annotations: { 'bench.tailor.dev/n': String(i) } } }, 'merge');
            else
              await client.patch(
                `${pod}/status`,
                {
                  status: { conditions: [{ type: 'bench.tailor.dev/Probe', status: i % 4 === 1 ? 'True' : 'False' }] },
                },
                'strategic',
              );
            done++;
          }
        }),
      );
      results.push({ at: concurrency, perSecond: (done * 1000) / (Date.now() - t0) });
    }
    const best = results.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
    return { ...best, all: results.map((r) => `${r.perSecond.toFixed(0)}/s at ${r.at}`).join(', ') };
  } finally {
    await deleteNamespace(client, ns, []);
  }
}

// ---------------------------------------------------------------- report helpers

const s = (ms: number, finished = true): string => `${finished ? '' : '> '}${seconds(ms)} s`;
const mib = (m: MemoryPeaks): string => `${m.hwmMiB.toFixed(0)} MiB`;
/** Tailor's time over a peer's: "0.25x", or "< 0.25x" when the peer was capped. */
const ratio = (own: Rollout, peer: Rollout | undefined): string =>
  peer ? `${peer.finished ? '' : '< '}${(own.ms / peer.ms).toFixed(2)}x` : 'no peer figure';
const rolloutRow = (label: string, r: Rollout | string): string =>
  typeof r === 'string'
    ? `    ${label.padEnd(20)} unavailable: ${r}`
    : `    ${label.padEnd(20)} ${s(r.ms, r.finished).padStart(9)}${r.finished ? '' : ` (${r.podsDone} of ${r.pods} pods done at the cap)`}, writes/pod ${r.writesPerPod.toFixed(2)} (${r.writesByKind}), CPU/pod ${r.cpuMsPerPod.toFixed(2)} ms, ${r.roundsPerPod.toFixed(1)} rounds/pod, reconcile p99 ${r.p99Ms.toFixed(0)} ms, peak RSS ${mib(r.memory)}${Number.isNaN(r.setP50Ms) ? '' : `, per-CloneSet done p50 ${s(r.setP50Ms)} p99 ${s(r.setP99Ms)}`}${r.slices === undefined ? '' : typeof r.slices === 'string' ? `; EndpointSlices ${r.slices}` : `; EndpointSlices consistent at ${s(r.slices.consistentMs)}`}`;

/** Where Tailor's time went, and what bound it: the machine's CPU, Tailor's own, kwok, or waiting on the API. */
function describeSplit({ share, cores }: TimeSplit): string {
  const busy = cores.tailor + cores.apiServer + cores.kwok + cores.rest;
  const tailorSpanMs = share.drainToPatch.median + share.runningToGate.median;
  const kwokSpanMs = share.patchToRunning.median + share.gateToReady.median;
  const largest = (
    [
      ['Tailor', cores.tailor],
      ['kube-apiserver', cores.apiServer],
      ['kwok', cores.kwok],
      ['etcd, schedulers and controller-managers', cores.rest],
    ] as const
  ).reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  const bound =
    busy >= 0.85 * CORES
      ? `CPU: the machine's ${CORES} cores busy, most of it ${largest}`
      : cores.tailor >= 0.85
        ? "Tailor's CPU (its one event loop)"
        : kwokSpanMs > tailorSpanMs
          ? 'kwok (waiting on pods)'
          : 'the API (Tailor waiting on its requests)';
  const c = (x: number): string => x.toFixed(2);
  return `where Tailor's time went: per pod ${describeShare(share, 'kwok')}; CPU over the rollout in cores of ${CORES}: Tailor ${c(cores.tailor)}, kube-apiserver ${c(cores.apiServer)}, kwok ${c(cores.kwok)}, etcd, schedulers and controller-managers ${c(cores.rest)}; bound by ${bound}`;
}

/**
 * The EndpointSlice figures of a rollout behind Services, and which lower bound bounds it: the API
 * server's ceiling for Tailor's writes, or kube-controller-manager's 20 QPS for two slice writes
 * per Service and batch (each batch turns its pods' readiness False, then True).
 */
function describeSlices(r: Rollout, sets: number, size: number, ceilingPerS: number | undefined): string | undefined {
  if (r.slices === undefined || typeof r.slices === 'string') return undefined;
  const batches = batchesOf(size);
  const slicesBoundMs = ((2 * sets * batches) / KCM_DEFAULT_QPS) * 1000;
  const ceilingBoundMs = ceilingPerS ? ((r.writesPerPod * r.pods) / ceilingPerS) * 1000 : Number.NaN;
  const bounds = `EndpointSlices 2 x ${sets} Services x ${batches} batches / ${KCM_DEFAULT_QPS} QPS = ${s(slicesBoundMs)}${Number.isNaN(ceilingBoundMs) ? '' : `, the API ceiling ${(r.writesPerPod * r.pods).toFixed(0)} writes / ${ceilingPerS?.toFixed(0)}/s = ${s(ceilingBoundMs)}`}`;
  const boundBy = !(ceilingBoundMs > slicesBoundMs)
    ? "kube-controller-manager's EndpointSlice writes"
    : "the API server's ceiling";
  return `EndpointSlices consistent with readiness at ${s(r.slices.consistentMs)}, ${s(r.slices.consistentMs - r.ms)} after the last pod; ${r.slices.writes} slice writes seen (${(r.slices.writes / (sets * batches)).toFixed(2)} per Service and batch); lower bounds: ${bounds}: bounded by ${boundBy}`;
}

type Column = Rollout | string;
const got = (c: Column | undefined): Rollout | undefined => (typeof c === 'string' ? undefined : c);

/** The rows of one shape: any of Tailor's own first, then Tailor's, then the peer's two runs. */
function printBeside(own: Rollout, fast: Column, slow: Column, ...before: (readonly [string, Column])[]): void {
  for (const [label, r] of [
    ...before,
    [TAILOR.label, own],
    [KRUISE_FAST.label, fast],
    [KRUISE_DEFAULT.label, slow],
  ] as const)
    console.log(rolloutRow(label, r));
}

/** Tailor's time over each of the peer's runs. */
const vsPeer = (own: Rollout, fast: Column, slow: Column): string =>
  `${ratio(own, got(fast))} of ${KRUISE_FAST.label}, ${ratio(own, got(slow))} of ${KRUISE_DEFAULT.label}`;

/** Tailor's time split and, behind Services, its EndpointSlice figures. */
function printWhereItWent(own: Rollout, shape: FleetShape, ceilingPerS: number | undefined): void {
  if (own.split) console.log(`  ${describeSplit(own.split)}`);
  const slices = describeSlices(own, shape.sets, shape.size, ceilingPerS);
  if (slices) console.log(`  ${slices}`);
}

/** The peer's two runs on one fleet: raised QPS (creating the pods), then its defaults (rolling them again). */
async function peerRuns(
  client: KubeClient,
  shape: FleetShape,
  what: string,
  peerDown: string | undefined,
): Promise<[Column, Column]> {
  if (peerDown) return [peerDown, peerDown];
  const fleet = new Fleet(client, kruise, shape, what);
  const runs: [Column, Column] = ['not run', 'not run'];
  await withFleet(fleet, async (f) => {
    await f.startController(KRUISE_FAST);
    await f.create('v1');
    runs[0] = await f.rollout('v2', PEER_CAP_MS);
    // The default-QPS run starts from every pod settled: a capped raised run is finished first.
    if (!runs[0].finished) await f.settle('v2');
    await f.startController(KRUISE_DEFAULT);
    runs[1] = await f.rollout('v3', PEER_CAP_MS);
  }).catch((err: unknown) => {
    const why = errorMessage(err);
    runs[0] = typeof runs[0] === 'string' ? why : runs[0];
    runs[1] = typeof runs[1] === 'string' ? why : runs[1];
  });
  return runs;
}

// ---------------------------------------------------------------- bump and big

async function bump(
  client: KubeClient,
  ceilingPerS: number | undefined,
  peerDown: string | undefined,
  services: boolean,
): Promise<void> {
  const { sets, size } = BUMP;
  const what = services ? 'bump-svc' : 'bump';
  const own = await withFleet(new Fleet(client, tailor, { ...BUMP, services }, what), async (f) => {
    await f.startController(TAILOR);
    const createMs = await f.create('v1');
    console.log(`  Tailor created ${f.pods} pods in ${sets} CloneSets in ${seconds(createMs)} s`);
    return f.rollout('v2', OWN_CAP_MS);
  });
  const [fast, slow] = await peerRuns(client, { ...BUMP, services }, what, peerDown);
  console.log(
    `cluster-wide bump: ${sets} CloneSets x ${size} pods (${sets * size}) patched at once (in ${seconds(own.patchMs)} s), maxUnavailable 10%${services ? ', a Service each' : ''}`,
  );
  printBeside(own, fast, slow);
  console.log(
    `  time vs peer: ${vsPeer(own, fast, slow)} (goal <= ${GOAL.bumpVsPeer}x: ${got(fast) ? verdict(own.ms / (got(fast)?.ms ?? 1) <= GOAL.bumpVsPeer) : 'no peer figure'})`,
  );
  console.log(
    `  Tailor ${(own.pods / (own.ms / 1000)).toFixed(0)} pods/s, writes/pod ${own.writesPerPod.toFixed(2)} (goal <= ${GOAL.writesPerPod}: ${verdict(own.writesPerPod <= GOAL.writesPerPod)})`,
  );
  if (ceilingPerS) {
    const rate = (own.writesPerPod * own.pods) / (own.ms / 1000);
    console.log(
      `  Tailor's write rate ${rate.toFixed(0)}/s = ${((100 * rate) / ceilingPerS).toFixed(0)}% of the ceiling (goal >= ${GOAL.bumpOfCeiling * 100}%: ${verdict(rate >= GOAL.bumpOfCeiling * ceilingPerS)})${got(fast) ? `; ${KRUISE_FAST.label} ${((100 * ((got(fast)?.writesPerPod ?? 0) * (got(fast)?.podsDone ?? 0))) / ((got(fast)?.ms ?? 1) / 1000) / ceilingPerS).toFixed(0)}%` : ''}`,
    );
  }
  const peerRss = got(fast)?.memory.hwmMiB;
  console.log(
    `  peak RSS ${mib(own.memory)} (goal below the peer's: ${peerRss === undefined ? 'no peer figure' : verdict(own.memory.hwmMiB < peerRss)})`,
  );
  console.log(`  Tailor's memory: ${describeMemory(own.memory, true)}`);
  printWhereItWent(own, BUMP, ceilingPerS);
}

/** One CloneSet of `pods` under Tailor, created at v1 and rolled out to v2. */
const oneCloneSet = (client: KubeClient, pods: number, what: string, services = false): Promise<Rollout> =>
  withFleet(new Fleet(client, tailor, { sets: 1, size: pods, services }, what), async (f) => {
    await f.startController(TAILOR);
    const createMs = await f.create('v1');
    console.log(`  Tailor created a ${pods}-pod CloneSet in ${seconds(createMs)} s`);
    return f.rollout('v2', OWN_CAP_MS);
  });

/** The realistic profile's 1,000-pod rollout behind a Service, beside the peer. */
async function behindService(
  client: KubeClient,
  ceilingPerS: number | undefined,
  peerDown: string | undefined,
): Promise<void> {
  const own = await oneCloneSet(client, BASE, 'base-svc', true);
  const [fast, slow] = await peerRuns(client, { sets: 1, size: BASE, services: true }, 'base-svc', peerDown);
  console.log(`one CloneSet of ${BASE} pods behind a Service, in-place image rollout at maxUnavailable 10%`);
  printBeside(own, fast, slow);
  console.log(`  time vs peer: ${vsPeer(own, fast, slow)}`);
  printWhereItWent(own, { sets: 1, size: BASE }, ceilingPerS);
}

async function big(client: KubeClient, peerDown: string | undefined): Promise<void> {
  const base = await oneCloneSet(client, BASE, 'base');
  const own = await oneCloneSet(client, BIG, 'big');
  const [fast, slow] = await peerRuns(client, { sets: 1, size: BIG }, 'big', peerDown);
  console.log(
    `one big CloneSet: ${BIG} pods, in-place image rollout at maxUnavailable 10% (beside Tailor at ${BASE} pods)`,
  );
  printBeside(own, fast, slow, [`Tailor ${BASE} pods`, base]);
  console.log(`  time vs peer: ${vsPeer(own, fast, slow)}`);
  const cpuRatio = own.cpuMsPerPod / base.cpuMsPerPod;
  console.log(
    `  CPU/pod at ${BIG} over ${BASE}: ${cpuRatio.toFixed(2)}x (goal <= ${GOAL.bigCpuVsBase}x: ${verdict(cpuRatio <= GOAL.bigCpuVsBase)})`,
  );
  console.log(
    `  at ${BASE} pods: CPU/pod ${base.cpuMsPerPod.toFixed(2)} ms (goal <= ${GOAL.cpuMsPerPod}: ${verdict(base.cpuMsPerPod <= GOAL.cpuMsPerPod)}), reconcile p99 ${base.p99Ms.toFixed(0)} ms (goal <= ${GOAL.reconcileP99Ms}: ${verdict(base.p99Ms <= GOAL.reconcileP99Ms)}), writes/pod ${base.writesPerPod.toFixed(2)}`,
  );
  console.log(
    `  at ${BIG} pods: writes/pod ${own.writesPerPod.toFixed(2)} (goal <= ${GOAL.writesPerPod}: ${verdict(own.writesPerPod <= GOAL.writesPerPod)}), peak RSS ${mib(own.memory)} (goal below the peer's: ${got(fast) ? verdict(own.memory.hwmMiB < (got(fast)?.memory.hwmMiB ?? 0)) : 'no peer figure'})`,
  );
  console.log(`  Tailor's memory at ${BIG}: ${describeMemory(own.memory, true)}`);
  if (own.split) console.log(`  at ${BIG} pods, ${describeSplit(own.split)}`);
}

// ---------------------------------------------------------------- failover

interface Failover {
  firstMs: number;
  everyKeyMs: number;
  /** From the standby's start until its caches were synced (its /readyz answers). */
  syncMs: number;
  getsAtStart: number;
  standbyPeakMiB: number;
  standbyRssMiB: number;
  baselineRssMiB: number;
  pods: number;
}

const gets = (text: string): number =>
  samples(text, 'rest_client_requests_total')
    .filter((x) => x.labels['method'] === 'GET')
    .reduce((sum, x) => sum + x.value, 0);

/**
 * One side's failover: `sets` paused CloneSets of `size` pods (made by the bench from a pod the
 * controller created), a leader and a standby; the leader stopped, one CloneSet edited at once.
 */
async function failover(client: KubeClient, c: Contender, nodes: string[], reuse?: string): Promise<Failover> {
  const { sets, size } = FAILOVER;
  const side = c.side;
  const ns = reuse ?? `${RUN}-failover-${side === tailor ? 'tailor' : 'kruise'}`;
  const path = side.collection(ns);
  const log = (slot: number): string => `${LOGS}/${ns}-${c === KRUISE_DEFAULT ? 'default-' : ''}${slot}.log`;
  const procs: BenchProcess[] = [];
  const start = async (slot: 0 | 1): Promise<BenchProcess> => {
    const p = side.start({
      slot,
      namespace: ns,
      logFile: log(slot),
      leaderElect: true,
      ...(c.rate ? { rate: c.rate } : {}),
    });
    procs.push(p);
    await whenReady(side, p, slot, log(slot));
    return p;
  };
  try {
    let baselineRssMiB = NaN;
    if (!reuse) {
      await createNamespace(client, ns);
      // A pod the controller made is the pattern of the bench's copies; its RSS then is the baseline.
      const leader = await start(0);
      await client.create(path, side.cloneSet({ name: 'pattern', replicas: 1, tag: 'v1' }));
      let sample: Pod | undefined;
      await until(
        'the pattern pod Ready',
        async () => {
          sample = (
            await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: 'app=pattern' })
          ).items.find(ready);
          return sample !== undefined;
        },
        120_000,
        250,
      );
      await sleep(3000);
      baselineRssMiB = usage(leader.pid).rssKiB / 1024;
      await leader.stop();
      procs.length = 0;
      if (sample) {
        const t = Date.now();
        const createdMs = await parkPods(client, { side, ns, prefix: 'fo' }, sample, {
          count: sets * size,
          perSet: size,
          nodes,
        });
        console.log(
          `  ${sets * size} ${side.name} pods in ${sets} paused CloneSets created in ${seconds(createdMs)} s, all Running after ${seconds(Date.now() - t)} s`,
        );
      }
    }
    const first = await start(0);
    const standbyStart = Date.now();
    const second = await start(1);
    const syncMs = Date.now() - standbyStart;
    // Either may win the Lease (an earlier run's holder may not have released it): the leader is
    // the one that reconciles.
    const reconciled = async (slot: 0 | 1): Promise<number> =>
      reconciles(await metricsText(side.metricsPort(slot)).catch(() => ''));
    let leaderSlot: 0 | 1 = 0;
    await until(
      'a leader reconciled every CloneSet',
      async () => {
        if ((await reconciled(1)) >= sets) leaderSlot = 1;
        return leaderSlot === 1 || (await reconciled(0)) >= sets;
      },
      600_000,
      500,
    );
    const [leader, standby] = leaderSlot === 0 ? [first, second] : [second, first];
    const standbySlot = leaderSlot === 0 ? 1 : 0;
    await sleep(2000);
    // The failover: the leader is stopped (SIGTERM, as on a rolling update of the Deployment), a
    // CloneSet is edited at once.
    const t0 = Date.now();
    await leader.stop();
    const edited = `${path}/fo-0`;
    const before = await client.get<{ metadata?: { generation?: number }; spec?: { minReadySeconds?: number } }>(
      edited,
    );
    await client.patch(edited, { spec: { minReadySeconds: (before.spec?.minReadySeconds ?? 0) + 1 } }, 'merge');
    const generation = (before.metadata?.generation ?? 0) + 1;
    await until(
      'the edited CloneSet observed',
      async () => {
        const cs = await client.get<{ status?: { observedGeneration?: number } }>(edited);
        return (cs.status?.observedGeneration ?? 0) >= generation;
      },
      600_000,
      25,
    );
    const firstMs = Date.now() - t0;
    await until(
      'every key reconciled once by the new leader',
      async () => (await reconciled(standbySlot)) >= sets,
      600_000,
      100,
    );
    const everyKeyMs = Date.now() - t0;
    const text = await metricsText(side.metricsPort(standbySlot));
    await sleep(3000);
    const u = usage(standby.pid);
    return {
      firstMs,
      everyKeyMs,
      syncMs,
      getsAtStart: gets(text),
      standbyPeakMiB: u.hwmKiB / 1024,
      standbyRssMiB: u.rssKiB / 1024,
      baselineRssMiB,
      pods: sets * size,
    };
  } finally {
    for (const p of procs) await p.stop();
  }
}

/** Memory per cached pod in KB (1,000 bytes): the standby's RSS over its one-pod baseline, per pod. */
const cachedPodKB = (f: Failover): number => ((f.standbyRssMiB - f.baselineRssMiB) * 1048.576) / f.pods;

function failoverRow(label: string, f: Failover | string): string {
  if (typeof f === 'string') return `    ${label.padEnd(20)} unavailable: ${f}`;
  const perPodKB = cachedPodKB(f);
  return `    ${label.padEnd(20)} first reconcile ${s(f.firstMs)}, every key ${s(f.everyKeyMs)}, standby synced in ${s(f.syncMs)}, GETs by the standby ${f.getsAtStart}, standby RSS ${f.standbyRssMiB.toFixed(0)} MiB (peak ${f.standbyPeakMiB.toFixed(0)}), ${Number.isNaN(perPodKB) ? '' : `${perPodKB.toFixed(2)} KB per cached pod`}`;
}

async function failovers(client: KubeClient, nodes: string[], peerDown: string | undefined): Promise<void> {
  const { sets, size } = FAILOVER;
  const ownNs = `${RUN}-failover-tailor`;
  let own: Failover | string;
  try {
    own = await failover(client, TAILOR, nodes);
  } catch (err) {
    own = errorMessage(err);
  } finally {
    await deleteNamespace(client, ownNs, [tailor.collection(ownNs)]);
  }
  let fast: Failover | string = peerDown ?? 'not run';
  let slow: Failover | string = peerDown ?? 'not run';
  if (!peerDown) {
    const peerNs = `${RUN}-failover-kruise`;
    try {
      fast = await failover(client, KRUISE_FAST, nodes);
      slow = await failover(client, KRUISE_DEFAULT, nodes, peerNs).catch((err: unknown) => errorMessage(err));
    } catch (err) {
      fast = errorMessage(err);
    } finally {
      await deleteNamespace(client, peerNs, [kruise.collection(peerNs)]);
    }
  }
  console.log(
    `failover at size: ${sets * size} pods in ${sets} CloneSets cached by a leader and a standby; the leader stopped, one CloneSet edited`,
  );
  console.log(failoverRow(TAILOR.label, own));
  console.log(failoverRow(KRUISE_FAST.label, fast));
  console.log(failoverRow(KRUISE_DEFAULT.label, slow));
  if (typeof own !== 'string') {
    const perPodKB = cachedPodKB(own);
    const peer = typeof fast === 'string' ? undefined : fast;
    console.log(
      `  first reconcile ${s(own.firstMs)} (goal <= ${GOAL.firstReconcileS} s: ${verdict(own.firstMs <= GOAL.firstReconcileS * 1000)}); memory per cached pod ${perPodKB.toFixed(2)} KB (goal <= ${GOAL.cachedPodKB}: ${verdict(perPodKB <= GOAL.cachedPodKB)}); peak RSS ${own.standbyPeakMiB.toFixed(0)} MiB (goal below the peer's: ${peer ? verdict(own.standbyPeakMiB < peer.standbyPeakMiB) : 'no peer figure'})`,
    );
  }
}

// ---------------------------------------------------------------- main

/** The realistic profile runs kube-controller-manager beside kwok; the lab profile does not. */
function setProfile(profile: Profile): void {
  execFileSync('bash', ['hack/kwok/kwok.sh', 'controller-manager', profile === 'realistic' ? 'up' : 'down'], {
    stdio: 'inherit',
  });
}

async function main(): Promise<void> {
  if (!existsSync(KUBECONFIG)) throw new Error(`no test bed at ${KUBECONFIG}: run 'make cluster-up' first`);
  if (!existsSync(CONTROLLER)) throw new Error(`no ${CONTROLLER}: run 'npx tsc -p tsconfig.build.json' first`);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG);
  const client = new KubeClient(kc, undefined, { maxSockets: 256 });
  mkdirSync(LOGS, { recursive: true });
  try {
    const nodes = await kwokNodes(client);
    const peerDown =
      process.env.BENCH_FLEET_PEER === 'off'
        ? 'not run (BENCH_FLEET_PEER=off)'
        : await preparePeer(client).catch((err: unknown) => `could not prepare the cluster for it: ${String(err)}`);
    console.log(
      `${nodes.length} simulated nodes; peer kruise-manager v${KRUISE_VERSION} ${peerDown ? `unavailable: ${peerDown}` : `at QPS ${KRUISE_RAISED.qps}/burst ${KRUISE_RAISED.burst} and at its defaults`}, a peer run capped at ${PEER_CAP_MS / 1000} s; Tailor's node flags "${controllerNodeFlags().join(' ')}"; logs in ${LOGS}/${RUN}-*`,
    );
    // A full bed runs its own kube-controller-manager: no lab there, and the realistic profile uses it.
    const bedControllerManager = !Number.isNaN(cpuMsOf('kube-controller-manager'));
    for (const profile of PROFILES) {
      if (profile === 'lab' && bedControllerManager) {
        console.log(
          "profile lab: skipped: the bed runs its own kube-controller-manager (a full bed); run BENCH=fleet on a control-plane bed ('make cluster-down' first) for it",
        );
        continue;
      }
      setProfile(profile);
      const realistic = profile === 'realistic';
      console.log(
        realistic
          ? `profile realistic: kube-controller-manager at its defaults (client QPS ${KCM_DEFAULT_QPS}), one Service per CloneSet, the API server's default APF and inflight limits`
          : "profile lab: no kube-controller-manager, no Services, the API server's default APF and inflight limits",
      );
      let ceilingPerS: number | undefined;
      if (SHAPES.has('ceiling')) {
        const c = await ceiling(client, nodes, profile);
        ceilingPerS = c.perSecond;
        console.log(
          `the ceiling (${profile}): ${c.perSecond.toFixed(0)} pod writes/s at ${c.at} in flight (metadata and status patches, kwok running; ${c.all})`,
        );
      }
      if (SHAPES.has('bump')) await bump(client, ceilingPerS, peerDown, realistic);
      if (realistic) {
        if (SHAPES.has('big')) await behindService(client, ceilingPerS, peerDown);
        continue;
      }
      if (SHAPES.has('big')) await big(client, peerDown);
      if (SHAPES.has('failover')) await failovers(client, nodes, peerDown);
    }
  } finally {
    try {
      if (PROFILES.includes('realistic')) setProfile('lab');
    } catch (err) {
      console.error(`fleet bench: stopping the realistic profile's kube-controller-manager failed: ${String(err)}`);
    }
    await removePeerObjects(client);
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error('fleet bench failed:', err);
  process.exitCode = 1;
});
