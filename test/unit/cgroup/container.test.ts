// Finding a container's cgroup (cgroupfs and systemd forms, /proc fallback) and parsing v1/v2 files,
// against a cgroup tree written to a temporary directory.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cgroupPathFromSpec,
  detectCgroupVersion,
  expandSlice,
  parseContainerdInfo,
  parseProcCgroup,
  readCgroup,
} from '../../../src/cgroup/container.js';

describe('cgroup paths', () => {
  test.each([
    ['kubepods.slice', '/kubepods.slice'],
    ['kubepods-burstable.slice', '/kubepods.slice/kubepods-burstable.slice'],
    ['kubepods-burstable-pod1234.slice', '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice'],
    ['-.slice', '/'],
  ])('slice %s expands to %s', (slice, path) => {
    expect(expandSlice(slice)).toBe(path);
  });

  test.each(['kubepods', 'a--b.slice', 'a/b.slice', '.slice'])('%s is not accepted as a slice', (slice) => {
    expect(() => expandSlice(slice)).toThrow(/slice name/);
  });

  test('a cgroupfs path is used as it is', () => {
    expect(cgroupPathFromSpec('/kubepods/burstable/pod1/abc')).toBe('/kubepods/burstable/pod1/abc');
  });

  test('a systemd path becomes the scope under the expanded slice', () => {
    expect(cgroupPathFromSpec('kubepods-besteffort-pod1.slice:cri-containerd:abc')).toBe(
      '/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/cri-containerd-abc.scope',
    );
  });

  test('a systemd path with an empty parent lands in system.slice', () => {
    expect(cgroupPathFromSpec(':docker:abc')).toBe('/system.slice/docker-abc.scope');
  });

  test('a path in neither form is rejected', () => {
    expect(() => cgroupPathFromSpec('kubepods:abc')).toThrow(/neither a cgroupfs path/);
  });

  const proc = [
    '12:pids:/kubepods/pod1/abc',
    '4:cpu:/kubepods/pod1/abc',
    '3:cpuacct:/kubepods/pod1/abc',
    '0::/unified/x',
    '',
  ].join('\n');
  test('the v1 cpu line of /proc/<pid>/cgroup gives the path', () => {
    expect(parseProcCgroup(proc, 1)).toBe('/kubepods/pod1/abc');
  });
  test('the v2 line of /proc/<pid>/cgroup gives the path', () => {
    expect(parseProcCgroup(proc, 2)).toBe('/unified/x');
  });
  test('co-mounted cpu,cpuacct is found too', () => {
    expect(parseProcCgroup('5:cpu,cpuacct:/a/b\n', 1)).toBe('/a/b');
  });

  test('containerd verbose info is parsed for pid and cgroupsPath', () => {
    const info = { info: JSON.stringify({ pid: 42, runtimeSpec: { linux: { cgroupsPath: '/p/c' } } }) };
    expect(parseContainerdInfo(info)).toEqual({ pid: 42, runtimeSpec: { linux: { cgroupsPath: '/p/c' } } });
  });
  test('missing verbose info is a clear error', () => {
    expect(() => parseContainerdInfo({})).toThrow(/no verbose info/);
  });
});

describe('readCgroup', () => {
  let root: string;
  const write = async (file: string, text: string): Promise<void> => {
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, `${text}\n`);
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tailor-cgroups-'));
    const v1 = join(root, 'v1');
    const p = '/tailor/pod1/c1';
    await write(join(v1, 'cpu', p, 'cpu.shares'), '256');
    await write(join(v1, 'cpu', p, 'cpu.cfs_quota_us'), '-1');
    await write(join(v1, 'cpu', p, 'cpu.cfs_period_us'), '100000');
    await write(join(v1, 'memory', p, 'memory.limit_in_bytes'), '9223372036854771712');
    await write(join(v1, 'memory', p, 'memory.usage_in_bytes'), '4194304');
    await write(join(v1, 'memory', p, 'memory.memsw.limit_in_bytes'), '134217728');
    const v2 = join(root, 'v2');
    await write(join(v2, 'cgroup.controllers'), 'cpu memory');
    await write(join(v2, p, 'cpu.weight'), '39');
    await write(join(v2, p, 'cpu.max'), '50000 100000');
    await write(join(v2, p, 'memory.max'), '134217728');
    await write(join(v2, p, 'memory.current'), '1048576');
    await write(join(v2, p, 'memory.swap.max'), 'max');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test('a root with cgroup.controllers is v2 and one without is v1', async () => {
    expect([await detectCgroupVersion(join(root, 'v1')), await detectCgroupVersion(join(root, 'v2'))]).toEqual([1, 2]);
  });

  test('v1 files read as numbers with the page-counter maximum as unlimited', async () => {
    expect(await readCgroup('/tailor/pod1/c1', { root: join(root, 'v1') })).toEqual({
      version: 1,
      path: '/tailor/pod1/c1',
      cpuShares: 256n,
      cpuWeight: undefined,
      cpuQuota: -1n,
      cpuPeriod: 100_000n,
      memoryLimitInBytes: -1n,
      memorySwapLimitInBytes: 134_217_728n,
      memoryUsageInBytes: 4_194_304n,
    });
  });

  test('v2 files read as numbers with "max" as unlimited', async () => {
    expect(await readCgroup('/tailor/pod1/c1', { root: join(root, 'v2') })).toEqual({
      version: 2,
      path: '/tailor/pod1/c1',
      cpuShares: undefined,
      cpuWeight: 39n,
      cpuQuota: 50_000n,
      cpuPeriod: 100_000n,
      memoryLimitInBytes: 134_217_728n,
      memorySwapLimitInBytes: -1n,
      memoryUsageInBytes: 1_048_576n,
    });
  });

  test('a cgroup that does not exist says so and names the path', async () => {
    await expect(readCgroup('/tailor/pod1/gone', { root: join(root, 'v1') })).rejects.toThrow(
      /cgroup \/tailor\/pod1\/gone \(v1\) does not exist under .*: the container is not running/,
    );
  });
});
