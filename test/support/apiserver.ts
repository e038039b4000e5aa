// Test-side control of the test bed's kube-apiserver process, so integration tests can take the
// API away and bring it back while the rest of the cluster (etcd, kubelet) keeps running.
// Owns: stopping the one kube-apiserver process named in .tailor/cluster/pids and asking
// hack/cluster.sh to start what is missing again. Must not: stop anything else, or take the whole
// cluster down (other tests share it).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { KubeClient } from '../../src/runtime/kube-client.js';
import { loadTestKubeConfig } from './kube.js';

const run = promisify(execFile);
// Jest runs from the repository root (as test/support/kube.ts assumes).
const repo = process.cwd();
const clusterDir = process.env.CLUSTER_DIR ?? resolve(repo, '.tailor/cluster');
const pidFile = resolve(clusterDir, 'pids/kube-apiserver.pid');
const modeFile = resolve(clusterDir, 'mode');

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

/**
 * SIGTERMs the kube-apiserver and resolves once the process has exited. Like cluster.sh's own stop,
 * it SIGKILLs after 20 s: the server closes its listener at once but then waits up to 60 s for
 * other components' open watch connections, and a shorter outage is kinder to tests sharing it.
 */
export async function stopApiServer(): Promise<void> {
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 1 || !alive(pid)) throw new Error(`kube-apiserver (pid file ${pidFile}) is not running`);
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 20_000;
  while (alive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  while (alive(pid)) await new Promise((r) => setTimeout(r, 100));
}

/** Starts what is missing of the test bed (here: the API server); resolves when cluster.sh is done. */
export async function startApiServer(): Promise<void> {
  try {
    await run('bash', [resolve(repo, 'hack/cluster.sh'), 'up', clusterMode()], {
      cwd: repo,
      env: { ...process.env, CLUSTER_DIR: clusterDir },
      maxBuffer: 16 * 1024 * 1024,
    });
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
export async function waitForApiServerReady(failure: () => unknown = () => undefined, timeoutMs = 120_000): Promise<void> {
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
    throw startError instanceof Error ? startError : new Error(`kube-apiserver failed to start: ${JSON.stringify(startError)}`);
}
