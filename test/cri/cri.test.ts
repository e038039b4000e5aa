// The agent's CRI adapter against a real containerd + runc: a sandbox and a busybox container made
// through CRI, then resized through applyContainerResources with values from convert.ts, checked in
// the cgroup files themselves (read here directly, not through src/cri/cgroups.ts).
//
// Runtime: a private containerd started for this file (see support/containerd.ts for why the test
// bed's shared one cannot hold a sandbox the kubelet does not know). TAILOR_CRI_ENDPOINT points the
// test at an existing containerd instead — only one without a kubelet; the restart test is then skipped.
// Everything created carries the labels tailor.dev/cri-test=true and tailor.dev/cri-test-run=<uuid>,
// lives under the cgroup parent /tailor-cri-test/pod<uuid>, and is stopped and removed in afterAll.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { applyContainerResources, type ResourceTarget } from '../../src/agent/actuate.js';
import {
  containerCgroupPath,
  containerCgroupReader,
  detectCgroupVersion,
  parseContainerdInfo,
  parseProcCgroup,
  type CgroupReading,
} from '../../src/cgroup/container.js';
import { CriClient } from '../../src/cri/client.js';
import type { LinuxContainerResources } from '../../src/api/node.js';
import { CriError } from '../../src/cri/errors.js';
import { TestCriClient, type ContainerConfig, type PodSandboxConfig } from './support/runtime-client.js';
import {
  toLinuxResources,
  type ContainerResourceRequirements,
  type ConvertOptions,
} from '../../src/cri/pure/convert.js';
import {
  cpuMaxValue,
  memoryMaxValue,
  sharesToCpuWeight,
  sharesToCpuWeightQuadratic,
} from '../../src/cgroup/pure/values.js';
import { startPrivateContainerd, type PrivateContainerd } from './support/containerd.js';

const CGROUP_ROOT = '/sys/fs/cgroup';
const Mi = 1024n * 1024n;
const HELD_MIB = 40n;
const LONG_CALL = { timeoutMs: 60_000 };

