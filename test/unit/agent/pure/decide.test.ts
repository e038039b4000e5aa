// The agent's per-pod decision (decide), request validation, restart detection and the status
// write rule (only when changed, since kept while the state holds). The status annotation never
// stands for what was applied: only the agent's own record (Evidence.applied) does.
import { describe, expect, test } from '@jest/globals';
import type { AppliedRecord } from '../../../../src/agent/pure/applied-record.js';
import {
  decide,
  isRefusal,
  nextStatus,
  reportResult,
  restartedContainers,
  validateRequest,
  type Action,
  type Evidence,
  type ResizeResult,
  type StatusUpdate,
} from '../../../../src/agent/pure/decide.js';
import type { AdmissionResult } from '../../../../src/agent/pure/admission.js';
import { ANNOTATION_RESIZE_REQUEST, ANNOTATION_RESIZE_STATUS } from '../../../../src/api/types.js';
import {
  readResizeRequest,
  readResizeStatus,
  type ResizeRequest,
  type ResizeStatus,
} from '../../../../src/resize/agent-protocol.js';
import type { Pod } from '../../../../src/api/wire.js';
import { buildPod } from '../../../support/fixtures/pods.js';

const goodRequest: ResizeRequest = {
  revision: 'r2',
  containers: { app: { requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '400m', memory: '256Mi' } } },
};

function pod(annotations: Record<string, string> = {}, extra: Partial<Pod> = {}): Pod {
  return {
    ...buildPod({
      uid: 'u1',
      annotations,
      node: 'n1',
      containers: [
        {
          name: 'app',
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
        },
      ],
      initContainers: [{ name: 'side', restartPolicy: 'Always' }, { name: 'init' }],
      phase: 'Running',
    }),
    ...extra,
  };
}
const withRequest = (r: unknown, status?: ResizeStatus): Pod =>
  pod({
    [ANNOTATION_RESIZE_REQUEST]: typeof r === 'string' ? r : JSON.stringify(r),
    ...(status ? { [ANNOTATION_RESIZE_STATUS]: JSON.stringify(status) } : {}),
  });
const admitted: AdmissionResult = { decision: 'Admit' };
const deferred: AdmissionResult = { decision: 'Deferred', reason: 'InsufficientNodeResources', message: 'cpu' };
const infeasible: AdmissionResult = { decision: 'Infeasible', reason: 'ExceedsAllocatable', message: 'cpu' };
const done: ResizeStatus = {
  revision: 'r2',
  state: '',
  since: '2024-01-01T00:00:00Z',
  applied: { app: { containerID: 'c1' } },
};

const record: AppliedRecord = {
  revision: 'r2',
  containers: {
    app: { containerID: 'c1', requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '400m', memory: '256Mi' } },
  },
};

