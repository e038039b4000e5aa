// What the benchmarks on simulated nodes (scale, peer) share, and the small helpers every benchmark
// uses (waiting, verdicts, the bench label): a controller run as a child process
// and read from /proc (RSS, its peak, CPU), its Prometheus text (writes from
// rest_client_requests_total), waiting on pods, the pod template both controllers roll out, and the
// namespace each run owns (created, then emptied and deleted), and what a controller's memory is made
// of during a phase (MemorySampler).
// Owns nothing by itself: every process and namespace belongs to the benchmark that asked for it.
// Must not: start or stop the cluster or kwok, or print verdicts (each benchmark has its own goals).
import { spawn, type ChildProcess } from 'node:child_process';
import yaml from 'js-yaml';
import PQueue from 'p-queue';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { isAlreadyExists, type KubeClient } from '../src/runtime/kube-client.js';
import type { Node, Pod } from '../src/api/wire.js';

/**
 * Labels of every CloneSet a benchmark creates (also those on the real kubelet). The test bed often
 * runs `make dev`'s in-cluster Tailor, which acts on every CloneSet but those labelled
 * tailor.dev/test (hack/dev-values.yaml); without the label two controllers would update the bench's pods.
 */
export const BENCH_CLONESET_LABELS = { 'tailor.dev/test': 'true' } as const;

export const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const seconds = (ms: number): string => (ms / 1000).toFixed(1);

// ---------------------------------------------------------------- a controller as a process

export interface Usage {
  rssKiB: number;
  hwmKiB: number;
  cpuMs: number;
}

const CLK_TCK = 100; // sysconf(_SC_CLK_TCK) on Linux x86-64

export function usage(pid: number): Usage {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  // Fields after the command name (which may contain spaces) start at field 3 (state).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(rest[11]) + Number(rest[12]); // utime (14) + stime (15)
  return { rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM'), cpuMs: (ticks * 1000) / CLK_TCK };
}

/** Resets VmHWM to the current RSS, so the next reading is the peak of the phase that follows. */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** A controller binary (Tailor's node process or a peer's) with its output appended to a log file. */
export class BenchProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly startedAt: number,
  ) {}

  static start(command: string, args: readonly string[], logFile: string, env?: NodeJS.ProcessEnv): BenchProcess {
    const log = openSync(logFile, 'a');
    const child = spawn(command, args, { stdio: ['ignore', log, log], env: env ?? process.env });
    closeSync(log);
    return new BenchProcess(child, Date.now());
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('controller did not start');
    return this.child.pid;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 35_000);
    await exited;
    clearTimeout(timer);
  }
}

export interface TailorProcessOptions {
  controllerJs: string;
  kubeconfig: string;
  namespace: string;
  metricsPort: number;
  healthPort: number;
  logFile: string;
  /** Leader election on a Lease in this namespace; unset, none (one controller per run). */
  leaderElectionNamespace?: string;
}

interface Deployment {
  spec?: { template?: { spec?: { containers?: { name?: string; command?: string[] }[] } } };
}

/**
 * The node flags the controller runs with: those of the Deployment's command
 * (config/manager/deployment.yaml), so the bench measures the heap sizing that ships;
 * BENCH_CONTROLLER_NODE_FLAGS (space-separated) overrides them (set and empty: V8's defaults).
 */
export function controllerNodeFlags(): string[] {
  const override = process.env.BENCH_CONTROLLER_NODE_FLAGS;
  if (override !== undefined) return override.split(/\s+/).filter(Boolean);
  const deployment = yaml.load(readFileSync('config/manager/deployment.yaml', 'utf8')) as Deployment;
  const container = deployment.spec?.template?.spec?.containers?.find((c) => c.name === 'controller');
  return (container?.command ?? []).filter((arg) => arg.startsWith('--'));
}

