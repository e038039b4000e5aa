// Tables for the kubelet-identical conversion of container cpu/memory to CRI LinuxContainerResources. Expected numbers are worked out by hand from the kubelet v1.34.4 formulas
// quoted in src/cri/pure/convert.ts.
import { describe, expect, test } from '@jest/globals';
import {
  milliCpuToQuota,
  milliCpuToShares,
  toLinuxResources,
  type ContainerResourceRequirements,
} from '../../../../src/cri/pure/convert.js';

const Mi = 1024n * 1024n;
const Gi = 1024n * Mi;

describe('toLinuxResources', () => {
  const cases: ReadonlyArray<{
    name: string;
    resources: ContainerResourceRequirements;
    shares: bigint;
    quota: bigint;
    memory: bigint;
  }> = [
    {
      name: 'a cpu request alone sets shares and leaves quota unset',
      resources: { requests: { cpu: '250m' } },
      shares: 256n,
      quota: 0n,
      memory: 0n,
    },
    {
      name: 'a cpu limit alone sets shares from the limit and a quota',
      resources: { limits: { cpu: '500m' } },
      shares: 512n,
      quota: 50_000n,
      memory: 0n,
    },
    {
      name: 'a request and a limit set shares from the request and quota from the limit',
      resources: { requests: { cpu: '100m' }, limits: { cpu: '2' } },
      shares: 102n,
      quota: 200_000n,
      memory: 0n,
    },
    {
      name: 'neither request nor limit gives the minimum shares and no quota',
      resources: {},
      shares: 2n,
      quota: 0n,
      memory: 0n,
    },
    {
      name: 'empty request and limit maps behave like none',
      resources: { requests: {}, limits: {} },
      shares: 2n,
      quota: 0n,
      memory: 0n,
    },
    {
      name: 'a zero cpu request wins over a limit, as in the kubelet',
      resources: { requests: { cpu: '0' }, limits: { cpu: '1' } },
      shares: 2n,
      quota: 100_000n,
      memory: 0n,
    },
    {
      name: 'a 1m request rounds shares up to the minimum of 2',
      resources: { requests: { cpu: '1m' } },
      shares: 2n,
      quota: 0n,
      memory: 0n,
    },
    {
      name: 'a 1m limit raises the quota to the 1000µs minimum',
      resources: { limits: { cpu: '1m' } },
      shares: 2n,
      quota: 1_000n,
      memory: 0n,
    },
    {
      name: 'a 9m limit is below the minimum quota too',
      resources: { limits: { cpu: '9m' } },
      shares: 9n,
      quota: 1_000n,
      memory: 0n,
    },
    {
      name: 'a 10m limit is exactly the minimum quota',
      resources: { limits: { cpu: '10m' } },
      shares: 10n,
      quota: 1_000n,
      memory: 0n,
    },
    {
      name: 'a 3m request truncates 3.072 shares to 3',
      resources: { requests: { cpu: '3m' } },
      shares: 3n,
      quota: 0n,
      memory: 0n,
    },
    {
      name: 'a sub-milli cpu request rounds up to 1m like MilliValue',
      resources: { requests: { cpu: '0.1m' } },
      shares: 2n,
      quota: 0n,
      memory: 0n,
    },
    {
      name: 'a 1.5 cpu request in decimal form is 1536 shares',
      resources: { requests: { cpu: '1.5' }, limits: { cpu: '1.5' } },
      shares: 1_536n,
      quota: 150_000n,
      memory: 0n,
    },
    {
      name: '256 cpus is exactly the maximum shares',
      resources: { requests: { cpu: '256' } },
      shares: 262_144n,
      quota: 0n,
      memory: 0n,
    },
    {
      name: '512 cpus clamps shares to the maximum and keeps the full quota',
      resources: { requests: { cpu: '512' }, limits: { cpu: '512' } },
      shares: 262_144n,
      quota: 51_200_000n,
      memory: 0n,
    },
    {
      name: 'an absurd cpu count still clamps without overflow',
      resources: { requests: { cpu: '9e15' } },
      shares: 262_144n,
      quota: 0n,
      memory: 0n,
    },
    {
      name: 'a memory limit in Gi is bytes',
      resources: { limits: { memory: '1Gi' } },
      shares: 2n,
      quota: 0n,
      memory: Gi,
    },
    {
      name: 'a memory limit in Mi is bytes',
      resources: { limits: { memory: '128Mi' } },
      shares: 2n,
      quota: 0n,
      memory: 128n * Mi,
    },
    {
      name: 'a decimal memory limit is decimal bytes',
      resources: { limits: { memory: '100M' } },
      shares: 2n,
      quota: 0n,
      memory: 100_000_000n,
    },
    {
      name: 'a fractional binary memory limit is exact',
      resources: { limits: { memory: '1.5Gi' } },
      shares: 2n,
      quota: 0n,
      memory: 1_610_612_736n,
    },
    {
      name: 'a fractional byte rounds up like Value()',
      resources: { limits: { memory: '0.5' } },
      shares: 2n,
      quota: 0n,
      memory: 1n,
    },
    {
      name: 'a memory request alone sets no memory limit',
      resources: { requests: { memory: '1Gi' } },
      shares: 2n,
      quota: 0n,
      memory: 0n,
    },
    {
      name: 'a full guaranteed container sets everything',
      resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '250m', memory: '64Mi' } },
      shares: 256n,
      quota: 25_000n,
      memory: 64n * Mi,
    },
  ];

  test.each(cases)('$name', ({ resources, shares, quota, memory }) => {
    const r = toLinuxResources(resources);
    expect(r).toEqual({
      cpuShares: shares,
      cpuQuota: quota,
      cpuPeriod: 100_000n,
      memoryLimitInBytes: memory,
      memorySwapLimitInBytes: 0n,
      unified: {},
    });
  });

  test('the period is 100000 even when there is no cpu limit, as the kubelet sends it', () => {
    expect(toLinuxResources({ requests: { cpu: '1' } }).cpuPeriod).toBe(100_000n);
  });

  test('with cpuCfsQuota off neither quota nor period is sent', () => {
    const r = toLinuxResources({ limits: { cpu: '1' } }, { cpuCfsQuota: false });
    expect([r.cpuQuota, r.cpuPeriod, r.cpuShares]).toEqual([0n, 0n, 1_024n]);
  });

  test('on cgroup v1 with a swap controller the swap limit equals the memory limit (NoSwap)', () => {
    const r = toLinuxResources({ limits: { memory: '256Mi' } }, { cgroupVersion: 1, swapControllerAvailable: true });
    expect([r.memoryLimitInBytes, r.memorySwapLimitInBytes, r.unified]).toEqual([256n * Mi, 256n * Mi, {}]);
  });

  test('on cgroup v2 with a swap controller swap is turned off through memory.swap.max', () => {
    const r = toLinuxResources({ limits: { memory: '256Mi' } }, { cgroupVersion: 2, swapControllerAvailable: true });
    expect([r.memorySwapLimitInBytes, r.unified]).toEqual([0n, { 'memory.swap.max': '0' }]);
  });

  test('without a swap controller no swap field is sent', () => {
    expect(toLinuxResources({ limits: { memory: '256Mi' } }).memorySwapLimitInBytes).toBe(0n);
  });

  test('other resources are ignored', () => {
    expect(toLinuxResources({ limits: { 'nvidia.com/gpu': '1', 'ephemeral-storage': '1Gi' } })).toEqual(
      toLinuxResources({}),
    );
  });

  test.each([
    ['garbage', { limits: { memory: 'lots' } }, /limits\.memory "lots" is not a valid quantity/],
    ['a negative cpu', { requests: { cpu: '-1' } }, /requests\.cpu "-1" is not a valid quantity/],
  ])('%s is rejected with the field named', (_name, resources, message) => {
    expect(() => toLinuxResources(resources)).toThrow(message);
  });
});

describe('milliCpuToShares and milliCpuToQuota', () => {
  test.each([
    [0n, 2n],
    [1n, 2n],
    [2n, 2n],
    [1000n, 1024n],
    [256_000n, 262_144n],
    [256_001n, 262_144n],
    [512_000n, 262_144n],
  ])('%p milli-cpu is %p shares', (milli, shares) => {
    expect(milliCpuToShares(milli)).toBe(shares);
  });

  test.each([
    [0n, 100_000n, 0n],
    [1n, 100_000n, 1_000n],
    [10n, 100_000n, 1_000n],
    [11n, 100_000n, 1_100n],
    [1500n, 100_000n, 150_000n],
    [1500n, 50_000n, 75_000n],
  ])('%p milli-cpu over a %p µs period is a %p µs quota', (milli, period, quota) => {
    expect(milliCpuToQuota(milli, period)).toBe(quota);
  });
});
