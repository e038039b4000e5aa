// Scale benchmark on simulated nodes (issue 16, DESIGN.md §6), all figures from one run:
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
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readFileSync, writeFileSync, mkdirSync, closeSync } from 'node:fs';
import { Informer } from '../src/runtime/informer.js';
import { KubeClient, isAlreadyExists, type Pod } from '../src/runtime/kube-client.js';
import { silentLogger } from '../src/runtime/logger.js';

const PODS = Number(process.env.BENCH_SCALE_PODS ?? 1000);
const CACHED = Number(process.env.BENCH_CACHED_PODS ?? 10_000);
const KUBECONFIG = process.env.TAILOR_KUBECONFIG ?? '.tailor/cluster/kubeconfig';
const CONTROLLER = process.env.TAILOR_CONTROLLER_JS ?? 'dist/cli/main.js';
const METRICS_PORT = 18480;
const HEALTH_PORT = 18481;
const ns = `bench-scale-${Date.now().toString(36)}`;
const GATE = 'apps.tailor.dev/InPlaceUpdateReady';
const CS_PATH = `/apis/apps.tailor.dev/v1alpha1/namespaces/${ns}/clonesets`;
// Simulated kubelet timings, from hack/kwok/stages-pod.yaml: a container restart takes 1.0–1.5 s.
const KWOK_RESTART_S = [1.0, 1.5] as const;

// The issue's goals (issue 16 table; DESIGN.md §6).
const GOAL = {
  rolloutS: 20,
  writesPerPod: 3.5,
  peakRssMiB: 120,
  cpuMsPerPod: 5,
  reconcileP99Ms: 20,
  cachedRssMB: 150,
};

const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number): string => (ms / 1000).toFixed(1);

// ---------------------------------------------------------------- the controller process

interface Usage {
  rssKiB: number;
  hwmKiB: number;
  cpuMs: number;
}

const CLK_TCK = 100; // sysconf(_SC_CLK_TCK) on Linux x86-64

function usage(pid: number): Usage {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  // Fields after the command name (which may contain spaces) start at field 3 (state).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(rest[11]) + Number(rest[12]); // utime (14) + stime (15)
  return { rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM'), cpuMs: (ticks * 1000) / CLK_TCK };
}

/** Resets VmHWM to the current RSS, so the next reading is the peak of the phase that follows. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

class ControllerProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly startedAt: number,
  ) {}

  static start(logFile: string): ControllerProcess {
    const log = openSync(logFile, 'a');
    const child = spawn(
      process.execPath,
      [
        CONTROLLER,
        'controller',
        '--kubeconfig',
        KUBECONFIG,
        '--namespace',
        ns,
        '--metrics-bind-address',
        `127.0.0.1:${METRICS_PORT}`,
        '--health-probe-bind-address',
        `127.0.0.1:${HEALTH_PORT}`,
        '--log-level',
        'warn',
      ],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    return new ControllerProcess(child, Date.now());
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('controller did not start');
    return this.child.pid;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 35_000);
    await exited;
    clearTimeout(timer);
  }
}

async function metricsText(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`);
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
  return res.text();
}

interface Sample {
  labels: Record<string, string>;
  value: number;
}

function samples(text: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] ?? ''] = l[2] ?? '';
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const writes = (text: string): number =>
  samples(text, 'rest_client_requests_total')
    .filter((s) => WRITE_METHODS.has(s.labels['method'] ?? ''))
    .reduce((sum, s) => sum + s.value, 0);
const reconciles = (text: string): number => samples(text, 'controller_runtime_reconcile_total').reduce((sum, s) => sum + s.value, 0);

/** Cumulative bucket counts of the cloneset controller's reconcile-time histogram, by upper bound. */
function reconcileBuckets(text: string): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const s of samples(text, 'controller_runtime_reconcile_time_seconds_bucket')) {
    if (s.labels['controller'] !== undefined && s.labels['controller'] !== 'cloneset') continue;
    const le = s.labels['le'] === '+Inf' ? Infinity : Number(s.labels['le']);
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  return buckets;
}

