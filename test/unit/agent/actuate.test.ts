// applyContainerResources against a fake runtime whose "cgroup" follows the updates it receives:
// no-op when equal, kubelet order (memory then cpu), the memory-below-usage refusal, read-back.
import { describe, expect, test } from '@jest/globals';
import { applyContainerResources, cpuMatches, memoryMatches, memoryRefusal } from '../../../src/agent/actuate.js';
import type { CgroupReading } from '../../../src/cgroup/container.js';
import type { LinuxContainerResources } from '../../../src/api/node.js';
import { toLinuxResources } from '../../../src/cri/pure/convert.js';

const Mi = 1024n * 1024n;

function v1(overrides: Partial<CgroupReading> = {}): CgroupReading {
  return {
    version: 1,
    path: '/t/pod/c',
    cpuShares: 256n,
    cpuWeight: undefined,
    cpuQuota: 50_000n,
    cpuPeriod: 100_000n,
    memoryLimitInBytes: 128n * Mi,
    memorySwapLimitInBytes: 128n * Mi,
    memoryUsageInBytes: 40n * Mi,
    ...overrides,
  };
}

/** A runtime whose cgroup takes whatever non-zero values UpdateContainerResources sends (as containerd does). */
function fakeRuntime(initial: CgroupReading): {
  calls: Partial<LinuxContainerResources>[];
  client: { updateContainerResources: (id: string, r: Partial<LinuxContainerResources>) => Promise<void> };
  readCurrent: () => Promise<CgroupReading>;
} {
  let state = initial;
  const calls: Partial<LinuxContainerResources>[] = [];
  return {
    calls,
    client: {
      updateContainerResources: async (_id, r): Promise<void> => {
        calls.push(r);
        state = {
          ...state,
          cpuShares: r.cpuShares !== undefined && r.cpuShares > 0n ? r.cpuShares : state.cpuShares,
          cpuQuota: r.cpuQuota !== undefined && r.cpuQuota !== 0n ? r.cpuQuota : state.cpuQuota,
          cpuPeriod: r.cpuPeriod !== undefined && r.cpuPeriod > 0n ? r.cpuPeriod : state.cpuPeriod,
          memoryLimitInBytes:
            r.memoryLimitInBytes !== undefined && r.memoryLimitInBytes > 0n
              ? r.memoryLimitInBytes
              : state.memoryLimitInBytes,
          memorySwapLimitInBytes:
            r.memorySwapLimitInBytes !== undefined && r.memorySwapLimitInBytes > 0n
              ? r.memorySwapLimitInBytes
              : state.memorySwapLimitInBytes,
        };
      },
    },
    readCurrent: async (): Promise<CgroupReading> => state,
  };
}

const swapV1 = { cgroupVersion: 1, swapControllerAvailable: true } as const;

