// The namespace's LimitRanges and ResourceQuotas judge an agent resize the API server never sees:
// LimitRanger's checks on the pod with the request in place, and no growth past the spec that a
// quota charged unless the operator allows it.
import { describe, expect, test } from '@jest/globals';
import {
  growthNotChargedToQuota,
  limitRangeViolation,
  namespaceLimitsVerdict,
  type LimitRange,
  type ResourceQuota,
} from '../../../../src/agent/pure/namespace-limits.js';
import type { Pod } from '../../../../src/api/wire.js';
import { buildPod } from '../../../support/fixtures/pods.js';
import type { ContainerResources, ResizeRequest } from '../../../../src/resize/agent-protocol.js';

const res = (cpu: string, memory: string, limits?: [string, string]): ContainerResources => ({
  requests: { cpu, memory },
  ...(limits ? { limits: { cpu: limits[0], memory: limits[1] } } : {}),
});
const pod = (app: ContainerResources, extra: Partial<NonNullable<Pod['spec']>> = {}): Pod =>
  buildPod({ name: 'web-1', containers: [{ name: 'app', resources: app }], spec: extra });
const request = (app: ContainerResources): ResizeRequest => ({ revision: 'r2', containers: { app } });
const range = (...limits: NonNullable<LimitRange['spec']>['limits']): LimitRange => ({
  metadata: { name: 'lr', namespace: 'ns' },
  spec: { limits },
});
const quota = (hard: Record<string, string>): ResourceQuota => ({
  metadata: { name: 'compute', namespace: 'ns' },
  spec: { hard },
});

const small = res('100m', '64Mi', ['200m', '128Mi']);

describe('limitRangeViolation', () => {
  test.each<[string, LimitRange, ContainerResources, RegExp | undefined]>([
    [
      'within every bound',
      range({ type: 'Container', min: { cpu: '5m' }, max: { cpu: '1', memory: '1Gi' } }),
      res('200m', '128Mi', ['400m', '256Mi']),
      undefined,
    ],
    [
      'a limit above the container maximum',
      range({ type: 'Container', max: { cpu: '300m' } }),
      res('200m', '128Mi', ['400m', '256Mi']),
      /^LimitRange: maximum cpu usage per Container is 300m, but limit is 400m$/,
    ],
    [
      'a request below the container minimum (shrinking is checked too)',
      range({ type: 'Container', min: { memory: '64Mi' } }),
      res('100m', '32Mi', ['200m', '128Mi']),
      /minimum memory usage per Container is 64Mi, but request is 32Mi/,
    ],
    [
      'a limit/request ratio above the maximum',
      range({ type: 'Container', maxLimitRequestRatio: { cpu: '2' } }),
      res('100m', '64Mi', ['300m', '128Mi']),
      /cpu max limit to request ratio per Container is 2, but provided ratio is 3\.000000/,
    ],
    [
      'a ratio exactly at the maximum',
      range({ type: 'Container', maxLimitRequestRatio: { cpu: '2' } }),
      res('100m', '64Mi', ['200m', '128Mi']),
      undefined,
    ],
    [
      'a pod total above the pod maximum, sidecar included',
      range({ type: 'Pod', max: { memory: '300Mi' } }),
      res('100m', '128Mi', ['200m', '256Mi']),
      /maximum memory usage per Pod is 300Mi, but limit is 320Mi/,
    ],
  ])('%s', (_, lr, app, want) => {
    const p = pod(small, {
      initContainers: [{ name: 'proxy', restartPolicy: 'Always', resources: res('10m', '32Mi', ['10m', '64Mi']) }],
    });
    const got = limitRangeViolation(p, request(app), [lr]);
    if (want) expect(got).toMatch(want);
    else expect(got).toBeUndefined();
  });

  test('items of another type (PersistentVolumeClaim) are not read', () => {
    expect(
      limitRangeViolation(pod(small), request(res('1', '1Gi', ['2', '2Gi'])), [
        range({ type: 'PersistentVolumeClaim', max: { storage: '1Gi' } }),
      ]),
    ).toBeUndefined();
  });
});

describe('growthNotChargedToQuota', () => {
  test.each<[string, Record<string, string>, ContainerResources, RegExp | undefined]>([
    [
      'a cpu request above the spec where requests.cpu is charged',
      { 'requests.cpu': '10' },
      res('200m', '64Mi', ['200m', '128Mi']),
      /container app: the cpu request would grow from 100m to 200m beyond the pod spec, which ResourceQuota compute \(requests\.cpu\) charges/,
    ],
    [
      'the plain cpu key charges requests too',
      { cpu: '10' },
      res('200m', '64Mi', ['200m', '128Mi']),
      /cpu request would grow/,
    ],
    [
      'a memory limit above the spec where limits.memory is charged',
      { 'limits.memory': '10Gi' },
      res('100m', '64Mi', ['200m', '256Mi']),
      /memory limit would grow from 128Mi to 256Mi .*\(limits\.memory\)/,
    ],
    [
      'growth of a resource no quota charges',
      { 'requests.memory': '10Gi', pods: '10' },
      res('200m', '64Mi', ['400m', '128Mi']),
      undefined,
    ],
    [
      'a limit grows where only requests are charged',
      { 'requests.cpu': '10' },
      res('100m', '64Mi', ['400m', '128Mi']),
      undefined,
    ],
    [
      'shrinking is always within the charge',
      { 'requests.cpu': '10', 'limits.memory': '1Gi' },
      res('50m', '32Mi', ['100m', '64Mi']),
      undefined,
    ],
    ['growing back up to the spec is within the charge', { 'requests.cpu': '10' }, small, undefined],
  ])('%s', (_, hard, app, want) => {
    const got = growthNotChargedToQuota(pod(small), request(app), [quota(hard)]);
    if (want) expect(got).toMatch(want);
    else expect(got).toBeUndefined();
  });

  test('no quota in the namespace: growth is free', () => {
    expect(growthNotChargedToQuota(pod(small), request(res('1', '1Gi', ['2', '2Gi'])), [])).toBeUndefined();
  });
});

describe('namespaceLimitsVerdict', () => {
  const grow = request(res('200m', '64Mi', ['200m', '128Mi']));
  test('growth a quota charges is refused unless the operator allows it', () => {
    expect(namespaceLimitsVerdict(pod(small), grow, [], [quota({ 'requests.cpu': '10' })], false)).toMatchObject({
      reason: 'GrowthNotChargedToQuota',
    });
    expect(namespaceLimitsVerdict(pod(small), grow, [], [quota({ 'requests.cpu': '10' })], true)).toBeUndefined();
  });

  test('a LimitRange is enforced whatever the operator allows', () => {
    const lr = range({ type: 'Container', max: { cpu: '150m' } });
    expect(namespaceLimitsVerdict(pod(small), grow, [lr], [], true)).toMatchObject({ reason: 'OutsideLimitRange' });
  });
});