/** The q-quantile of the observations between two bucket snapshots, in seconds (histogram_quantile). */
function quantile(q: number, before: Map<number, number>, after: Map<number, number>): { value: number; count: number } {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const cum = bounds.map((le) => (after.get(le) ?? 0) - (before.get(le) ?? 0));
  const total = cum[cum.length - 1] ?? 0;
  if (total === 0) return { value: NaN, count: 0 };
  const rank = q * total;
  for (let i = 0; i < bounds.length; i++) {
    if ((cum[i] ?? 0) >= rank) {
      const hi = bounds[i] ?? Infinity;
      const lo = i === 0 ? 0 : (bounds[i - 1] ?? 0);
      if (hi === Infinity) return { value: lo, count: total };
      const below = i === 0 ? 0 : (cum[i - 1] ?? 0);
      const inBucket = (cum[i] ?? 0) - below;
      return { value: lo + (hi - lo) * (inBucket === 0 ? 1 : (rank - below) / inBucket), count: total };
    }
  }
  return { value: NaN, count: total };
}

// ---------------------------------------------------------------- waiting on pods

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve(check()).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

const condition = (pod: Pod, type: string): string | undefined => pod.status?.conditions?.find((c) => c.type === type)?.status;
const ready = (pod: Pod): boolean => condition(pod, 'Ready') === 'True';
const live = (pods: Pod[]): Pod[] => pods.filter((p) => !p.metadata?.deletionTimestamp);

// ---------------------------------------------------------------- the workload

const image = (tag: string): string => `tailor.local/busybox:${tag}`;
const resources = (cpu: string, memory: string): Record<string, unknown> => ({ requests: { cpu, memory }, limits: { cpu, memory } });

function template(app: string, tag: string, cpu: string, memory: string): Record<string, unknown> {
  return {
    metadata: { labels: { app } },
    spec: {
      schedulerName: 'tailor-kwok',
      nodeSelector: { type: 'kwok' },
      tolerations: [{ key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' }],
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'app',
          image: image(tag),
          imagePullPolicy: 'IfNotPresent',
          resources: resources(cpu, memory),
          resizePolicy: [
            { resourceName: 'cpu', restartPolicy: 'NotRequired' },
            { resourceName: 'memory', restartPolicy: 'NotRequired' },
          ],
        },
      ],
    },
  };
}

function cloneSet(name: string, replicas: number, paused: boolean): Record<string, unknown> {
  return {
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'CloneSet',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '10%', paused },
      template: template(name, 'v1', '10m', '16Mi'),
    },
  };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

// ---------------------------------------------------------------- phases

interface PhaseResult {
  ms: number;
  writesPerPod: number;
  peakRssMiB: number;
  cpuMsPerPod: number;
  p99Ms: number;
  reconciles: number;
}

async function phase(
  controller: ControllerProcess,
  pods: number,
  act: () => Promise<void>,
  done: () => boolean,
  what: string,
): Promise<PhaseResult> {
  await sleep(1000); // let the previous phase's status writes settle
  const before = await metricsText();
  resetPeak(controller.pid);
  const u0 = usage(controller.pid);
  const t0 = Date.now();
  await act();
  await until(what, done, 600_000);
  const ms = Date.now() - t0;
  await sleep(1000); // writes that trail the last pod (final status) belong to the rollout
  const after = await metricsText();
  const u1 = usage(controller.pid);
  const p99 = quantile(0.99, reconcileBuckets(before), reconcileBuckets(after));
  return {
    ms,
    writesPerPod: (writes(after) - writes(before)) / pods,
    peakRssMiB: u1.hwmKiB / 1024,
    cpuMsPerPod: (u1.cpuMs - u0.cpuMs) / pods,
    p99Ms: p99.value * 1000,
    reconciles: p99.count,
  };
}

