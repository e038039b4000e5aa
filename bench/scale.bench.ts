// Scale benchmark on simulated nodes (issue 16, docs/architecture.md §7 Performance targets), all figures from one run:
//  1. a 1,000-pod CloneSet created: time until every pod is Ready;
//  2. an in-place image rollout at maxUnavailable 10%: time, API writes per pod, controller peak
//     RSS, controller CPU per pod, reconcile time p99;
//  3. a resize rollout (pods/resize through the simulated kubelets): the same figures;
//  4. 10,000 pods cached: the controller restarted with 10,000 pods in its namespace: time to caches
//     synced and to the first reconcile, then its RSS.
// The controller runs as its own process (`node dist/cli/main.js controller`), so RSS and CPU are
// its own: /proc/<pid>/status VmRSS and VmHWM (the peak is reset through clear_refs before each
// phase) and /proc/<pid>/stat utime+stime. API writes are the controller's own
// rest_client_requests_total (POST, PUT, PATCH, DELETE; events included); reconcile p99 is
// estimated from its controller_runtime_reconcile_time_seconds histogram (delta over the phase,
// linear inside the bucket, as histogram_quantile does).
// Needs the test bed's API server and kwok's nodes (hack/kwok/kwok.sh up; hack/bench.sh does it).
// Pods ask for schedulerName tailor-kwok and the kwok nodes (nodeSelector type=kwok + toleration),
// so the real node never sees them. The 9,000 extra pods of step 4 are created by this benchmark
// directly (copies of a Tailor pod without its readiness gate, owned by 9 paused CloneSets, bound
// round-robin to the kwok nodes) rather than by the controller: faster, and the controller only
// has to cache them.
// Owns: its namespace and the controller process, both removed at the end. Must not: start or
// stop the cluster or kwok, or change anything outside its namespace.
import * as k8s from '@kubernetes/client-node';
import { existsSync, mkdirSync } from 'node:fs';
import { Informer } from '../src/runtime/informer.js';
import { KubeClient } from '../src/runtime/kube-client.js';
import type { Pod } from '../src/api/wire.js';
import { silentLogger } from '../src/runtime/logger.js';
import { Timeline, describeShare, describeWaves } from './timeline.js';
import {
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
  memoryNow,
  metricsText as metricsOf,
  type MemoryPeaks,
  quantile,
  ready,
  reconcileBuckets,
  reconciles,
  samples,
  seconds,
  sleep,
  startTailor,
  template,
  until,
  usage,
  verdict,
  writes,
  writeKindsPerPod,
} from './kwok-common.js';
import { parkPods, tailor } from './sides.js';

const PODS = Number(process.env.BENCH_SCALE_PODS ?? 1000);
const CACHED = Number(process.env.BENCH_CACHED_PODS ?? 10_000);
const KUBECONFIG = process.env.TAILOR_KUBECONFIG ?? '.tailor/cluster/kubeconfig';
const CONTROLLER = process.env.TAILOR_CONTROLLER_JS ?? 'dist/cli/main.js';
/** Pods of each paused CloneSet the bench adds for step 4. */
const PARKED_PER_SET = 1000;
const METRICS_PORT = 18480;
const HEALTH_PORT = 18481;
const ns = `bench-scale-${Date.now().toString(36)}`;
const GATE = 'apps.tailor.dev/InPlaceUpdateReady';
const CS_PATH = `/apis/apps.tailor.dev/v1alpha1/namespaces/${ns}/clonesets`;
// Simulated kubelet timings, from hack/kwok/stages-pod.yaml: a container restart takes 1.0–1.5 s.
const KWOK_RESTART_S = [1.0, 1.5] as const;

// The issue's goals (issue 16 table; docs/architecture.md §7 Performance targets).
const GOAL = {
  rolloutS: 20,
  writesPerPod: 3.5,
  peakRssMiB: 120,
  cpuMsPerPod: 5,
  reconcileP99Ms: 20,
  cachedRssMB: 150,
};

// ---------------------------------------------------------------- the controller process

/** Tailor's controller as its own process, scoped to the bench namespace. */
const startController = (logFile: string): BenchProcess =>
  startTailor({
    controllerJs: CONTROLLER,
    kubeconfig: KUBECONFIG,
    namespace: ns,
    metricsPort: METRICS_PORT,
    healthPort: HEALTH_PORT,
    logFile,
  });

const metricsText = (): Promise<string> => metricsOf(METRICS_PORT);

// ---------------------------------------------------------------- phases

interface PhaseResult {
  /** When the phase's action began (epoch ms). */
  startedAt: number;
  ms: number;
  writesPerPod: number;
  /** Each "METHOD code" of the phase's writes, per pod, largest first. */
  writesByKind: string;
  peakRssMiB: number;
  memory: MemoryPeaks;
  cpuMsPerPod: number;
  p99Ms: number;
  reconciles: number;
}