/** Tailor's controller (`node dist/cli/main.js controller`) scoped to one namespace, logging warnings only. */
export function startTailor(o: TailorProcessOptions): BenchProcess {
  const args = ['controller', '--kubeconfig', o.kubeconfig, '--namespace', o.namespace, '--log-level', 'warn'];
  args.push(
    '--metrics-bind-address',
    `127.0.0.1:${o.metricsPort}`,
    '--health-probe-bind-address',
    `127.0.0.1:${o.healthPort}`,
  );
  if (o.leaderElectionNamespace) args.push('--leader-elect', '--leader-election-namespace', o.leaderElectionNamespace);
  return BenchProcess.start(process.execPath, [...controllerNodeFlags(), o.controllerJs, ...args], o.logFile);
}

// ---------------------------------------------------------------- Prometheus text

export async function metricsText(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
  return res.text();
}

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

export function samples(text: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1] ?? ''] = l[2] ?? '';
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Every write the process sent (rest_client_requests_total, POST/PUT/PATCH/DELETE, events included). */
export const writes = (text: string): number =>
  samples(text, 'rest_client_requests_total')
    .filter((s) => WRITE_METHODS.has(s.labels['method'] ?? ''))
    .reduce((sum, s) => sum + s.value, 0);

/** The writes by "METHOD code" (e.g. "PATCH 409"), for saying which writes a phase's count is made of. */
export const writesByKind = (text: string): Map<string, number> => {
  const out = new Map<string, number>();
  for (const s of samples(text, 'rest_client_requests_total')) {
    const method = s.labels['method'] ?? '';
    if (!WRITE_METHODS.has(method)) continue;
    const kind = `${method} ${s.labels['code'] ?? '?'}`;
    out.set(kind, (out.get(kind) ?? 0) + s.value);
  }
  return out;
};

/** "PATCH 200 2.00, POST 201 0.40": each kind of write between two /metrics texts, per pod. */
export const writeKindsPerPod = (before: string, after: string, pods: number): string =>
  [...writesByKind(after)]
    .map(([kind, n]): [string, number] => [kind, (n - (writesByKind(before).get(kind) ?? 0)) / pods])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `${kind} ${n.toFixed(2)}`)
    .join(', ');

// ---------------------------------------------------------------- reconcile time

/** The CloneSet controller's label: Tailor's `cloneset`, kruise-manager's `cloneset-controller` (or none). */
export const isCloneSetController = (label: string | undefined): boolean =>
  label === undefined || label === 'cloneset' || label === 'cloneset-controller';

/** Reconciles the CloneSet controller has finished (controller_runtime_reconcile_total). */
export const reconciles = (text: string): number =>
  samples(text, 'controller_runtime_reconcile_total')
    .filter((s) => isCloneSetController(s.labels['controller']))
    .reduce((sum, s) => sum + s.value, 0);

/** Cumulative bucket counts of the cloneset controller's reconcile-time histogram, by upper bound. */
export function reconcileBuckets(text: string): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const s of samples(text, 'controller_runtime_reconcile_time_seconds_bucket')) {
    if (!isCloneSetController(s.labels['controller'])) continue;
    const le = s.labels['le'] === '+Inf' ? Infinity : Number(s.labels['le']);
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  return buckets;
}

