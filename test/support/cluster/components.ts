// Test-side control of the test bed's component processes (etcd, kube-apiserver, and a node's
// containerd and kubelet), so integration and fault tests can take one away and bring it back while the rest of
// the cluster keeps running: freeze (SIGSTOP/SIGCONT), stop, and start again — the API server
// through hack/cluster.sh, the others with the very command line, environment and log file they
// ran with (no second `cluster.sh up` racing for the API server's port).
// Owns: the processes named in .tailor/cluster/pids, one at a time. Must not: stop more than the
// one component asked for, leave a frozen process behind, or take the whole cluster down (other
// tests share it).
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { KubeClient } from '../../../src/runtime/kube-client.js';
import { loadTestKubeConfig } from './kube.js';
import { CLUSTER_DIR, LOG_DIR, REPO, pidFile as pidFileOf } from './bed.js';

const run = promisify(execFile);
/** A node's components run one per node (hack/bed/node.sh): containerd-<node>, kubelet-<node>. */
const processName = (component: Component, node: string): string =>
  component === 'containerd' || component === 'kubelet' ? `${component}-${node}` : component;
const pidFile = pidFileOf('kube-apiserver');
const modeFile = resolve(CLUSTER_DIR, 'mode');

export type Component = 'etcd' | 'kube-apiserver' | 'containerd' | 'kubelet';
/** The node whose containerd or kubelet a call means, unless it names one: the first. */
const FIRST_NODE = 'tailor-node';