describe('applyContainerResources', () => {
  test('a target equal to the cgroup makes no call', async () => {
    const rt = fakeRuntime(v1());
    const target = toLinuxResources({ requests: { cpu: '250m' }, limits: { cpu: '500m', memory: '128Mi' } }, swapV1);
    const result = await applyContainerResources(rt.client, 'c', target, { readCurrent: rt.readCurrent });
    expect(result.outcome).toBe('Unchanged');
    expect(rt.calls).toEqual([]);
  });

  test('growing both updates memory first, then cpu, and reads back the new values', async () => {
    const rt = fakeRuntime(v1());
    const target = toLinuxResources({ requests: { cpu: '1' }, limits: { cpu: '2', memory: '256Mi' } }, swapV1);
    const result = await applyContainerResources(rt.client, 'c', target, { readCurrent: rt.readCurrent });
    expect(result).toMatchObject({ outcome: 'Applied', steps: ['memory', 'cpu'], actuated: true });
    expect(rt.calls).toEqual([
      { memoryLimitInBytes: 256n * Mi, memorySwapLimitInBytes: 256n * Mi },
      { cpuShares: 1024n, cpuQuota: 200_000n, cpuPeriod: 100_000n },
    ]);
  });

  test('the same request applied twice makes calls only the first time', async () => {
    const rt = fakeRuntime(v1());
    const target = toLinuxResources({ requests: { cpu: '1' }, limits: { cpu: '2', memory: '256Mi' } }, swapV1);
    await applyContainerResources(rt.client, 'c', target, { readCurrent: rt.readCurrent });
    const second = await applyContainerResources(rt.client, 'c', target, { readCurrent: rt.readCurrent });
    expect(second.outcome).toBe('Unchanged');
    expect(rt.calls).toHaveLength(2);
  });

  test('a cpu-only change makes a single cpu call', async () => {
    const rt = fakeRuntime(v1());
    const target = toLinuxResources({ requests: { cpu: '100m' }, limits: { cpu: '500m', memory: '128Mi' } }, swapV1);
    const result = await applyContainerResources(rt.client, 'c', target, { readCurrent: rt.readCurrent });
    expect(result).toMatchObject({ outcome: 'Applied', steps: ['cpu'] });
    expect(rt.calls).toEqual([{ cpuShares: 102n, cpuQuota: 50_000n, cpuPeriod: 100_000n }]);
  });

  test('a memory limit at or below usage is refused before any call', async () => {
    const rt = fakeRuntime(v1({ memoryUsageInBytes: 40n * Mi }));
    const target = toLinuxResources({ limits: { cpu: '500m', memory: '40Mi' } }, swapV1);
    const result = await applyContainerResources(rt.client, 'abc', target, { readCurrent: rt.readCurrent });
    expect(result).toEqual({
      outcome: 'ResizeRefused',
      reason: 'MemoryLimitBelowUsage',
      message: `memory limit ${40n * Mi} is not above current usage ${40n * Mi} of container abc`,
      limitBytes: 40n * Mi,
      usageBytes: 40n * Mi,
      current: v1({ memoryUsageInBytes: 40n * Mi }),
    });
    expect(rt.calls).toEqual([]);
  });

  test('a limit added where there was none is checked against usage too', () => {
    expect(
      memoryRefusal('container c', 16n * Mi, v1({ memoryLimitInBytes: -1n, memoryUsageInBytes: 20n * Mi })),
    ).toMatch(/not above/);
  });

  test('raising a limit is never refused, even when usage is above the new value', () => {
    expect(
      memoryRefusal('container c', 64n * Mi, v1({ memoryLimitInBytes: 32n * Mi, memoryUsageInBytes: 100n * Mi })),
    ).toBeUndefined();
  });

  test('a reported mismatch after the calls is not actuated', async () => {
    const rt = fakeRuntime(v1());
    const stuck = { ...rt, readCurrent: async (): Promise<CgroupReading> => v1() };
    const target = toLinuxResources({ limits: { cpu: '1', memory: '128Mi' } }, swapV1);
    const result = await applyContainerResources(rt.client, 'c', target, { readCurrent: stuck.readCurrent });
    expect(result).toMatchObject({ outcome: 'Applied', steps: ['cpu'], actuated: false });
  });

  test('errors of the runtime reach the caller', async () => {
    const client = { updateContainerResources: async (): Promise<void> => Promise.reject(new Error('boom')) };
    const target = toLinuxResources({ limits: { cpu: '1', memory: '128Mi' } });
    await expect(applyContainerResources(client, 'c', target, { readCurrent: async () => v1() })).rejects.toThrow(
      'boom',
    );
  });
});

describe('matching', () => {
  test('a memory limit matches the kernel value rounded down to the page', () => {
    expect(
      memoryMatches(
        { memoryLimitInBytes: 100_000_000n },
        v1({ memoryLimitInBytes: 99_999_744n, memorySwapLimitInBytes: undefined }),
      ),
    ).toBe(true);
  });
  test('an unspecified memory limit matches anything', () => {
    expect(memoryMatches({ memoryLimitInBytes: 0n }, v1())).toBe(true);
  });
  test('a different v1 swap limit is a difference', () => {
    expect(memoryMatches({ memoryLimitInBytes: 128n * Mi, memorySwapLimitInBytes: 256n * Mi }, v1())).toBe(false);
  });
  test('v2 memory.swap.max "0" matches a swap limit of 0', () => {
    const r = v1({ version: 2, memorySwapLimitInBytes: 0n });
    expect(memoryMatches({ memoryLimitInBytes: 128n * Mi, unified: { 'memory.swap.max': '0' } }, r)).toBe(true);
  });
  test('no cpu limit (quota 0) matches an unlimited quota', () => {
    expect(cpuMatches({ cpuShares: 256n, cpuQuota: 0n, cpuPeriod: 100_000n }, v1({ cpuQuota: -1n }))).toBe(true);
  });
  test('v2 weight matches either runc mapping of the shares', () => {
    const r = (w: bigint): CgroupReading => v1({ version: 2, cpuShares: undefined, cpuWeight: w });
    expect([
      cpuMatches({ cpuShares: 1024n }, r(39n)),
      cpuMatches({ cpuShares: 1024n }, r(100n)),
      cpuMatches({ cpuShares: 1024n }, r(50n)),
    ]).toEqual([true, true, false]);
  });
});
