// Resize admission on the agent: Admit / Deferred / Infeasible against node allocatable minus the
// other pods' effective requests (the larger of spec and agent-applied), pod request arithmetic.
import { describe, expect, test } from '@jest/globals';
import {
  admit,
  effectivePodRequest,
  nodeAllocatable,
  podRequest,
  type AppliedByPod,
} from '../../../../src/agent/pure/admission.js';
import type { ContainerResources, ResizeRequest } from '../../../../src/resize/agent-protocol.js';
import type { Pod } from '../../../../src/api/wire.js';
import { buildPod } from '../../../support/fixtures/pods.js';

const Gi = 1024n * 1024n * 1024n;

function pod(
  uid: string,
  containers: Record<string, ContainerResources>,
  extra: Partial<NonNullable<Pod['spec']>> = {},
  phase = 'Running',
): Pod {
  return buildPod({
    name: `p-${uid}`,
    namespace: 'default',
    uid,
    node: 'n1',
    containers: Object.entries(containers).map(([name, resources]) => ({ name, resources })),
    spec: extra,
    phase,
  });
}
const req = (cpu: string, memory: string): ContainerResources => ({ requests: { cpu, memory } });
const request = (containers: Record<string, ContainerResources>): ResizeRequest => ({ revision: 'r2', containers });
const node = { cpuMilli: 4000n, memoryBytes: 8n * Gi };
const none: AppliedByPod = new Map();

describe('podRequest', () => {
  test.each<[string, Pod, bigint, bigint]>([
    ['containers add up', pod('a', { x: req('100m', '1Gi'), y: req('200m', '1Gi') }), 300n, 2n * Gi],
    ['a request absent takes the limit', pod('a', { x: { limits: { cpu: '1', memory: '1Gi' } } }), 1000n, Gi],
    ['no resources is zero', pod('a', { x: {} }), 0n, 0n],
    [
      'a plain init container counts as a maximum',
      pod(
        'a',
        { x: req('100m', '1Gi') },
        { initContainers: [{ name: 'i', resources: { requests: { cpu: '2', memory: '100Mi' } } }] },
      ),
      2000n,
      Gi,
    ],
    [
      'sidecars add to the containers',
      pod(
        'a',
        { x: req('100m', '1Gi') },
        {
          initContainers: [
            { name: 's', restartPolicy: 'Always', resources: { requests: { cpu: '50m', memory: '1Gi' } } },
          ],
        },
      ),
      150n,
      2n * Gi,
    ],
    ['overhead adds', pod('a', { x: req('100m', '1Gi') }, { overhead: { cpu: '10m', memory: '1Gi' } }), 110n, 2n * Gi],
  ])('%s', (_, p, cpu, memory) => {
    expect(podRequest(p)).toEqual({ cpuMilli: cpu, memoryBytes: memory });
  });

  test('an unreadable quantity throws, naming pod and container', () => {
    expect(() => podRequest(pod('a', { x: req('lots', '1Gi') }))).toThrow(/pod p-a container x request cpu "lots"/);
  });
});

describe('effectivePodRequest', () => {
  test.each<[string, Record<string, ContainerResources> | undefined, bigint, bigint]>([
    ['no applied values: the spec', undefined, 500n, Gi],
    ['applied larger than spec: the applied', { x: req('2', '3Gi') }, 2000n, 3n * Gi],
    ['applied smaller than spec: the spec', { x: req('100m', '100Mi') }, 500n, Gi],
    ['each resource on its own', { x: req('1', '100Mi') }, 1000n, Gi],
    ['applied for an unknown container: ignored', { zzz: req('9', '9Gi') }, 500n, Gi],
  ])('%s', (_, applied, cpu, memory) => {
    expect(effectivePodRequest(pod('a', { x: req('500m', '1Gi') }), applied)).toEqual({
      cpuMilli: cpu,
      memoryBytes: memory,
    });
  });
});

