// What the agent checks before admission: a CloneSet controller owner, the request against its
// ControllerRevision's template, QoS class changes, and resizePolicy RestartContainer.
import { describe, expect, test } from '@jest/globals';
import {
  workloadOwner,
  qosClassChange,
  requestNotInRevision,
  restartRequiredBy,
} from '../../../../src/agent/pure/authorize.js';
import type { ControllerRevision } from '../../../../src/api/revision.js';
import type { ContainerResources, ResizeRequest } from '../../../../src/resize/agent-protocol.js';
import type { Pod } from '../../../../src/api/wire.js';
import { buildPod } from '../../../support/fixtures/pods.js';

const OWNER = { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs1', controller: true };
const r = (
  cpuReq: string,
  cpuLim: string | undefined,
  memReq: string,
  memLim: string | undefined,
): ContainerResources => ({
  requests: { cpu: cpuReq, memory: memReq },
  limits: { ...(cpuLim ? { cpu: cpuLim } : {}), ...(memLim ? { memory: memLim } : {}) },
});

function pod(
  resources: ContainerResources,
  extra: { owners?: object[]; label?: string; resizePolicy?: object[]; qosClass?: string } = {},
): Pod {
  return buildPod({
    uid: 'u1',
    labels: { 'controller-revision-hash': extra.label ?? 'web-r2' },
    ownerReferences: (extra.owners ?? [OWNER]) as never,
    node: 'n1',
    containers: [
      { name: 'app', resources, ...(extra.resizePolicy ? { resizePolicy: extra.resizePolicy as never } : {}) },
    ],
    phase: 'Running',
    ...(extra.qosClass ? { status: { qosClass: extra.qosClass } } : {}),
  });
}
const revision = (resources: object, owner: object = OWNER): ControllerRevision => ({
  revision: 2,
  metadata: { name: 'web-r2', namespace: 'ns', ownerReferences: [owner as never] },
  data: { template: { spec: { containers: [{ name: 'app', resources }] } } },
});
const request = (containers: Record<string, ContainerResources>, rev = 'web-r2'): ResizeRequest => ({
  revision: rev,
  containers,
});

describe('the workload owner', () => {
  test.each<[string, object[], boolean]>([
    ['an apps.tailor.dev CloneSet controller', [OWNER], true],
    ['an apps.tailor.dev InPlaceStatefulSet controller', [{ ...OWNER, kind: 'InPlaceStatefulSet' }], true],
    ['a StatefulSet of apps/v1 is not ours', [{ ...OWNER, apiVersion: 'apps/v1', kind: 'StatefulSet' }], false],
    ['a CloneSet of another group (Kruise) is not ours', [{ ...OWNER, apiVersion: 'apps.kruise.io/v1alpha1' }], false],
    [
      'a ReplicaSet is not ours',
      [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'x', controller: true }],
      false,
    ],
    ['a CloneSet owner that is not the controller is not enough', [{ ...OWNER, controller: false }], false],
    ['no owner', [], false],
  ])('%s', (_, owners, want) => {
    expect(workloadOwner(pod({}, { owners })) !== undefined).toBe(want);
  });
});