/** The q-quantile of the observations between two bucket snapshots, in seconds (histogram_quantile). */
export function quantile(
  q: number,
  before: Map<number, number>,
  after: Map<number, number>,
): { value: number; count: number } {
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

// ---------------------------------------------------------------- what the memory is made of

/**
 * The peak of each part of a controller's memory over a phase, in MiB. RSS and VmHWM come from
 * /proc/<pid>/status for either controller, so they compare as they are. The heap figures are each
 * runtime's own and do not: Tailor's are V8's (heap used and reserved, external = buffers outside
 * the heap, code space); kruise-manager's are Go's (heap_alloc, heap_sys; no external or code space).
 */
export interface MemoryPeaks {
  rssMiB: number;
  hwmMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  codeMiB: number;
  samples: number;
}

const MiB = 1024 * 1024;
const first = (text: string, name: string, labels: Record<string, string> = {}): number =>
  samples(text, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? NaN;

/** One reading of the heap figures from a /metrics text (Node's names, else Go's), in MiB. */
function heapOf(text: string): Pick<MemoryPeaks, 'heapUsedMiB' | 'heapTotalMiB' | 'externalMiB' | 'codeMiB'> {
  const node = first(text, 'nodejs_heap_size_used_bytes');
  if (!Number.isNaN(node))
    return {
      heapUsedMiB: node / MiB,
      heapTotalMiB: first(text, 'nodejs_heap_size_total_bytes') / MiB,
      externalMiB: first(text, 'nodejs_external_memory_bytes') / MiB,
      codeMiB: first(text, 'nodejs_heap_space_size_used_bytes', { space: 'code' }) / MiB,
    };
  return {
    heapUsedMiB: first(text, 'go_memstats_heap_alloc_bytes') / MiB,
    heapTotalMiB: first(text, 'go_memstats_heap_sys_bytes') / MiB,
    externalMiB: NaN,
    codeMiB: NaN,
  };
}

/**
 * Reads a controller's /proc status and /metrics every `everyMs` from start() to stop() and keeps
 * the peak of each part (the parts need not peak together). VmHWM is reset at start(), so it is
 * the phase's own peak, sampled or not.
 */
export class MemorySampler {
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  private peaks: MemoryPeaks = {
    rssMiB: 0,
    hwmMiB: 0,
    heapUsedMiB: 0,
    heapTotalMiB: 0,
    externalMiB: 0,
    codeMiB: 0,
    samples: 0,
  };

  constructor(
    private readonly pid: number,
    private readonly metricsPort: number,
    private readonly everyMs = 1000,
  ) {}

  start(): void {
    resetPeak(this.pid);
    this.timer = setInterval(() => {
      this.reading ??= this.read().finally(() => (this.reading = undefined));
    }, this.everyMs);
  }

  async stop(): Promise<MemoryPeaks> {
    clearInterval(this.timer);
    await this.reading;
    await this.read();
    return { ...this.peaks };
  }

  private async read(): Promise<void> {
    const heap = await metricsText(this.metricsPort)
      .then(heapOf)
      .catch(() => undefined);
    const u = usage(this.pid);
    const p = this.peaks;
    const max = (a: number, b: number): number => (Number.isNaN(b) ? a : Math.max(a, b));
    this.peaks = {
      rssMiB: max(p.rssMiB, u.rssKiB / 1024),
      hwmMiB: max(p.hwmMiB, u.hwmKiB / 1024),
      heapUsedMiB: max(p.heapUsedMiB, heap?.heapUsedMiB ?? NaN),
      heapTotalMiB: max(p.heapTotalMiB, heap?.heapTotalMiB ?? NaN),
      externalMiB: max(p.externalMiB, heap?.externalMiB ?? NaN),
      codeMiB: max(p.codeMiB, heap?.codeMiB ?? NaN),
      samples: p.samples + 1,
    };
  }
}

/** One reading now (no peak): the parts of a settled controller's memory. */
export async function memoryNow(pid: number, metricsPort: number): Promise<MemoryPeaks> {
  const heap = heapOf(await metricsText(metricsPort));
  const u = usage(pid);
  return { rssMiB: u.rssKiB / 1024, hwmMiB: u.hwmKiB / 1024, ...heap, samples: 1 };
}

/** "RSS 150, VmHWM 160, heap used 60 of 90, external 3, code space 2 (MiB)"; a part a runtime lacks is left out. */
export function describeMemory(m: MemoryPeaks, peaks: boolean): string {
  const n = (v: number): string => v.toFixed(0);
  const parts = [`${peaks ? 'peak ' : ''}RSS ${n(m.rssMiB)}`, `VmHWM ${n(m.hwmMiB)}`];
  if (!Number.isNaN(m.heapUsedMiB) && m.samples > 0)
    parts.push(`heap used ${n(m.heapUsedMiB)} of ${n(m.heapTotalMiB)}`);
  if (!Number.isNaN(m.externalMiB) && m.externalMiB > 0) parts.push(`external ${n(m.externalMiB)}`);
  if (!Number.isNaN(m.codeMiB) && m.codeMiB > 0) parts.push(`code space ${m.codeMiB.toFixed(1)}`);
  return `${parts.join(', ')} (MiB${peaks ? `, peaks of ${m.samples} samples, each part's own` : ''})`;
}

// ---------------------------------------------------------------- waiting on pods

export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve(check()).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

export const condition = (pod: Pod, type: string): string | undefined =>
  pod.status?.conditions?.find((c) => c.type === type)?.status;
export const ready = (pod: Pod): boolean => condition(pod, 'Ready') === 'True';
export const live = (pods: Pod[]): Pod[] => pods.filter((p) => !p.metadata?.deletionTimestamp);

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  await new PQueue({ concurrency: limit }).addAll(items.map((item) => () => fn(item)));
}

// ---------------------------------------------------------------- the workload

export const image = (tag: string): string => `tailor.local/busybox:${tag}`;
const resources = (cpu: string, memory: string): Record<string, unknown> => ({
  requests: { cpu, memory },
  limits: { cpu, memory },
});

/** A pod template for kwok's nodes: schedulerName tailor-kwok, nodeSelector type=kwok, its taint tolerated. */
export function template(app: string, tag: string, cpu: string, memory: string): Record<string, unknown> {
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

// ---------------------------------------------------------------- nodes and namespaces

/** The Ready kwok nodes (label type=kwok); throws when there are none. */
export async function kwokNodes(client: KubeClient): Promise<string[]> {
  const nodes = (await client.list<Node>('/api/v1/nodes', { labelSelector: 'type=kwok' })).items
    .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((n) => n.metadata?.name ?? '');
  if (nodes.length === 0) throw new Error("no Ready kwok nodes (label type=kwok): run 'hack/kwok/kwok.sh up' first");
  return nodes;
}

export async function createNamespace(client: KubeClient, ns: string): Promise<void> {
  await client.create('/api/v1/namespaces', { metadata: { name: ns } });
  // Pods need the default ServiceAccount; a control-plane-only test bed has no controller creating it.
  await client
    .create(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'default' } })
    .catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
}