async function phase(
  controller: BenchProcess,
  pods: number,
  act: () => Promise<void>,
  done: () => boolean,
  what: string,
): Promise<PhaseResult> {
  await sleep(1000); // let the previous phase's status writes settle
  const before = await metricsText();
  const sampler = new MemorySampler(controller.pid, METRICS_PORT);
  sampler.start();
  const u0 = usage(controller.pid);
  const t0 = Date.now();
  await act();
  await until(what, done, 600_000);
  const ms = Date.now() - t0;
  await sleep(1000); // writes that trail the last pod (final status) belong to the rollout
  const memory = await sampler.stop();
  const after = await metricsText();
  const u1 = usage(controller.pid);
  const p99 = quantile(0.99, reconcileBuckets(before), reconcileBuckets(after));
  return {
    startedAt: t0,
    ms,
    writesPerPod: (writes(after) - writes(before)) / pods,
    writesByKind: writeKindsPerPod(before, after, pods),
    peakRssMiB: u1.hwmKiB / 1024,
    memory,
    cpuMsPerPod: (u1.cpuMs - u0.cpuMs) / pods,
    p99Ms: p99.value * 1000,
    reconciles: p99.count,
  };
}

function report(name: string, r: PhaseResult, rolloutGoal: boolean): void {
  console.log(
    `${name}: ${seconds(r.ms)} s${rolloutGoal ? ` (goal <= ${GOAL.rolloutS} s: ${verdict(r.ms <= GOAL.rolloutS * 1000)})` : ''}`,
  );
  console.log(
    `  API writes per pod (controller's rest_client_requests_total): ${r.writesPerPod.toFixed(2)} (goal <= ${GOAL.writesPerPod}: ${verdict(r.writesPerPod <= GOAL.writesPerPod)}): ${r.writesByKind}`,
  );
  console.log(
    `  controller peak RSS: ${r.peakRssMiB.toFixed(0)} MiB (goal <= ${GOAL.peakRssMiB} MiB: ${verdict(r.peakRssMiB <= GOAL.peakRssMiB)})`,
  );
  console.log(`  controller memory: ${describeMemory(r.memory, true)}`);
  console.log(
    `  controller CPU per pod: ${r.cpuMsPerPod.toFixed(2)} ms (goal <= ${GOAL.cpuMsPerPod} ms: ${verdict(r.cpuMsPerPod <= GOAL.cpuMsPerPod)})`,
  );
  console.log(
    `  reconcile time p99: ${r.p99Ms.toFixed(1)} ms over ${r.reconciles} reconciles (goal <= ${GOAL.reconcileP99Ms} ms: ${verdict(r.p99Ms <= GOAL.reconcileP99Ms)})`,
  );
}

