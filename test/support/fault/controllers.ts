// `tailor controller` replicas as real processes (node dist/cli/main.js) for the fault tier and
// the leader-election integration test: started with leader election on a Lease in the test's
// namespace, their JSON logs kept, killed or stopped by signal on request, and all of them killed
// when the test file ends.
// Owns: the processes it spawns and the kubeconfig files it writes. Must not: touch the cluster.
import type * as k8s from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { isNotFound, type KubeClient } from '../../../src/runtime/kube-client.js';
import { kubeconfigPath } from '../cluster/kube.js';
import { eventually } from '../cluster/testbed.js';

export const FAULT_LEASE = 'tailor-controller';
/** Short leader-election timings so a takeover fits in a test; they nest as client-go requires. */
export const FAULT_TIMINGS = { leaseDuration: '6s', renewDeadline: '4s', retryPeriod: '1s' };

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ControllerProcess {
  identity: string;
  child: ChildProcess;
  /** 0 when metrics are off. */
  metricsPort: number;
  healthPort: number;
  /** Messages of the JSON log lines written so far. */
  messages: string[];
  exited: Promise<Exit>;
  exit: Exit | undefined;
}

const running: ControllerProcess[] = [];
const tempDirs: string[] = [];

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Writes `kc` (e.g. a fault proxy's) to a file a controller process can read. */
export function writeKubeconfig(kc: k8s.KubeConfig): string {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-fault-'));
  tempDirs.push(dir);
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, kc.exportConfig());
  return path;
}

export interface StartOptions {
  kubeconfig?: string;
  extraArgs?: string[];
  /** Leader-election timings: FAULT_TIMINGS unless 'default' (the CLI's own defaults). */
  timings?: typeof FAULT_TIMINGS | 'default';
  /** Serve /metrics on a free port. */
  metrics?: boolean;
  /** --shutdown-grace-period in ms; default 10 s. */
  graceMs?: number;
  /** Node flags before the script, e.g. the V8 sizes the shipped Deployment runs with. */
  nodeFlags?: string[];
}

/**
 * Starts one replica and waits until it serves /healthz. A port freePort gave may be taken before
 * the replica binds it (an API server's restart opens many local connections): a replica that
 * exits for a taken address is started again on fresh ports, twice at most.
 */
export async function startControllerProcess(
  identity: string,
  namespace: string,
  options: StartOptions = {},
): Promise<ControllerProcess> {
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(identity, namespace, options);
    if (!('stderr' in started)) return started;
    const message = `controller ${identity} exited ${JSON.stringify(started.exit)}: ${started.stderr}`;
    if (!started.stderr.includes('EADDRINUSE') || attempt === 3) throw new Error(message);
  }
}