describe('decide', () => {
  const run = (p: Pod, admission: AdmissionResult | undefined, kubelet = false, more: Partial<Evidence> = {}): Action =>
    decide(p, readResizeRequest(p), readResizeStatus(p), {
      workloadOwned: true,
      kubeletResizes: kubelet,
      applied: undefined,
      admission,
      ...more,
    });
  const kubeletAnswer = {
    action: 'Report',
    status: expect.objectContaining({ state: 'Infeasible', reason: 'KubeletResizes' }),
  };

  test.each<[string, Pod, AdmissionResult | undefined, boolean, Partial<Record<string, unknown>>]>([
    ['no request: nothing', pod(), admitted, false, { action: 'None', why: 'no resize request' }],
    [
      'kubelet resizes: the request is answered KubeletResizes, never left silent',
      withRequest(goodRequest),
      admitted,
      true,
      { ...kubeletAnswer, revision: 'r2' },
    ],
    [
      'kubelet resizes: an invalid request is answered KubeletResizes too',
      withRequest('{'),
      admitted,
      true,
      kubeletAnswer,
    ],
    [
      'not JSON: Infeasible InvalidRequest',
      withRequest('{half'),
      admitted,
      false,
      {
        action: 'Report',
        status: expect.objectContaining({
          state: 'Infeasible',
          reason: 'InvalidRequest',
          message: expect.stringMatching(/not JSON/),
        }),
      },
    ],
    [
      'no revision: InvalidRequest',
      withRequest({ containers: { app: {} } }),
      admitted,
      false,
      {
        action: 'Report',
        status: expect.objectContaining({ reason: 'InvalidRequest', message: expect.stringMatching(/revision/) }),
      },
    ],
    [
      'unknown container: InvalidRequest',
      withRequest({ revision: 'r2', containers: { nope: {} } }),
      admitted,
      false,
      {
        action: 'Report',
        revision: 'r2',
        status: expect.objectContaining({ reason: 'InvalidRequest', message: expect.stringMatching(/nope/) }),
      },
    ],
    [
      'plain init container: InvalidRequest',
      withRequest({ revision: 'r2', containers: { init: {} } }),
      admitted,
      false,
      { action: 'Report', status: expect.objectContaining({ reason: 'InvalidRequest' }) },
    ],
    [
      'unreadable quantity: InvalidRequest',
      withRequest({ revision: 'r2', containers: { side: { requests: { cpu: 'fast' } } } }),
      admitted,
      false,
      {
        action: 'Report',
        status: expect.objectContaining({ reason: 'InvalidRequest', message: expect.stringMatching(/fast/) }),
      },
    ],
    [
      'Deferred admission: reported, retried',
      withRequest(goodRequest),
      deferred,
      false,
      {
        action: 'Report',
        status: { state: 'Deferred', reason: 'InsufficientNodeResources', message: 'cpu' },
        retryAfterMs: 30_000,
      },
    ],
    [
      'Infeasible admission: reported',
      withRequest(goodRequest),
      infeasible,
      false,
      { action: 'Report', status: expect.objectContaining({ state: 'Infeasible' }) },
    ],
    ['admission unknown: wait', withRequest(goodRequest), undefined, false, { action: 'None', retryAfterMs: 5_000 }],
    ['admitted: actuate', withRequest(goodRequest), admitted, false, { action: 'Actuate', request: goodRequest }],
    [
      'a status claiming this revision applied (forged or stale) does not skip admission',
      withRequest(goodRequest, done),
      infeasible,
      false,
      { action: 'Report', status: expect.objectContaining({ state: 'Infeasible', reason: 'ExceedsAllocatable' }) },
    ],
    [
      'a status claiming applied with empty applied values does not skip admission',
      withRequest(goodRequest, { ...done, applied: {} }),
      deferred,
      false,
      { action: 'Report', status: expect.objectContaining({ state: 'Deferred' }) },
    ],
    [
      'a status claiming applied does not skip actuation either',
      withRequest(goodRequest, done),
      admitted,
      false,
      { action: 'Actuate' },
    ],
    [
      'refused earlier (InProgress): try again',
      withRequest(goodRequest, { ...done, state: 'InProgress', reason: 'MemoryLimitBelowUsage' }),
      admitted,
      false,
      { action: 'Actuate' },
    ],
    [
      'terminating pod: nothing',
      {
        ...withRequest(goodRequest),
        metadata: { ...withRequest(goodRequest).metadata, deletionTimestamp: '2024-01-01T00:00:00Z' },
      },
      admitted,
      false,
      { action: 'None' },
    ],
    [
      'finished pod: nothing',
      { ...withRequest(goodRequest), status: { phase: 'Succeeded' } },
      admitted,
      false,
      { action: 'None' },
    ],
  ])('%s', (_, p, admission, kubelet, want) => {
    expect(run(p, admission, kubelet)).toMatchObject(want);
  });

  test.each<[string, Partial<Evidence>, Partial<Record<string, unknown>>]>([
    [
      'a pod without a CloneSet owner is ignored: no answer, no action',
      { workloadOwned: false },
      { action: 'None', why: expect.stringMatching(/CloneSet/) },
    ],
    [
      'a pod without a CloneSet owner is ignored even where the kubelet resizes',
      { workloadOwned: false, kubeletResizes: true },
      { action: 'None' },
    ],
    [
      'what the agent itself applied for this revision: verify, no re-admission',
      { applied: record, admission: deferred },
      { action: 'Verify', applied: record.containers },
    ],
    [
      'what the agent applied for an older revision: admit again',
      { applied: { ...record, revision: 'r1' } },
      { action: 'Actuate' },
    ],
    [
      'a request the revision does not ask for is refused NotInRevision',
      { notInRevision: 'container app: cpu request 200m, the revision asks for 100m' },
      {
        action: 'Report',
        status: expect.objectContaining({
          state: 'Infeasible',
          reason: 'NotInRevision',
          message: expect.stringMatching(/revision asks for/),
        }),
      },
    ],
    [
      'a revision not in the cache yet: wait, no verdict',
      { revisionPending: true },
      { action: 'None', retryAfterMs: 5_000 },
    ],
    [
      'a QoS class change is refused',
      { qosChange: 'from Burstable to Guaranteed' },
      { action: 'Report', status: expect.objectContaining({ state: 'Infeasible', reason: 'QoSClassChange' }) },
    ],
    [
      'a RestartContainer resize is refused, never resized live',
      { restartRequired: 'container app has resizePolicy RestartContainer' },
      {
        action: 'Report',
        status: expect.objectContaining({ state: 'Infeasible', reason: 'RestartContainerUnsupported' }),
      },
    ],
    [
      "a request outside the namespace's LimitRange is refused",
      {
        namespaceLimits: {
          reason: 'OutsideLimitRange',
          message: 'LimitRange: maximum cpu usage per Container is 300m, but limit is 400m',
        },
      },
      {
        action: 'Report',
        status: expect.objectContaining({
          state: 'Infeasible',
          reason: 'OutsideLimitRange',
          message: expect.stringMatching(/300m/),
        }),
      },
    ],
    [
      'growth a ResourceQuota did not charge is refused, even when the agent applied it before',
      { namespaceLimits: { reason: 'GrowthNotChargedToQuota', message: 'quota q' }, applied: record },
      { action: 'Report', status: expect.objectContaining({ state: 'Infeasible', reason: 'GrowthNotChargedToQuota' }) },
    ],
  ])('%s', (_, more, want) => {
    expect(run(withRequest(goodRequest, done), admitted, false, more)).toMatchObject(want);
  });
});