async function main(): Promise<void> {
  if (!existsSync(KUBECONFIG)) throw new Error(`no test bed at ${KUBECONFIG}: run 'make cluster-up' first`);
  if (!existsSync(CONTROLLER)) throw new Error(`no ${CONTROLLER}: run 'npx tsc -p tsconfig.build.json' first`);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG);
  const client = new KubeClient(kc);
  const nodes = await kwokNodes(client);

  mkdirSync('.tailor/bench', { recursive: true });
  const logFile = `.tailor/bench/${ns}-controller.log`;
  await createNamespace(client, ns);

  const watched = new Informer<Pod>({
    name: 'bench-pods',
    client,
    path: `/api/v1/namespaces/${ns}/pods`,
    labelSelector: 'app=scale',
    logger: silentLogger(),
  });
  watched.start();
  await watched.waitForSync();
  let controller = startController(logFile);
  try {
    await until('controller /readyz', async () => (await fetch(`http://127.0.0.1:${HEALTH_PORT}/readyz`)).ok, 60_000);
    console.log(
      `${nodes.length} simulated nodes (kwok); controller pid ${controller.pid}, node flags "${controllerNodeFlags().join(' ')}", namespace ${ns}, log ${logFile}`,
    );

    // 1. create
    const created = await phase(
      controller,
      PODS,
      async () => void (await client.create(CS_PATH, tailor.cloneSet({ name: 'scale', replicas: PODS, tag: 'v1' }))),
      () => {
        const pods = live(watched.list());
        return pods.length === PODS && pods.every(ready);
      },
      `${PODS} pods Ready`,
    );
    report(`${PODS}-pod CloneSet created, until every pod is Ready`, created, false);

    // 2. in-place image rollout at maxUnavailable 10%
    const rolled = (pod: Pod): boolean =>
      pod.spec?.containers?.[0]?.image === image('v2') &&
      pod.status?.containerStatuses?.[0]?.image === image('v2') &&
      condition(pod, GATE) === 'True' &&
      ready(pod);
    // Where each pod's update spends its time, from the watch (the handler sees every pod change).
    const timeline = new Timeline('app', image('v2'));
    let following = true;
    watched.addHandler({ onUpdate: (_old, pod) => void (following && timeline.observe(pod, Date.now())) });
    const rollout = await phase(
      controller,
      PODS,
      async () =>
        void (await client.patch(
          `${CS_PATH}/scale`,
          { spec: { template: template('scale', 'v2', '10m', '16Mi') } },
          'merge',
        )),
      () => {
        const pods = live(watched.list());
        return pods.length === PODS && pods.every(rolled);
      },
      'image rollout',
    );
    const waveSize = Math.max(1, Math.floor(PODS * 0.1));
    const waves = Math.ceil(PODS / waveSize);
    following = false;
    report(`in-place image rollout of ${PODS} pods at maxUnavailable 10%`, rollout, true);
    console.log(`  per-pod timeline (from the watch): ${describeShare(timeline.share(), 'kwok')}`);
    console.log(`  per-wave timeline (waves of ${waveSize} pods in drain order, from the template edit):`);
    for (const line of describeWaves(timeline.waves(waveSize, rollout.startedAt))) console.log(`    ${line}`);
    console.log(
      `  simulated kubelets' floor: ${waves} waves x ${KWOK_RESTART_S[0]}–${KWOK_RESTART_S[1]} s restart = ${(waves * KWOK_RESTART_S[0]).toFixed(0)}–${(waves * KWOK_RESTART_S[1]).toFixed(0)} s`,
    );

    // 3. resize rollout
    const resized = (pod: Pod): boolean => {
      const actual = pod.status?.containerStatuses?.[0]?.resources?.limits;
      return actual?.['cpu'] === '20m' && actual?.['memory'] === '32Mi' && ready(pod);
    };
    const resize = await phase(
      controller,
      PODS,
      async () =>
        void (await client.patch(
          `${CS_PATH}/scale`,
          { spec: { template: template('scale', 'v2', '20m', '32Mi') } },
          'merge',
        )),
      () => {
        const pods = live(watched.list());
        return pods.length === PODS && pods.every(resized);
      },
      'resize rollout',
    );
    report(`resize rollout of ${PODS} pods (cpu 10m->20m, memory 16Mi->32Mi; restart not required)`, resize, true);
    await watched.stop();

    // 4. 10,000 pods cached: more pods, then a fresh controller start.
    await controller.stop();
    const extra = CACHED - PODS;
    const cloneSets = 1 + Math.ceil(Math.max(0, extra) / PARKED_PER_SET);
    const sample = live(watched.list())[0];
    if (extra > 0 && sample) {
      const t0 = Date.now();
      await parkPods(client, { side: tailor, ns, prefix: 'parked' }, sample, {
        count: extra,
        perSet: PARKED_PER_SET,
        nodes,
      });
      console.log(
        `${extra} more pods (9 paused CloneSets' worth, created by the bench) Running on kwok in ${seconds(Date.now() - t0)} s`,
      );
    }
    controller = startController(logFile);
    const started = controller.startedAt;
    let syncedAt = 0;
    let firstReconcileAt = 0;
    await until(
      'caches synced and a first reconcile',
      async () => {
        if (
          !syncedAt &&
          (await fetch(`http://127.0.0.1:${HEALTH_PORT}/readyz`)
            .then((r) => r.ok)
            .catch(() => false))
        )
          syncedAt = Date.now();
        if (!firstReconcileAt && reconciles(await metricsText().catch(() => '')) > 0) firstReconcileAt = Date.now();
        return syncedAt > 0 && firstReconcileAt > 0;
      },
      180_000,
      20,
    );
    const startHwm = usage(controller.pid).hwmKiB;
    // Settled: every CloneSet reconciled, queue empty, then a few seconds for garbage collection.
    await until(
      'every CloneSet reconciled',
      async () => {
        const text = await metricsText();
        const depth = samples(text, 'workqueue_depth').reduce((s, v) => s + v.value, 0);
        return reconciles(text) >= cloneSets && depth === 0;
      },
      120_000,
      250,
    );
    const settledAt = Date.now();
    await sleep(5000);
    const settled = usage(controller.pid);
    const parts = await memoryNow(controller.pid, METRICS_PORT);
    const cachedPods = CACHED > PODS ? CACHED : PODS;
    console.log(
      `controller start with ${cachedPods} pods: caches synced in ${seconds(syncedAt - started)} s, first reconcile after ${seconds(firstReconcileAt - started)} s (process start included); every CloneSet reconciled, queue empty after ${seconds(settledAt - started)} s`,
    );
    const rssMB = (settled.rssKiB * 1024) / 1e6;
    console.log(
      `controller RSS with ${cachedPods} pods cached: ${rssMB.toFixed(0)} MB (goal <= ${GOAL.cachedRssMB} MB: ${verdict(rssMB <= GOAL.cachedRssMB)}); peak during start ${((startHwm * 1024) / 1e6).toFixed(0)} MB`,
    );
    console.log(`  made of: ${describeMemory(parts, false)}`);
  } finally {
    await controller.stop();
    await watched.stop().catch(() => undefined);
    await deleteNamespace(client, ns, [CS_PATH]);
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error('scale bench failed:', err);
  process.exitCode = 1;
});