/** One start: the replica once it serves /healthz, or how it exited before. */
async function startOnce(
  identity: string,
  namespace: string,
  options: StartOptions,
): Promise<ControllerProcess | { exit: Exit; stderr: string }> {
  const healthPort = await freePort();
  const metricsPort = options.metrics ? await freePort() : 0;
  const timings = options.timings ?? FAULT_TIMINGS;
  const timingArgs =
    timings === 'default'
      ? []
      : [
          '--lease-duration',
          timings.leaseDuration,
          '--renew-deadline',
          timings.renewDeadline,
          '--retry-period',
          timings.retryPeriod,
        ];
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeFlags ?? []),
      resolve(process.cwd(), 'dist/cli/main.js'),
      'controller',
      '--kubeconfig',
      options.kubeconfig ?? kubeconfigPath(),
      '--namespace',
      namespace,
      '--leader-elect',
      '--leader-election-namespace',
      namespace,
      '--leader-election-id',
      FAULT_LEASE,
      ...timingArgs,
      '--metrics-bind-address',
      options.metrics ? `127.0.0.1:${metricsPort}` : '0',
      '--health-probe-bind-address',
      `127.0.0.1:${healthPort}`,
      '--shutdown-grace-period',
      `${options.graceMs ?? 10_000}ms`,
      ...(options.extraArgs ?? []),
    ],
    { env: { ...process.env, POD_NAME: identity, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const proc: ControllerProcess = {
    identity,
    child,
    metricsPort,
    healthPort,
    messages: [],
    exit: undefined,
    exited: new Promise<Exit>((resolveExit) =>
      child.once('exit', (code, signal) => {
        proc.exit = { code, signal };
        resolveExit(proc.exit);
      }),
    ),
  };
  // Every line is kept on disk too, so a failed scenario's timeline can be read after the run.
  const logDir = resolve(process.cwd(), '.tailor/test-results/controller-logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${namespace}-${identity}.log`);
  createInterface({ input: child.stdout }).on('line', (line) => {
    appendFileSync(logFile, `${line}\n`);
    try {
      proc.messages.push(String((JSON.parse(line) as { msg?: unknown }).msg));
    } catch {
      proc.messages.push(line);
    }
  });
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => void stderr.push(line));
  running.push(proc);
  const exit = await eventually(
    `controller ${identity} to serve /healthz`,
    async () => {
      if (proc.exit) return proc.exit;
      return (await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status === 200 ? null : undefined;
    },
    30_000,
  );
  if (exit === null) return proc;
  // 'exit' may come before the last of stderr: 'close' comes after it.
  if (child.stderr.readable) await new Promise((r) => child.once('close', r));
  return { exit, stderr: stderr.join('\n') };
}

/** Counts killAllControllers calls: a replica killed by one is not restarted. */
let killings = 0;

/**
 * What a Deployment's kubelet does with a replica that exits with a failure (one that lost the
 * Lease stops, to be restarted): starts it again once, as `<identity>-restarted`, a second after.
 * Resolves to the new process, or undefined when the replica exited cleanly or the replicas were
 * killed meanwhile (a restart that lands after the kill is killed at once).
 */
export async function restartedOnFailure(
  proc: ControllerProcess,
  start: (identity: string) => Promise<ControllerProcess>,
): Promise<ControllerProcess | undefined> {
  const before = killings;
  const exit = await proc.exited;
  if (exit.code === 0 || killings !== before) return undefined;
  await new Promise((r) => setTimeout(r, 1_000));
  if (killings !== before) return undefined;
  const restarted = await start(`${proc.identity}-restarted`);
  if (killings === before) return restarted;
  restarted.child.kill('SIGKILL');
  await restarted.exited;
  return undefined;
}

/** Kills every replica still running and removes the kubeconfig files; for afterAll. */
export async function killAllControllers(): Promise<void> {
  killings += 1;
  const all = running.splice(0);
  for (const p of all) if (p.exit === undefined) p.child.kill('SIGKILL');
  await Promise.all(all.map((p) => p.exited));
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The Lease's holder: a name, '' when released, undefined when there is no Lease yet. */
export async function leaseHolder(
  client: KubeClient,
  namespace: string,
  lease = FAULT_LEASE,
): Promise<string | undefined> {
  try {
    const got = await client.get<{ spec?: { holderIdentity?: string } }>(
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${lease}`,
    );
    return got.spec?.holderIdentity ?? '';
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Two replicas a and b; resolves once one of them holds the Lease, as [leader, follower]. */
export async function electedPair(
  client: KubeClient,
  start: (identity: string) => Promise<ControllerProcess>,
  namespace: string,
): Promise<[ControllerProcess, ControllerProcess]> {
  const a = await start('replica-a');
  const b = await start('replica-b');
  const holder = await eventually(
    'one replica to hold the Lease',
    async () => {
      const h = await leaseHolder(client, namespace);
      return h === a.identity || h === b.identity ? h : undefined;
    },
    30_000,
  );
  return holder === a.identity ? [a, b] : [b, a];
}
