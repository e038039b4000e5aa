// Every cgroup file the agent touches is named through path.ts: a cgroup path from the runtime
// or a pod that would leave the configured root is refused before any file is opened.
import { describe, expect, test } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertUnderRoot, cgroupDir, cgroupFile, CgroupPathError } from '../../../src/cgroup/path.js';
import { readCgroup } from '../../../src/cgroup/container.js';
import { writePodCgroup } from '../../../src/cgroup/pod.js';

describe('cgroup paths stay under the root', () => {
  test.each([
    ['/kubepods/burstable/podu1', undefined, '/host/cg/kubepods/burstable/podu1'],
    ['/kubepods/podu1/c1', 'cpu', '/host/cg/cpu/kubepods/podu1/c1'],
    ['/', 'memory', '/host/cg/memory/'],
  ])('cgroup %s in hierarchy %s resolves to %s', (path, hierarchy, want) => {
    expect(cgroupDir('/host/cg', hierarchy, path)).toBe(want);
  });

  test.each([
    ['/kubepods/../../etc', undefined],
    ['/../etc', 'cpu'],
    ['kubepods/podu1', undefined],
    ['/kubepods/./podu1', undefined],
    ['/kubepods/pod\0', undefined],
    ['/kubepods', '../etc'],
  ])('cgroup path %j (hierarchy %j) is refused', (path, hierarchy) => {
    expect(() => cgroupDir('/host/cg', hierarchy, path)).toThrow(CgroupPathError);
  });

  test('a file name with a slash is refused', () => {
    expect(() => cgroupFile('/host/cg/cpu', '../shadow')).toThrow(CgroupPathError);
    expect(cgroupFile('/host/cg/cpu', 'cpu.shares')).toBe('/host/cg/cpu/cpu.shares');
  });

  test('a resolved path outside the root is refused and one inside is accepted', () => {
    expect(() => assertUnderRoot('/host/cg', '/host/cgroup-other')).toThrow(CgroupPathError);
    expect(() => assertUnderRoot('/host/cg', '/etc')).toThrow(CgroupPathError);
    expect(() => assertUnderRoot('/host/cg', '/host/cg/a/b')).not.toThrow();
  });

  test('reading and writing a cgroup that escapes the root fail before touching the filesystem', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tailor-cgpath-'));
    try {
      await expect(readCgroup('/../../etc', { root, version: 1 })).rejects.toThrow(CgroupPathError);
      await expect(writePodCgroup('/kubepods/../../../tmp', { cpuShares: 2n }, { root, version: 2 })).rejects.toThrow(
        CgroupPathError,
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
