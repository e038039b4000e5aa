// The pod-level cgroup: paths per QoS class and driver, and reading/writing v1 and v2 files in a
// cgroup tree written to a temporary directory.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CgroupDriver,
  podCgroupFromContainer,
  podCgroupPath,
  readPodCgroup,
  writePodCgroup,
} from '../../../src/cgroup/pod.js';
import { cpuWeightToShares } from '../../../src/cgroup/pure/values.js';
import type { QosClass } from '../../../src/api/pod.js';

describe('podCgroupPath', () => {
  test.each<[QosClass, CgroupDriver, string]>([
    ['Guaranteed', 'cgroupfs', '/kubepods/poda-b'],
    ['Burstable', 'cgroupfs', '/kubepods/burstable/poda-b'],
    ['BestEffort', 'cgroupfs', '/kubepods/besteffort/poda-b'],
    ['Guaranteed', 'systemd', '/kubepods.slice/kubepods-poda_b.slice'],
    ['Burstable', 'systemd', '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda_b.slice'],
  ])('%s %s', (qos, driver, want) => {
    expect(podCgroupPath('a-b', qos, driver)).toBe(want);
  });

  test.each([
    ['cgroupfs, burstable', '/kubepods/burstable/poda-b/abc123', '/kubepods/burstable/poda-b'],
    ['cgroupfs, guaranteed', '/kubepods/poda-b/abc123', '/kubepods/poda-b'],
    [
      'systemd, burstable',
      '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda_b.slice/cri-containerd-abc.scope',
      '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda_b.slice',
    ],
    [
      'systemd, guaranteed',
      '/kubepods.slice/kubepods-poda_b.slice/cri-containerd-abc.scope',
      '/kubepods.slice/kubepods-poda_b.slice',
    ],
  ])('the pod cgroup is the parent of a container cgroup named for the pod (%s)', (_, container, want) => {
    expect(podCgroupFromContainer(container, 'a-b')).toBe(want);
  });

  test.each([
    ["another pod's cgroup", '/kubepods/burstable/podc-d/abc123'],
    ['a QoS cgroup', '/kubepods/burstable/abc123'],
    ['the root', '/abc123'],
    ['a pod whose UID only starts the same', '/kubepods/burstable/poda-b-c/abc123'],
  ])('a container cgroup whose parent is not the pod is refused: %s', (_, container) => {
    expect(() => podCgroupFromContainer(container, 'a-b')).toThrow(/is not the cgroup of pod a-b/);
  });

  test('a pod without a UID has no pod cgroup', () => {
    expect(() => podCgroupFromContainer('/kubepods/burstable/pod/abc123', '')).toThrow(
      /not the cgroup of pod \(no UID\)/,
    );
  });
});

describe('read and write', () => {
  let root: string;
  const pod = '/kubepods/burstable/poduid';
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tailor-podcg-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function files(base: string, entries: Record<string, string>): Promise<void> {
    await mkdir(base, { recursive: true });
    for (const [name, text] of Object.entries(entries)) await writeFile(join(base, name), `${text}\n`);
  }
  const read = async (...parts: string[]): Promise<string> => (await readFile(join(root, ...parts), 'utf8')).trim();

  test('v1: reads, then writes only the values given; -1 is unlimited', async () => {
    const v1 = join(root, 'v1');
    await files(join(v1, 'cpu', pod), { 'cpu.shares': '204', 'cpu.cfs_quota_us': '-1', 'cpu.cfs_period_us': '100000' });
    await files(join(v1, 'memory', pod), {
      'memory.limit_in_bytes': '9223372036854771712',
      'memory.usage_in_bytes': '1000',
    });
    const options = { root: v1, version: 1 as const };
    expect(await readPodCgroup(pod, options)).toMatchObject({
      cpuShares: 204n,
      cpuQuota: -1n,
      cpuPeriod: 100_000n,
      memoryLimitInBytes: -1n,
      memoryUsageInBytes: 1000n,
    });
    await writePodCgroup(pod, { memoryLimitInBytes: 268_435_456n, cpuShares: 512n, cpuQuota: 50_000n }, options);
    expect(await read('v1', 'memory', pod, 'memory.limit_in_bytes')).toBe('268435456');
    expect(await read('v1', 'cpu', pod, 'cpu.shares')).toBe('512');
    expect(await read('v1', 'cpu', pod, 'cpu.cfs_quota_us')).toBe('50000');
    expect(await read('v1', 'cpu', pod, 'cpu.cfs_period_us')).toBe('100000');
    await writePodCgroup(pod, { cpuQuota: -1n, memoryLimitInBytes: -1n }, options);
    expect(await read('v1', 'cpu', pod, 'cpu.cfs_quota_us')).toBe('-1');
    expect(await read('v1', 'memory', pod, 'memory.limit_in_bytes')).toBe('-1');
  });

  test('v1: a set memsw limit is raised before and lowered after the memory limit', async () => {
    const v1 = join(root, 'v1swap');
    await files(join(v1, 'memory', pod), {
      'memory.limit_in_bytes': '1000',
      'memory.usage_in_bytes': '10',
      'memory.memsw.limit_in_bytes': '1000',
    });
    const options = { root: v1, version: 1 as const };
    await writePodCgroup(pod, { memoryLimitInBytes: 4096n }, options);
    expect(await read('v1swap', 'memory', pod, 'memory.memsw.limit_in_bytes')).toBe('4096');
    await writePodCgroup(pod, { memoryLimitInBytes: 2048n }, options);
    expect(await read('v1swap', 'memory', pod, 'memory.memsw.limit_in_bytes')).toBe('2048');
    expect(await read('v1swap', 'memory', pod, 'memory.limit_in_bytes')).toBe('2048');
  });

  test('v2: weight from shares (linear), cpu.max, memory.max', async () => {
    const v2 = join(root, 'v2');
    await files(join(v2, pod), {
      'cpu.weight': '8',
      'cpu.max': 'max 100000',
      'memory.max': 'max',
      'memory.current': '5',
    });
    const options = { root: v2, version: 2 as const };
    expect(await readPodCgroup(pod, options)).toMatchObject({
      cpuQuota: -1n,
      cpuPeriod: 100_000n,
      memoryLimitInBytes: -1n,
      cpuShares: cpuWeightToShares(8n),
    });
    await writePodCgroup(pod, { memoryLimitInBytes: 1_048_576n, cpuShares: 1024n, cpuQuota: 20_000n }, options);
    expect(await read('v2', pod, 'memory.max')).toBe('1048576');
    expect(await read('v2', pod, 'cpu.weight')).toBe('39');
    expect(await read('v2', pod, 'cpu.max')).toBe('20000 100000');
  });

  test('a missing cgroup fails naming the file', async () => {
    await expect(writePodCgroup('/kubepods/podgone', { cpuShares: 2n }, { root, version: 1 })).rejects.toThrow(
      /podgone\/cpu.shares/,
    );
  });
});
