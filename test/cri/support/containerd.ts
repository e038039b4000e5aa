// A private containerd for the cri tier: same binary and the test bed's very configuration
// (hack/containerd.toml: cgroupfs driver, restrict_oom_score_adj, tailor.local images), but its own
// root, state, socket and runc root under /var/lib/tailor-cri-test/<id>, and no kubelet talking to
// it. Why: the test bed's kubelet kills every sandbox it did not create within ~2 s (v1.34
// HandlePodCleanups, "Clean up containers for orphaned pod we had not seen before"), so a test
// cannot keep a sandbox of its own in the shared containerd. Its images come from the archives the
// bed's nodes import (hack/bed/node.sh import_images), not from a node's containerd, whose content
// another bed may have left half written (a `ctr images export` once read a 0-byte blob there).
// Owns: starting, restarting and removing that instance and everything under its directory.
// Must not: touch the shared containerd, or any process it did not start.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { openSync, closeSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CriClient } from '../../../src/cri/client.js';

const run = promisify(execFile);

export const TEST_IMAGES = ['tailor.local/pause:1', 'tailor.local/busybox:v1'] as const;
/** The bed's archives of TEST_IMAGES (hack/bed/node.sh: $CACHE/images/v2). */
const IMAGE_ARCHIVES = ['pause.tar', 'busybox-v1.tar'].map((tar) =>
  join(process.env['TAILOR_CACHE'] ?? `${process.env['HOME']}/.cache/tailor`, 'images', 'v2', tar),
);
const BASE = '/var/lib/tailor-cri-test';

export interface PrivateContainerd {
  readonly endpoint: string;
  readonly socket: string;
  readonly dir: string;
  /** SIGTERM containerd and wait; its containers keep running in their shims. */
  stop(): Promise<void>;
  /** Start it again on the same root, state and socket. */
  start(): Promise<void>;
  /** Stop it and remove what is left: shims of this instance, mounts under its directory, the directory. */
  destroy(): Promise<void>;
}

/** The test bed's containerd configuration (hack/containerd.toml, which hack/cluster.sh fills in too), moved under `dir`. */
async function config(dir: string): Promise<string> {
  const shared = await readFile(fileURLToPath(new URL('../../../hack/containerd.toml', import.meta.url)), 'utf8');
  const places: Record<string, string> = {
    '@ROOT@': `${dir}/root`,
    '@STATE@': `${dir}/state`,
    '@SOCKET@': `${dir}/containerd.sock`,
    '@RUNC_ROOT@': `${dir}/runc`,
    '@CNI_CONF_DIR@': `${dir}/cni`,
    '@REGISTRY_HOSTS@': `${dir}/certs.d`,
  };
  return shared.replace(/@[A-Z_]+@/g, (placeholder) => {
    const value = places[placeholder];
    if (value === undefined) throw new Error(`hack/containerd.toml: no value for ${placeholder}`);
    return value;
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitForCri(endpoint: string, ms: number): Promise<void> {
  const client = new CriClient(endpoint, {
    timeoutMs: 1_000,
    initialReconnectBackoffMs: 100,
    maxReconnectBackoffMs: 300,
  });
  const deadline = Date.now() + ms;
  try {
    for (;;) {
      try {
        await client.version();
        return;
      } catch (err) {
        if (Date.now() > deadline)
          throw new Error(`private containerd at ${endpoint} did not answer within ${ms} ms`, { cause: err });
        await sleep(100);
      }
    }
  } finally {
    client.close();
  }
}

async function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Pids of containerd-shim-runc-v2 processes serving this instance's socket (and only it). */
async function shimsOf(socket: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const args = cmdline.split('\0');
    const at = args.indexOf('-address');
    if (args[0]?.endsWith('containerd-shim-runc-v2') === true && at >= 0 && args[at + 1] === socket)
      pids.push(Number(entry));
  }
  return pids;
}

export async function startPrivateContainerd(): Promise<PrivateContainerd> {
  const dir = join(BASE, randomUUID().slice(0, 8));
  const socket = join(dir, 'containerd.sock');
  const endpoint = `unix://${socket}`;
  await mkdir(join(dir, 'cni'), { recursive: true });
  await writeFile(join(dir, 'config.toml'), await config(dir));
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const log = openSync(join(dir, 'containerd.log'), 'a');
    child = spawn('containerd', ['--config', join(dir, 'config.toml')], { stdio: ['ignore', log, log] });
    closeSync(log);
    await waitForCri(endpoint, 30_000);
  };
  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (c === undefined || c.pid === undefined) return;
    c.kill('SIGTERM');
    if (!(await exited(c, 10_000))) {
      c.kill('SIGKILL');
      await exited(c, 5_000);
    }
  };
  const destroy = async (): Promise<void> => {
    await stop();
    for (const pid of await shimsOf(socket)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    const mounts = (await readFile('/proc/mounts', 'utf8'))
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '')
      .filter((m) => m.startsWith(`${dir}/`))
      .sort((a, b) => b.length - a.length);
    for (const m of mounts) await run('umount', ['-l', m]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    await rmdir(BASE).catch(() => undefined); // only when no other run is using it
  };

  try {
    await start();
    for (const archive of IMAGE_ARCHIVES)
      await run('ctr', ['--address', socket, '--namespace', 'k8s.io', 'images', 'import', archive]);
  } catch (err) {
    await destroy();
    throw err;
  }
  return { endpoint, socket, dir, stop, start, destroy };
}