/**
 * Deletes a namespace a benchmark owns, with its controller already stopped: the owners first (no
 * controller is running to recreate pods), then the pods at once (in parallel: the API server's
 * deletecollection removes them one by one), then the namespace.
 */
export async function deleteNamespace(
  client: KubeClient,
  ns: string,
  ownerCollections: readonly string[],
): Promise<void> {
  const path = `/api/v1/namespaces/${ns}`;
  for (const owners of ownerCollections) await client.json('DELETE', owners).catch(() => undefined);
  await client.json('DELETE', `/apis/apps/v1/namespaces/${ns}/controllerrevisions`).catch(() => undefined);
  const names = (await client.list<Pod>(`${path}/pods`).catch(() => ({ items: [] as Pod[] }))).items.map(
    (p) => p.metadata?.name ?? '',
  );
  await pool(
    names,
    32,
    async (name) =>
      void (await client.delete(`${path}/pods/${name}`, { gracePeriodSeconds: 0 }).catch(() => undefined)),
  );
  await until(
    'bench pods gone',
    async () => (await client.list<Pod>(`${path}/pods`, { limit: 1 })).items.length === 0,
    120_000,
    1000,
  ).catch(() => console.error(`bench: pods left in ${ns}`));
  await client.delete(path).catch(() => undefined);
}