function report(name: string, r: PhaseResult, rolloutGoal: boolean): void {
  console.log(`${name}: ${seconds(r.ms)} s${rolloutGoal ? ` (goal <= ${GOAL.rolloutS} s: ${verdict(r.ms <= GOAL.rolloutS * 1000)})` : ''}`);
  console.log(
    `  API writes per pod (controller's rest_client_requests_total): ${r.writesPerPod.toFixed(2)} (goal <= ${GOAL.writesPerPod}: ${verdict(r.writesPerPod <= GOAL.writesPerPod)})`,
  );
  console.log(
    `  controller peak RSS: ${r.peakRssMiB.toFixed(0)} MiB (goal <= ${GOAL.peakRssMiB} MiB: ${verdict(r.peakRssMiB <= GOAL.peakRssMiB)})`,
  );
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
  const nodes = (await client.list<k8s.V1Node>('/api/v1/nodes', { labelSelector: 'type=kwok' })).items
    .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((n) => n.metadata?.name ?? '');
  if (nodes.length === 0) throw new Error("no Ready kwok nodes (label type=kwok): run 'hack/kwok/kwok.sh up' first");

  mkdirSync('.tailor/bench', { recursive: true });
  const logFile = `.tailor/bench/${ns}-controller.log`;
  await client.create('/api/v1/namespaces', { metadata: { name: ns } });
  // Pods need the default ServiceAccount; a control-plane-only test bed has no controller creating it.
  await client.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'default' } }).catch((err: unknown) => {
    if (!isAlreadyExists(err)) throw err;
  });

  const watched = new Informer<Pod>({
    name: 'bench-pods',
    client,
    path: `/api/v1/namespaces/${ns}/pods`,
    labelSelector: 'app=scale',
    logger: silentLogger(),
  });
  watched.start();
  await watched.waitForSync();
  let controller = ControllerProcess.start(logFile);
  try {
    await until('controller /readyz', async () => (await fetch(`http://127.0.0.1:${HEALTH_PORT}/readyz`)).ok, 60_000);
    console.log(`${nodes.length} simulated nodes (kwok); controller pid ${controller.pid}, namespace ${ns}, log ${logFile}`);

    // 1. create
    const created = await phase(
      controller,
      PODS,
      async () => void (await client.create(CS_PATH, cloneSet('scale', PODS, false))),
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
    const rollout = await phase(
      controller,
      PODS,
      async () => void (await client.patch(`${CS_PATH}/scale`, { spec: { template: template('scale', 'v2', '10m', '16Mi') } }, 'merge')),
      () => {
        const pods = live(watched.list());
        return pods.length === PODS && pods.every(rolled);
      },
      'image rollout',
    );
    const waves = Math.ceil(PODS / Math.max(1, Math.floor(PODS * 0.1)));
    report(`in-place image rollout of ${PODS} pods at maxUnavailable 10%`, rollout, true);
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
      async () => void (await client.patch(`${CS_PATH}/scale`, { spec: { template: template('scale', 'v2', '20m', '32Mi') } }, 'merge')),
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
    const sample = live(watched.list())[0];
    if (extra > 0 && sample) {
      const t0 = Date.now();
      await addParkedPods(client, sample, extra, nodes);
      console.log(`${extra} more pods (9 paused CloneSets' worth, created by the bench) Running on kwok in ${seconds(Date.now() - t0)} s`);
    }
    controller = ControllerProcess.start(logFile);
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
        return reconciles(text) >= 10 && depth === 0;
      },
      120_000,
      250,
    );
    const settledAt = Date.now();
    await sleep(5000);
    const settled = usage(controller.pid);
    const cachedPods = CACHED > PODS ? CACHED : PODS;
    console.log(
      `controller start with ${cachedPods} pods: caches synced in ${seconds(syncedAt - started)} s, first reconcile after ${seconds(firstReconcileAt - started)} s (process start included); every CloneSet reconciled, queue empty after ${seconds(settledAt - started)} s`,
    );
    const rssMB = (settled.rssKiB * 1024) / 1e6;
    console.log(
      `controller RSS with ${cachedPods} pods cached: ${rssMB.toFixed(0)} MB (goal <= ${GOAL.cachedRssMB} MB: ${verdict(rssMB <= GOAL.cachedRssMB)}); peak during start ${((startHwm * 1024) / 1e6).toFixed(0)} MB`,
    );
  } finally {
    await controller.stop();
    await watched.stop().catch(() => undefined);
    await cleanup(client);
    client.close();
  }
}

