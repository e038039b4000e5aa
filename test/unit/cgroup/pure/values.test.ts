// Tables for the cgroup v2 values (cpu.weight, cpu.max, memory.max) of cpu shares, quota and memory
// limits, worked out by hand from the kubelet v1.34.4 and runc formulas quoted in src/cgroup/pure/values.ts.
import { describe, expect, test } from '@jest/globals';
import { toLinuxResources } from '../../../../src/cri/pure/convert.js';
import {
  cpuMaxValue,
  cpuWeightToShares,
  memoryMaxValue,
  sharesToCpuWeight,
  sharesToCpuWeightQuadratic,
  toCgroupV2Values,
} from '../../../../src/cgroup/pure/values.js';

const Mi = 1024n * 1024n;
const Gi = 1024n * Mi;

describe('cgroup v2 values', () => {
  test.each([
    [0n, 1n],
    [1n, 1n],
    [2n, 1n],
    [3n, 1n],
    [28n, 1n],
    [29n, 2n],
    [1024n, 39n],
    [102n, 4n],
    [262_143n, 9_999n],
    [262_144n, 10_000n],
    [1_000_000n, 10_000n],
  ])('%p shares are cpu.weight %p (linear, as the kubelet)', (shares, weight) => {
    expect(sharesToCpuWeight(shares)).toBe(weight);
  });

  test.each([
    [0n, 0n],
    [1n, 1n],
    [2n, 1n],
    [3n, 2n],
    [1024n, 100n],
    [262_143n, 10_000n],
    [262_144n, 10_000n],
    [262_145n, 10_000n],
  ])('%p shares are cpu.weight %p for a runtime on the quadratic map', (shares, weight) => {
    expect(sharesToCpuWeightQuadratic(shares)).toBe(weight);
  });

  test.each([
    [50_000n, 100_000n, '50000 100000'],
    [0n, 100_000n, 'max 100000'],
    [-1n, 100_000n, 'max 100000'],
    [1_000n, 0n, '1000 100000'],
  ])('quota %p and period %p are cpu.max %p', (quota, period, value) => {
    expect(cpuMaxValue(quota, period)).toBe(value);
  });

  test.each([
    [128n * Mi, '134217728'],
    [0n, 'max'],
    [-1n, 'max'],
  ])('memory limit %p is memory.max %p', (bytes, value) => {
    expect(memoryMaxValue(bytes)).toBe(value);
  });

  test('a converted container maps to all three v2 values', () => {
    const r = toLinuxResources({ requests: { cpu: '1' }, limits: { cpu: '1500m', memory: '1Gi' } });
    expect(toCgroupV2Values(r)).toEqual({ cpuWeight: 39n, cpuMax: '150000 100000', memoryMax: String(Gi) });
  });

  test('a container without limits maps to max on both', () => {
    expect(toCgroupV2Values(toLinuxResources({}))).toEqual({ cpuWeight: 1n, cpuMax: 'max 100000', memoryMax: 'max' });
  });

  test.each([2n, 100n, 1024n, 262_144n])('cpuWeightToShares inverts the linear map for %s shares', (shares) => {
    expect(sharesToCpuWeight(cpuWeightToShares(sharesToCpuWeight(shares)))).toBe(sharesToCpuWeight(shares));
  });
});