describe('the request against its revision', () => {
  const template = { requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '400m', memory: '256Mi' } };
  const asked = r('200m', '400m', '128Mi', '256Mi');
  test.each<[string, Pod, ResizeRequest, ControllerRevision | undefined, RegExp | undefined]>([
    ['exactly the revision: accepted', pod({}), request({ app: asked }), revision(template), undefined],
    [
      'equal quantities in other spellings: accepted',
      pod({}),
      request({ app: r('0.2', '400m', '134217728', '256Mi') }),
      revision(template),
      undefined,
    ],
    [
      'a limit-only template, request defaulted from the limit: accepted',
      pod({}),
      request({ app: r('1', '1', '1Gi', '1Gi') }),
      revision({ limits: { cpu: '1', memory: '1Gi' } }),
      undefined,
    ],
    [
      'a larger cpu request than the revision: refused',
      pod({}),
      request({ app: r('3', '4', '128Mi', '256Mi') }),
      revision(template),
      /cpu request 3, the revision asks for 200m/,
    ],
    [
      'a memory limit the revision does not set: refused',
      pod({}),
      request({ app: r('200m', '400m', '128Mi', '1Gi') }),
      revision(template),
      /memory limit 1Gi/,
    ],
    [
      'a container the revision does not have: refused',
      pod({}),
      request({ other: asked }),
      revision(template),
      /no container other/,
    ],
    [
      'a revision of another CloneSet: refused',
      pod({}),
      request({ app: asked }),
      revision(template, { ...OWNER, uid: 'cs2' }),
      /does not belong to CloneSet web/,
    ],
    [
      'a revision the pod is not labelled with: refused',
      pod({}, { label: 'web-r1' }),
      request({ app: asked }),
      revision(template),
      /pod is labelled with revision web-r1/,
    ],
    ['a revision that does not exist: refused', pod({}), request({ app: asked }), undefined, /does not exist/],
    [
      'a pod that is not a CloneSet pod: refused',
      pod({}, { owners: [] }),
      request({ app: asked }),
      revision(template),
      /not controlled by a CloneSet/,
    ],
  ])('%s', (_, p, req, rev, want) => {
    const problem = requestNotInRevision(p, req, rev);
    if (want) expect(problem).toMatch(want);
    else expect(problem).toBeUndefined();
  });
});

describe('QoS class changes', () => {
  test.each<[string, ContainerResources, ContainerResources, string | undefined, boolean]>([
    [
      'Burstable to Burstable: allowed',
      r('100m', '200m', '64Mi', '128Mi'),
      r('200m', '400m', '128Mi', '256Mi'),
      undefined,
      false,
    ],
    [
      'Guaranteed to Guaranteed: allowed',
      r('100m', '100m', '64Mi', '64Mi'),
      r('200m', '200m', '128Mi', '128Mi'),
      undefined,
      false,
    ],
    [
      'Burstable to Guaranteed: refused',
      r('100m', '200m', '64Mi', '128Mi'),
      r('200m', '200m', '128Mi', '128Mi'),
      undefined,
      true,
    ],
    [
      'Guaranteed to Burstable: refused',
      r('100m', '100m', '64Mi', '64Mi'),
      r('100m', '200m', '64Mi', '64Mi'),
      undefined,
      true,
    ],
    [
      'the status qosClass is the starting point when reported',
      r('100m', '100m', '64Mi', '64Mi'),
      r('100m', '100m', '64Mi', '64Mi'),
      'Burstable',
      true,
    ],
  ])('%s', (_, before, after, reported, refused) => {
    const problem = qosClassChange(pod(before, reported ? { qosClass: reported } : {}), request({ app: after }));
    expect(problem !== undefined).toBe(refused);
  });
});

describe('resizePolicy RestartContainer on the agent path', () => {
  const spec = r('100m', '200m', '64Mi', '128Mi');
  test.each<[string, object[] | undefined, ContainerResources, boolean]>([
    ['no policy: a live resize', undefined, r('200m', '400m', '64Mi', '128Mi'), false],
    [
      'NotRequired: a live resize',
      [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
      r('200m', '400m', '64Mi', '128Mi'),
      false,
    ],
    [
      'RestartContainer on a changed resource: refused',
      [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
      r('100m', '200m', '128Mi', '256Mi'),
      true,
    ],
    [
      'RestartContainer on an unchanged resource: a live resize',
      [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
      r('200m', '400m', '64Mi', '128Mi'),
      false,
    ],
  ])('%s', (_, policy, next, refused) => {
    const problem = restartRequiredBy(
      pod(spec, policy ? { resizePolicy: policy } : {}),
      request({ app: next }),
      () => undefined,
    );
    expect(problem !== undefined).toBe(refused);
    if (refused) expect(problem).toMatch(/RestartContainer/);
  });

  test('what the agent already applied is the starting point, not the spec', () => {
    const p = pod(spec, { resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] });
    const next = r('100m', '200m', '128Mi', '256Mi');
    expect(restartRequiredBy(p, request({ app: next }), () => next)).toBeUndefined();
  });
});