const INITIAL: ContainerResourceRequirements = {
  requests: { cpu: '250m', memory: '64Mi' },
  limits: { cpu: '500m', memory: '128Mi' },
};
const GROWN: ContainerResourceRequirements = {
  requests: { cpu: '1', memory: '64Mi' },
  limits: { cpu: '2', memory: '256Mi' },
};
const SHRUNK: ContainerResourceRequirements = {
  requests: { cpu: '100m', memory: '64Mi' },
  limits: { cpu: '200m', memory: '96Mi' },
};
const GROWN_AGAIN: ContainerResourceRequirements = {
  requests: { cpu: '1500m', memory: '64Mi' },
  limits: { cpu: '3', memory: '320Mi' },
};
const BELOW_USAGE: ContainerResourceRequirements = {
  requests: { cpu: '100m', memory: '32Mi' },
  limits: { cpu: '200m', memory: '32Mi' },
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The values in the container's own cgroup files, in the form convert.ts speaks (v1) or its v2 twins. */
interface CgroupFiles {
  readonly cpu: string; // v1 cpu.shares | v2 cpu.weight
  readonly quota: string; // v1 cpu.cfs_quota_us | v2 cpu.max
  readonly memory: string; // v1 memory.limit_in_bytes | v2 memory.max
}

describe('CRI adapter against a real containerd', () => {
  const uid = randomUUID();
  const labels = { 'tailor.dev/cri-test': 'true', 'tailor.dev/cri-test-run': uid };
  const cgroupParent = `/tailor-cri-test/pod${uid}`;
  let privateRuntime: PrivateContainerd | undefined;
  let client: TestCriClient;
  let version: 1 | 2;
  let convert: ConvertOptions;
  let sandboxConfig: PodSandboxConfig;
  let sandboxId = '';
  let containerId = '';
  let logDir = '';

  const target = (r: ContainerResourceRequirements): ResourceTarget => toLinuxResources(r, convert);
  const readCurrent = (id: string): Promise<CgroupReading> => containerCgroupReader(client)(id);

  async function cgroupFiles(): Promise<CgroupFiles> {
    const path = `${cgroupParent}/${containerId}`;
    const read = async (file: string): Promise<string> => (await readFile(file, 'utf8')).trim();
    if (version === 1) {
      return {
        cpu: await read(join(CGROUP_ROOT, 'cpu', path, 'cpu.shares')),
        quota: await read(join(CGROUP_ROOT, 'cpu', path, 'cpu.cfs_quota_us')),
        memory: await read(join(CGROUP_ROOT, 'memory', path, 'memory.limit_in_bytes')),
      };
    }
    return {
      cpu: await read(join(CGROUP_ROOT, path, 'cpu.weight')),
      quota: await read(join(CGROUP_ROOT, path, 'cpu.max')),
      memory: await read(join(CGROUP_ROOT, path, 'memory.max')),
    };
  }

  /** What the cgroup files must hold for a converted target; v2 accepts either runc weight map. */
  function expectFiles(files: CgroupFiles, r: LinuxContainerResources | ResourceTarget): void {
    const shares = r.cpuShares ?? 0n;
    const quota = r.cpuQuota ?? 0n;
    const memory = r.memoryLimitInBytes ?? 0n;
    if (version === 1) {
      expect(files).toEqual({ cpu: String(shares), quota: String(quota > 0n ? quota : -1n), memory: String(memory) });
    } else {
      expect([String(sharesToCpuWeight(shares)), String(sharesToCpuWeightQuadratic(shares))]).toContain(files.cpu);
      expect({ quota: files.quota, memory: files.memory }).toEqual({
        quota: cpuMaxValue(quota, r.cpuPeriod ?? 0n),
        memory: memoryMaxValue(memory),
      });
    }
  }

  async function memoryUsage(): Promise<bigint> {
    return (await readCurrent(containerId)).memoryUsageInBytes;
  }

  beforeAll(async () => {
    const endpoint = process.env.TAILOR_CRI_ENDPOINT;
    if (endpoint === undefined) privateRuntime = await startPrivateContainerd();
    client = new TestCriClient(endpoint ?? privateRuntime?.endpoint, {
      initialReconnectBackoffMs: 100,
      maxReconnectBackoffMs: 500,
    });
    version = await detectCgroupVersion(CGROUP_ROOT);
    convert = {
      cgroupVersion: version,
      swapControllerAvailable: version === 1 && existsSync(join(CGROUP_ROOT, 'memory', 'memory.memsw.limit_in_bytes')),
    };
    logDir = join(privateRuntime?.dir ?? '/tmp', 'logs', uid);
    await mkdir(logDir, { recursive: true });

    sandboxConfig = {
      metadata: { name: `cri-test-${uid.slice(0, 8)}`, uid, namespace: 'tailor-cri-test' },
      labels,
      logDirectory: logDir,
      linux: { cgroupParent, securityContext: { namespaceOptions: { network: 'NODE' } } },
    };
    sandboxId = await client.runPodSandbox(sandboxConfig, '', LONG_CALL);
    const container: ContainerConfig = {
      metadata: { name: 'main' },
      image: { image: 'tailor.local/busybox:v1' },
      // /dev/shm is the sandbox's tmpfs: the 40 MiB stay charged to this container's memory cgroup
      // and cannot be reclaimed (no swap), so usage stays at or above 40 MiB.
      command: [
        '/bin/sh',
        '-c',
        `dd if=/dev/zero of=/dev/shm/hold bs=1M count=${HELD_MIB} && while true; do sleep 1; done`,
      ],
      labels,
      logPath: 'main.log',
      linux: { resources: toLinuxResources(INITIAL, convert) },
    };
    containerId = await client.createContainer(sandboxId, container, sandboxConfig, LONG_CALL);
    await client.startContainer(containerId, LONG_CALL);
    for (let i = 0; i < 100 && (await memoryUsage()) < HELD_MIB * Mi; i++) await sleep(100);
  });

  afterAll(async () => {
    if (client !== undefined) {
      const quietly = async (p: Promise<unknown>): Promise<void> => {
        await p.catch((err: unknown) => {
          if (!(err instanceof CriError && err.code === 'NotFound')) console.warn(`cri test cleanup: ${String(err)}`);
        });
      };
      // Only what this run labelled, even when the runtime is shared.
      for (const c of await client.listContainers({ labelSelector: labels }).catch(() => [])) {
        await quietly(client.stopContainer(c.id, 0, LONG_CALL));
        await quietly(client.removeContainer(c.id, LONG_CALL));
      }
      for (const s of await client.listPodSandbox({ labelSelector: labels }).catch(() => [])) {
        await quietly(client.stopPodSandbox(s.id, LONG_CALL));
        await quietly(client.removePodSandbox(s.id, LONG_CALL));
      }
      client.close();
    }
    await privateRuntime?.destroy();
    if (privateRuntime === undefined && logDir !== '') await rm(logDir, { recursive: true, force: true });
    // runc removes the container cgroups but not the parents it created for cgroup_parent.
    const hierarchies = version === 2 ? [CGROUP_ROOT] : (await readdir(CGROUP_ROOT)).map((h) => join(CGROUP_ROOT, h));
    for (const h of hierarchies) {
      for (const dir of [join(h, cgroupParent), join(h, 'tailor-cri-test')]) await rmdir(dir).catch(() => undefined);
    }
  });

  test('the container starts with the converted resources in its cgroup', async () => {
    expect((await client.containerStatus(containerId)).status.state).toBe('CONTAINER_RUNNING');
    expectFiles(await cgroupFiles(), toLinuxResources(INITIAL, convert));
  });

  test('the cgroup is found from the runtime spec at the sandbox cgroup_parent plus the container ID, where the process is', async () => {
    const path = await containerCgroupPath(client, containerId);
    const { info } = await client.containerStatus(containerId, { verbose: true });
    const pid = parseContainerdInfo(info).pid ?? 0;
    const proc = parseProcCgroup(await readFile(`/proc/${pid}/cgroup`, 'utf8'), version);
    expect([path, proc]).toEqual([`${cgroupParent}/${containerId}`, `${cgroupParent}/${containerId}`]);
  });

  test('growing cpu and memory updates memory then cpu and the cgroup files hold exactly the new values', async () => {
    const result = await applyContainerResources(client, containerId, target(GROWN), { readCurrent });
    expect(result).toMatchObject({ outcome: 'Applied', steps: ['memory', 'cpu'], actuated: true });
    expectFiles(await cgroupFiles(), target(GROWN));
    if (version === 1) expect(await cgroupFiles()).toEqual({ cpu: '1024', quota: '200000', memory: String(256n * Mi) });
  });

  test('the same request applied twice makes no UpdateContainerResources call the second time', async () => {
    const calls: string[] = [];
    const counting = {
      updateContainerResources: async (id: string, r: Partial<LinuxContainerResources>): Promise<void> => {
        calls.push(id);
        await client.updateContainerResources(id, r);
      },
    };
    const first = await applyContainerResources(counting, containerId, target(GROWN_AGAIN), { readCurrent });
    expect([first.outcome, calls.length]).toEqual(['Applied', 2]);
    const second = await applyContainerResources(counting, containerId, target(GROWN_AGAIN), { readCurrent });
    expect([second.outcome, calls.length]).toEqual(['Unchanged', 2]);
    expectFiles(await cgroupFiles(), target(GROWN_AGAIN));
  });

  test('shrinking cpu and memory leaves exactly the smaller values in the cgroup files', async () => {
    const result = await applyContainerResources(client, containerId, target(SHRUNK), { readCurrent });
    expect(result).toMatchObject({ outcome: 'Applied', steps: ['memory', 'cpu'], actuated: true });
    expectFiles(await cgroupFiles(), target(SHRUNK));
    if (version === 1) expect(await cgroupFiles()).toEqual({ cpu: '102', quota: '20000', memory: String(96n * Mi) });
  });

  test('a memory limit below current usage is refused before the runtime is called and the container keeps running', async () => {
    const usage = await memoryUsage();
    expect(usage).toBeGreaterThanOrEqual(HELD_MIB * Mi);
    const calls: string[] = [];
    const counting = {
      updateContainerResources: async (id: string, r: Partial<LinuxContainerResources>): Promise<void> => {
        calls.push(id);
        await client.updateContainerResources(id, r);
      },
    };
    const result = await applyContainerResources(counting, containerId, target(BELOW_USAGE), { readCurrent });
    expect(result).toMatchObject({ outcome: 'ResizeRefused', reason: 'MemoryLimitBelowUsage', limitBytes: 32n * Mi });
    expect(result.outcome === 'ResizeRefused' ? result.message : '').toMatch(
      new RegExp(`^memory limit ${32n * Mi} is not above current usage \\d+ of container ${containerId}$`),
    );
    expect(calls).toEqual([]);
    expectFiles(await cgroupFiles(), target(SHRUNK));
    const { status } = await client.containerStatus(containerId);
    expect([status.state, status.reason]).toEqual(['CONTAINER_RUNNING', '']);
  });

  test('a container ID the runtime does not know gives a NotFound CriError that names the container', async () => {
    const missing = 'f'.repeat(64);
    const viaAdapter = await applyContainerResources(client, missing, target(GROWN), { readCurrent }).catch(
      (e: unknown) => e,
    );
    expect(viaAdapter).toBeInstanceOf(CriError);
    expect(viaAdapter).toMatchObject({
      call: 'ContainerStatus',
      containerId: missing,
      code: 'NotFound',
      retryable: false,
    });
    const direct = await client.updateContainerResources(missing, target(GROWN)).catch((e: unknown) => e);
    expect(direct).toMatchObject({
      call: 'UpdateContainerResources',
      containerId: missing,
      code: 'NotFound',
      retryable: false,
    });
    expect((direct as Error).message).toContain(`(container ${missing})`);
    expect((direct as CriError).details).toMatch(/not found/);
  });

  test('execSync runs a command in the container and returns its output and exit code (a preStop exec hook)', async () => {
    const r = await client.execSync(
      containerId,
      ['/bin/sh', '-c', 'echo out; echo err >&2; touch /tmp/hooked; exit 3'],
      10,
    );
    expect([Buffer.from(r.stdout).toString(), Buffer.from(r.stderr).toString(), r.exitCode]).toEqual([
      'out\n',
      'err\n',
      3,
    ]);
    const again = await client.execSync(containerId, ['/bin/ls', '/tmp/hooked'], 10);
    expect(again.exitCode).toBe(0);
  });

  test('execSync of a command that outlives its timeout ends at the timeout, with an error naming the call', async () => {
    const started = Date.now();
    const err = await client.execSync(containerId, ['/bin/sleep', '30'], 1).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(err).toMatchObject({ name: 'CriError', call: 'ExecSync', containerId });
  });

  test('an aborted signal cancels an execSync call at once, as Canceled', async () => {
    const abort = new AbortController();
    const started = Date.now();
    const call = client
      .execSync(containerId, ['/bin/sleep', '30'], 30, { signal: abort.signal })
      .catch((e: unknown) => e);
    setTimeout(() => abort.abort(new Error('the agent stops')), 300);
    expect(await call).toMatchObject({ name: 'CriError', call: 'ExecSync', code: 'Canceled' });
    expect(Date.now() - started).toBeLessThan(2_000);
    const { status } = await client.containerStatus(containerId);
    expect(status.state).toBe('CONTAINER_RUNNING');
  });

  test('a runtime socket that does not exist gives a fast, retryable Unavailable error naming the socket', async () => {
    const socket = join(privateRuntime?.dir ?? '/tmp', `absent-${uid}.sock`);
    const absent = new CriClient(socket);
    const started = Date.now();
    const err = await absent.updateContainerResources(containerId, target(GROWN)).catch((e: unknown) => e);
    absent.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err).toMatchObject({
      name: 'CriError',
      call: 'UpdateContainerResources',
      containerId,
      code: 'Unavailable',
      retryable: true,
    });
    expect((err as Error).message).toContain(socket);
  });

  test('a stopped containerd gives retryable errors and the same client works again once it is back', async () => {
    if (privateRuntime === undefined) return; // a shared runtime is not ours to stop
    await privateRuntime.stop();
    const down = await applyContainerResources(client, containerId, target(GROWN), { readCurrent }).catch(
      (e: unknown) => e,
    );
    expect(down).toMatchObject({ name: 'CriError', code: 'Unavailable', retryable: true, containerId });
    expectFiles(await cgroupFiles(), target(SHRUNK));

    await privateRuntime.start();
    let result: Awaited<ReturnType<typeof applyContainerResources>> | undefined;
    for (let i = 0; i < 50 && result === undefined; i++) {
      result = await applyContainerResources(client, containerId, target(GROWN), { readCurrent }).catch(
        async (err: unknown) => {
          if (!(err instanceof CriError && err.retryable)) throw err;
          await sleep(200);
          return undefined;
        },
      );
    }
    expect(result).toMatchObject({ outcome: 'Applied', actuated: true });
    expectFiles(await cgroupFiles(), target(GROWN));
  });
});