/** The mode the test bed was brought up in: what `cluster.sh up` must restore. */
export function clusterMode(): 'control-plane' | 'full' {
  const mode = existsSync(modeFile) ? readFileSync(modeFile, 'utf8').trim() : '';
  return mode === 'full' ? 'full' : 'control-plane';
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers kill(0) until its parent reaps it; it is gone for our purposes.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function pidOf(name: string): number {
  const pid = Number(readFileSync(pidFileOf(name), 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 1 || !alive(pid))
    throw new Error(`${name} (pid file ${pidFileOf(name)}) is not running`);
  return pid;
}

async function exitOf(pid: number, killAfterMs: number): Promise<void> {
  const deadline = Date.now() + killAfterMs;
  while (alive(pid)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // exited meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const heldThaws = new Set<() => void>();

/**
 * SIGSTOPs `component` until `thaw()` (SIGCONT) is called; thawAll() in an afterEach continues
 * whatever a failed test left held (an 'exit' hook would not run: Jest sandboxes `process`).
 */
export function holdComponent(component: Component, node = FIRST_NODE): { stoppedAt: number; thaw(): void } {
  const pid = pidOf(processName(component, node));
  const thaw = (): void => {
    heldThaws.delete(thaw);
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone (killed while held)
    }
  };
  heldThaws.add(thaw);
  process.kill(pid, 'SIGSTOP');
  return { stoppedAt: Date.now(), thaw };
}

/** Continues every component still held. */
export function thawAll(): void {
  for (const thaw of [...heldThaws]) thaw();
}

/** SIGSTOPs `component` for `ms`, then SIGCONTs it; resolves with when it was stopped and continued. */
export async function freezeComponent(
  component: Component,
  ms: number,
): Promise<{ stoppedAt: number; continuedAt: number }> {
  const { stoppedAt, thaw } = holdComponent(component, FIRST_NODE);
  try {
    await new Promise((r) => setTimeout(r, ms));
  } finally {
    thaw();
  }
  return { stoppedAt, continuedAt: Date.now() };
}

/** How a component was started, read from /proc before it is stopped. */
interface Launch {
  argv: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

function launchOf(pid: number): Launch {
  // NUL-terminated entries; an empty argument (etcd's --listen-metrics-urls "") must survive.
  const split = (file: string): string[] => readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0').slice(0, -1);
  const env: NodeJS.ProcessEnv = {};
  for (const entry of split('environ')) {
    const i = entry.indexOf('=');
    if (i > 0) env[entry.slice(0, i)] = entry.slice(i + 1);
  }
  return { argv: split('cmdline'), env, cwd: readlinkSync(`/proc/${pid}/cwd`) };
}

export interface Outage {
  /** When the old process was gone. */
  stoppedAt: number;
  /** When the new process was started (not yet necessarily serving). */
  startedAt: number;
}

/**
 * Stops `component` with `signal` (SIGKILL after 20 s; a frozen process is killed, as SIGTERM
 * would wait for it to be continued), waits `downMs` while running `whileDown`, then starts it again
 * as it was started, in its own session, its output appended to its log, its pid file updated.
 * The caller waits for it to serve (each component answers differently).
 */
export async function restartComponent(
  component: Exclude<Component, 'kube-apiserver'>,
  options: { signal?: NodeJS.Signals; downMs?: number; whileDown?: () => Promise<void>; node?: string } = {},
): Promise<Outage> {
  const node = options.node ?? FIRST_NODE;
  const name = processName(component, node);
  const pid = pidOf(name);
  const launch = launchOf(pid);
  // A node's processes run in its network and mount namespaces, which outlive them.
  const inNode =
    name === component ? [] : ['nsenter', `--net=/run/netns/${node}`, `--mount=/run/tailor/ns/${node}`, '--'];
  process.kill(pid, options.signal ?? 'SIGTERM');
  await exitOf(pid, 20_000);
  const stoppedAt = Date.now();
  try {
    await Promise.all([new Promise((r) => setTimeout(r, options.downMs ?? 0)), options.whileDown?.()]);
  } finally {
    const log = openSync(resolve(LOG_DIR, `${name}.log`), 'a');
    try {
      const [command, ...args] = [...inNode, ...launch.argv];
      const child = spawn(command!, args, {
        cwd: launch.cwd,
        env: launch.env,
        detached: true,
        stdio: ['ignore', log, log],
      });
      child.unref();
      writeFileSync(pidFileOf(name), `${child.pid}\n`);
    } finally {
      closeSync(log);
    }
  }
  return { stoppedAt, startedAt: Date.now() };
}

/**
 * SIGTERMs the kube-apiserver and resolves once the process has exited, SIGKILLing it after 5 s.
 * The server closes its listener at once, then holds other components' open watch connections
 * for up to 60 s; waiting 20 s for them (cluster.sh's own stop) made an outage of about 22 s,
 * longer than the bed's 20 s node-monitor grace period, so the controller-manager marked every
 * node and pod NotReady when it came back (decision 77's amendment).
 */
export async function stopApiServer(): Promise<void> {
  const pid = pidOf('kube-apiserver');
  process.kill(pid, 'SIGTERM');
  await exitOf(pid, 5_000);
}

/** Starts what is missing of the test bed (here: the API server); resolves when cluster.sh is done. */
export async function startApiServer(): Promise<void> {
  try {
    await clusterScript('up', clusterMode());
  } catch (err) {
    // Another `cluster.sh up` started the API server at the same moment and brings up the rest.
    if (!(await repairRacedPidFile())) throw err;
  }
  await repairRacedPidFile();
}

/**
 * cluster.sh has no lock: when another test run's global setup calls `up` while the API server is
 * down, both start one; the loser fails to bind but its pid is what the pid file keeps, and the
 * test bed then looks stopped while it serves. If the pid file names a dead process and the API
 * port is held by the test bed's own kube-apiserver binary, point the pid file at that process.
 * Returns true when it repaired something.
 */
async function repairRacedPidFile(): Promise<boolean> {
  const recorded = Number(readFileSync(pidFile, 'utf8').trim());
  if (Number.isInteger(recorded) && recorded > 1 && alive(recorded)) return false;
  const { stdout } = await run('ss', ['-Hltnp', 'sport = :6443']);
  const listener = /pid=(\d+)/.exec(stdout)?.[1];
  if (!listener) return false;
  let exe: string;
  try {
    exe = readlinkSync(`/proc/${listener}/exe`);
  } catch {
    return false;
  }
  if (!exe.endsWith('/bin/kube-apiserver') || !exe.includes('/tailor/kubernetes/')) return false;
  writeFileSync(pidFile, `${listener}\n`);
  return true;
}

/**
 * Resolves once the API server answers /readyz with 200 (polling every 100 ms); rejects with what
 * `failure()` returns as soon as it returns something (e.g. the start script failed).
 */
export async function waitForApiServerReady(
  failure: () => unknown = () => undefined,
  timeoutMs = 120_000,
): Promise<void> {
  const client = new KubeClient(loadTestKubeConfig());
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        const response = await client.request('GET', '/readyz', { timeoutMs: 2_000 });
        response.body.resume();
        if (response.statusCode === 200) return;
      } catch {
        // not listening yet
      }
      const failed = failure();
      if (failed !== undefined)
        throw failed instanceof Error ? failed : new Error(`kube-apiserver failed to start: ${JSON.stringify(failed)}`);
      if (Date.now() > deadline) throw new Error(`kube-apiserver not ready after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    client.close();
  }
}

export interface RestartHooks {
  /** Runs while the API server is down (etcd and the rest keep running). */
  whileDown?: () => Promise<void>;
  /** Runs as soon as the API server is ready again, before cluster.sh has finished the rest. */
  onceReady?: () => Promise<void>;
}

/** Stops the kube-apiserver, then starts it again through cluster.sh, running the hooks between. */
export async function restartApiServer(hooks: RestartHooks = {}): Promise<void> {
  await stopApiServer();
  let startError: unknown;
  let starting: Promise<void>;
  try {
    await hooks.whileDown?.();
  } finally {
    starting = startApiServer().catch((err: unknown) => {
      startError = err ?? new Error('cluster.sh up failed');
    });
  }
  try {
    await waitForApiServerReady(() => startError);
    await hooks.onceReady?.();
  } finally {
    await starting;
  }
  if (startError !== undefined)
    throw startError instanceof Error
      ? startError
      : new Error(`kube-apiserver failed to start: ${JSON.stringify(startError)}`);
}

/**
 * Brings up the bed's expandable StorageClasses (hack/cluster.sh csi): `up full` starts them only
 * when their parts are already built, so on a cold cache the first file that needs them builds
 * them here (minutes) while the tier's other files go on.
 */
export async function startExpandableStorage(): Promise<void> {
  await clusterScript('csi');
}

/** Runs hack/cluster.sh with `args` on this bed; resolves when it is done. */
async function clusterScript(...args: string[]): Promise<void> {
  await run('bash', [resolve(REPO, 'hack/cluster.sh'), ...args], {
    cwd: REPO,
    env: { ...process.env, CLUSTER_DIR: CLUSTER_DIR },
    maxBuffer: 16 * 1024 * 1024,
  });
}