describe('admit', () => {
  const self = pod('self', { app: req('500m', '1Gi'), side: req('100m', '100Mi') });
  const other = pod('o1', { c: req('2', '4Gi') });

  test.each<[string, ResizeRequest, Pod[], AppliedByPod, string, RegExp | undefined]>([
    ['fits: admitted', request({ app: req('1', '2Gi') }), [other], none, 'Admit', undefined],
    [
      'the pod itself is not counted among the others',
      request({ app: req('1', '2Gi') }),
      [self, other],
      none,
      'Admit',
      undefined,
    ],
    [
      'cpu above allocatable: Infeasible',
      request({ app: req('5', '1Gi') }),
      [],
      none,
      'Infeasible',
      /cpu, requested: 5100m, capacity: 4000m/,
    ],
    [
      'memory above allocatable: Infeasible',
      request({ app: req('1', '9Gi') }),
      [],
      none,
      'Infeasible',
      /memory, requested: /,
    ],
    [
      'fits the node but not what others leave: Deferred',
      request({ app: req('2', '1Gi') }),
      [other],
      none,
      'Deferred',
      /cpu, requested: 2100m, used: 2000m/,
    ],
    [
      'others count with what the agent applied to them',
      request({ app: req('1', '1Gi') }),
      [other],
      new Map([['o1', { c: req('3', '4Gi') }]]),
      'Deferred',
      /used: 3000m/,
    ],
    [
      'finished pods free their resources',
      request({ app: req('2', '1Gi') }),
      [pod('o1', { c: req('2', '4Gi') }, {}, 'Succeeded')],
      none,
      'Admit',
      undefined,
    ],
    [
      'containers the request does not name keep their spec',
      request({ app: req('3901m', '1Gi') }),
      [],
      none,
      'Infeasible',
      /requested: 4001m/,
    ],
    [
      'limits only: the limit is the request',
      request({ app: { limits: { cpu: '3', memory: '1Gi' } } }),
      [other],
      none,
      'Deferred',
      /requested: 3100m/,
    ],
    [
      'an unreadable quantity is Infeasible InvalidRequest',
      request({ app: req('x', '1Gi') }),
      [],
      none,
      'Infeasible',
      /"x" is not a valid quantity/,
    ],
    ['exactly allocatable fits', request({ app: req('3900m', '1Gi') }), [], none, 'Admit', undefined],
  ])('%s', (_, r, others, applied, decision, message) => {
    const result = admit(r, self, node, others, applied);
    expect(result.decision).toBe(decision);
    if (message) expect(result.decision !== 'Admit' && result.message).toMatch(message);
  });

  test('Infeasible wins over Deferred (waiting cannot help)', () => {
    const r = admit(request({ app: req('5', '1Gi') }), self, node, [other], none);
    expect(r).toMatchObject({ decision: 'Infeasible', reason: 'ExceedsAllocatable' });
  });
});

describe('nodeAllocatable', () => {
  test.each<[string, Record<string, string> | undefined, unknown]>([
    ['both', { cpu: '3800m', memory: '7Gi', pods: '110' }, { cpuMilli: 3800n, memoryBytes: 7n * Gi }],
    ['missing memory', { cpu: '4' }, undefined],
    ['none', undefined, undefined],
  ])('%s', (_, input, want) => {
    expect(nodeAllocatable(input)).toEqual(want);
  });
});

describe('admission checks limits as well as requests', () => {
  const lim = (cpuReq: string, cpuLim: string, memReq: string, memLim: string): ContainerResources => ({
    requests: { cpu: cpuReq, memory: memReq },
    limits: { cpu: cpuLim, memory: memLim },
  });
  test.each<[string, ContainerResources, string, string | undefined]>([
    [
      'a cpu limit beyond allocatable is Infeasible though the request fits',
      lim('1', '5', '1Gi', '1Gi'),
      'Infeasible',
      'LimitExceedsAllocatable',
    ],
    [
      'a memory limit beyond allocatable is Infeasible though the request fits',
      lim('1', '1', '1Gi', '9Gi'),
      'Infeasible',
      'LimitExceedsAllocatable',
    ],
    ['a limit at allocatable is admitted', lim('1', '4', '1Gi', '8Gi'), 'Admit', undefined],
    ['no limit at all is admitted (bounded by the node itself)', req('1', '1Gi'), 'Admit', undefined],
  ])('%s', (_, resources, decision, reason) => {
    const result = admit(request({ x: resources }), pod('a', { x: req('100m', '100Mi') }), node, [], none);
    expect(result).toMatchObject({ decision, ...(reason ? { reason } : {}) });
  });

  test('limits of several containers add up against allocatable', () => {
    const p = pod('a', { x: req('100m', '100Mi'), y: lim('100m', '3', '100Mi', '100Mi') });
    expect(admit(request({ x: lim('100m', '2', '100Mi', '100Mi') }), p, node, [], none)).toMatchObject({
      decision: 'Infeasible',
      reason: 'LimitExceedsAllocatable',
      message: expect.stringMatching(/cpu limit, requested: 5000m, capacity: 4000m/),
    });
  });
});