/**
 * `count` pods shaped like `sample` (a pod Tailor created), owned by paused CloneSets of 1,000
 * replicas each, bound round-robin to the kwok nodes; waits until kwok reports them all Running.
 */
async function addParkedPods(client: KubeClient, sample: Pod, count: number, nodes: string[]): Promise<void> {
  const perSet = 1000;
  const sets = Math.ceil(count / perSet);
  const owners: { name: string; uid: string }[] = [];
  for (let i = 0; i < sets; i++) {
    const name = `parked-${i}`;
    const replicas = Math.min(perSet, count - i * perSet);
    const cs = await client.create<k8s.KubernetesObject>(CS_PATH, cloneSet(name, replicas, true));
    owners.push({ name, uid: cs.metadata?.uid ?? '' });
  }
  const base = structuredClone(sample);
  const jobs = Array.from({ length: count }, (_, i) => i);
  await pool(jobs, 24, async (i) => {
    const owner = owners[Math.floor(i / perSet)] ?? owners[0];
    if (!owner) return;
    const name = `${owner.name}-${i.toString(36).padStart(5, '0')}`;
    const labels = { ...(base.metadata?.labels ?? {}), app: owner.name, 'apps.tailor.dev/instance-id': name };
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: ns,
        labels,
        annotations: base.metadata?.annotations ?? {},
        ownerReferences: [
          {
            apiVersion: 'apps.tailor.dev/v1alpha1',
            kind: 'CloneSet',
            name: owner.name,
            uid: owner.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      // Without the readiness gate: kwok makes them Ready in one write, and the controller has no
      // InPlaceUpdateReady condition to add (as on pods it settled long ago, minus one entry).
      spec: { ...(base.spec ?? { containers: [] }), readinessGates: undefined, nodeName: nodes[i % nodes.length] ?? '' },
    };
    await client.create(`/api/v1/namespaces/${ns}/pods`, pod);
  });
  await until(
    `${count} parked pods Running`,
    async () => {
      const pending = await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`, { fieldSelector: 'status.phase!=Running', limit: 1 });
      return pending.items.length === 0;
    },
    600_000,
    1000,
  );
}

async function cleanup(client: KubeClient): Promise<void> {
  const path = `/api/v1/namespaces/${ns}`;
  // Owners first (no controller is running to recreate pods), then the pods at once (in parallel:
  // the API server's deletecollection removes them one by one), then the namespace.
  await client.json('DELETE', CS_PATH).catch(() => undefined);
  await client.json('DELETE', `/apis/apps/v1/namespaces/${ns}/controllerrevisions`).catch(() => undefined);
  const names = (await client.list<Pod>(`${path}/pods`).catch(() => ({ items: [] as Pod[] }))).items.map((p) => p.metadata?.name ?? '');
  await pool(
    names,
    32,
    async (name) => void (await client.delete(`${path}/pods/${name}`, { gracePeriodSeconds: 0 }).catch(() => undefined)),
  );
  await until(
    'bench pods gone',
    async () => (await client.list<Pod>(`${path}/pods`, { limit: 1 })).items.length === 0,
    120_000,
    1000,
  ).catch(() => console.error(`bench: pods left in ${ns}`));
  await client.delete(path).catch(() => undefined);
}

main().catch((err: unknown) => {
  console.error('scale bench failed:', err);
  process.exitCode = 1;
});