describe('validateRequest', () => {
  test.each<[string, ResizeRequest['containers'], RegExp | undefined]>([
    ['valid', goodRequest.containers, undefined],
    ['a sidecar may be resized', { side: { requests: { cpu: '10m' } } }, undefined],
    [
      'request above limit',
      { app: { requests: { cpu: '2' }, limits: { cpu: '1', memory: '1Gi' } } },
      /cpu request 2 is above its limit 1/,
    ],
    [
      'a limit dropped',
      { app: { requests: { cpu: '100m' }, limits: { memory: '1Gi' } } },
      /cpu limit cannot be removed/,
    ],
    ['negative', { app: { requests: { memory: '-1Mi' }, limits: { cpu: '1', memory: '1Gi' } } }, /memory/],
  ])('%s', (_, containers, want) => {
    const problem = validateRequest({ revision: 'r', containers }, pod());
    if (want) expect(problem).toMatch(want);
    else expect(problem).toBeUndefined();
  });
});

describe('restartedContainers', () => {
  test.each<[string, Record<string, string>, string[]]>([
    ['same instance', { app: 'c1' }, []],
    ['restarted: new ID', { app: 'c2' }, ['app']],
    ['not running: left for later', {}, []],
  ])('%s', (_, running, want) => {
    expect(restartedContainers({ app: { containerID: 'c1' } }, new Map(Object.entries(running)), ['app'])).toEqual(
      want,
    );
  });
  test('a container never applied counts as restarted', () => {
    expect(restartedContainers({}, new Map([['app', 'c1']]), ['app'])).toEqual(['app']);
  });
});

describe('nextStatus', () => {
  const now = '2024-02-02T00:00:00Z';
  const prev: ResizeStatus = {
    revision: 'r2',
    state: 'Deferred',
    reason: 'X',
    message: 'm',
    since: '2024-01-01T00:00:00Z',
  };
  test.each<[string, ResizeStatus | undefined, string, Parameters<typeof nextStatus>[2], ResizeStatus | undefined]>([
    [
      'first status',
      undefined,
      'r2',
      { state: 'Deferred', reason: 'X', message: 'm' },
      { revision: 'r2', state: 'Deferred', reason: 'X', message: 'm', since: now },
    ],
    ['unchanged: no write', prev, 'r2', { state: 'Deferred', reason: 'X', message: 'm' }, undefined],
    [
      'same state, new message: written, since kept',
      prev,
      'r2',
      { state: 'Deferred', reason: 'X', message: 'm2' },
      { ...prev, message: 'm2' },
    ],
    [
      'new state: since now',
      prev,
      'r2',
      { state: '', applied: { app: { containerID: 'c' } } },
      { revision: 'r2', state: '', since: now, applied: { app: { containerID: 'c' } } },
    ],
    [
      'new revision, same state: since now',
      prev,
      'r3',
      { state: 'Deferred', reason: 'X', message: 'm' },
      { ...prev, revision: 'r3', since: now },
    ],
  ])('%s', (_, before, revision, update, want) => {
    expect(nextStatus(before, revision, update, now)).toEqual(want);
  });
});

describe('reportResult', () => {
  test.each<[string, StatusUpdate, ResizeResult, boolean]>([
    ['the kubelet resizes', { state: 'Infeasible', reason: 'KubeletResizes' }, 'kubelet', false],
    ['an invalid request is refused', { state: 'Infeasible', reason: 'InvalidRequest' }, 'refused', true],
    ['a request outside the revision is refused', { state: 'Infeasible', reason: 'NotInRevision' }, 'refused', true],
    ['a QoS class change is refused', { state: 'Infeasible', reason: 'QoSClassChange' }, 'refused', true],
    [
      'a restart the agent does not do is refused',
      { state: 'Infeasible', reason: 'RestartContainerUnsupported' },
      'refused',
      true,
    ],
    ['outside a LimitRange is refused', { state: 'Infeasible', reason: 'OutsideLimitRange' }, 'refused', true],
    [
      'growth the quota did not charge is refused',
      { state: 'Infeasible', reason: 'GrowthNotChargedToQuota' },
      'refused',
      true,
    ],
    ['no room next to the other pods now', { state: 'Deferred', reason: 'NodeFull' }, 'deferred', false],
    ['never fits the node', { state: 'Infeasible', reason: 'NodeAllocatable' }, 'infeasible', false],
  ])('%s', (_, status, result, refusal) => {
    expect(reportResult(status)).toBe(result);
    expect(isRefusal(status.reason ?? '')).toBe(refusal);
  });
});
