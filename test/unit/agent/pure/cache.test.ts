// What the agent caches of pods and revisions: the fields its decisions read, nothing else, and the
// decisions read the same from the trimmed object as from the full one.
import { describe, expect, test } from '@jest/globals';
import { podRequest } from '../../../../src/agent/pure/admission.js';
import { workloadOwner, qosClassChange, requestNotInRevision } from '../../../../src/agent/pure/authorize.js';
import type { ControllerRevision } from '../../../../src/api/revision.js';
import {
  trimLimitRangeForAgent,
  trimPodForAgent,
  trimQuotaForAgent,
  trimRevisionForAgent,
} from '../../../../src/agent/pure/cache.js';
import { podCgroupValues } from '../../../../src/agent/pure/order.js';
import { stopPlan } from '../../../../src/agent/pure/prestop-plan.js';
import { containersToStop } from '../../../../src/agent/restart.js';
import type { Pod } from '../../../../src/api/wire.js';
import { nodeResizeEvidence } from '../../../../src/resize/backend.js';
import { readResizeRequest } from '../../../../src/resize/agent-protocol.js';

const owner = { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs-1', controller: true };
const request =
  '{"revision":"web-abc","containers":{"app":{"requests":{"cpu":"200m","memory":"64Mi"},"limits":{"cpu":"200m","memory":"64Mi"}}}}';

const fullPod = (): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-1',
    namespace: 'ns',
    uid: 'pod-1',
    resourceVersion: '42',
    labels: { app: 'web', 'controller-revision-hash': 'web-abc', secret: 'label' },
    annotations: {
      'apps.tailor.dev/resize-request': request,
      'apps.tailor.dev/resize-status': '{"revision":"web-abc","state":"","since":"2026-01-01T00:00:00Z"}',
      'apps.tailor.dev/restart-request': '{"revision":"web-abc","containers":{"app":"c1"}}',
      'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(10_000),
    },
    ownerReferences: [owner],
    managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
  },
  spec: {
    nodeName: 'node-a',
    overhead: { cpu: '50m', memory: '128Mi' },
    volumes: [{ name: 'data', emptyDir: {} }],
    initContainers: [
      {
        name: 'setup',
        image: 'busybox',
        command: ['sh', '-c', 'true'],
        resources: { requests: { cpu: '500m', memory: '256Mi' } },
      },
      {
        name: 'proxy',
        image: 'envoy',
        restartPolicy: 'Always',
        resources: { requests: { cpu: '100m', memory: '32Mi' } },
      },
    ],
    containers: [
      {
        name: 'app',
        image: 'tailor.local/busybox:v1',
        env: [{ name: 'PASSWORD', value: 'hunter2' }],
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
        resizePolicy: [{ resourceName: 'memory', restartPolicy: 'NotRequired' }],
        ports: [
          { name: 'admin', containerPort: 9901, protocol: 'TCP' },
          { containerPort: 9090, protocol: 'TCP' },
        ],
        lifecycle: {
          preStop: { httpGet: { port: 'admin', path: '/drain' } },
          postStart: { exec: { command: ['warm-up'] } },
        },
      },
    ],
  },
  status: {
    phase: 'Running',
    qosClass: 'Burstable',
    podIP: '198.18.16.3',
    containerStatuses: [
      {
        name: 'app',
        image: 'tailor.local/busybox:v1',
        imageID: 'sha256:abc',
        ready: true,
        restartCount: 0,
        state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
      },
    ],
  },
});

const revision = (): ControllerRevision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  revision: 1,
  metadata: {
    name: 'web-abc',
    namespace: 'ns',
    ownerReferences: [owner],
    labels: { 'apps.tailor.dev/cloneset': 'web' },
  },
  data: {
    template: {
      metadata: { labels: { app: 'web' }, annotations: { big: 'x'.repeat(100_000) } },
      spec: {
        volumes: [{ name: 'data' }],
        containers: [
          {
            name: 'app',
            image: 'tailor.local/busybox:v2',
            env: [{ name: 'PASSWORD', value: 'hunter2' }],
            resources: { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
          },
        ],
      },
    },
  },
});

describe('trimPodForAgent', () => {
  const trimmed = trimPodForAgent(fullPod());
  const text = JSON.stringify(trimmed);

  test.each([
    'hunter2',
    'last-applied-configuration',
    'secret',
    'emptyDir',
    'managedFields',
    'imageID',
    'postStart',
    'TCP',
    '9090',
  ])('drops what the agent does not read: %s', (what) => {
    expect(text).not.toContain(what);
  });

  test('keeps what the agent reads', () => {
    expect(trimmed.metadata).toEqual({
      name: 'web-1',
      namespace: 'ns',
      uid: 'pod-1',
      resourceVersion: '42',
      ownerReferences: [owner],
      labels: { 'controller-revision-hash': 'web-abc' },
      annotations: {
        'apps.tailor.dev/resize-request': request,
        'apps.tailor.dev/resize-status': '{"revision":"web-abc","state":"","since":"2026-01-01T00:00:00Z"}',
        'apps.tailor.dev/restart-request': '{"revision":"web-abc","containers":{"app":"c1"}}',
      },
    });
    expect(trimmed.spec?.initContainers?.map((c) => c.restartPolicy)).toEqual([undefined, 'Always']);
    expect(trimmed.spec?.containers[0]?.resizePolicy).toEqual([
      { resourceName: 'memory', restartPolicy: 'NotRequired' },
    ]);
    expect(trimmed.status?.containerStatuses).toEqual([{ name: 'app', state: { running: {} } }]);
  });

  test("keeps what a restart's preStop hook reads: the hook, the named ports, the pod IP", () => {
    expect(trimmed.spec?.containers[0]?.lifecycle).toEqual({ preStop: { httpGet: { port: 'admin', path: '/drain' } } });
    expect(trimmed.spec?.containers[0]?.ports).toEqual([{ name: 'admin', containerPort: 9901 }]);
    expect(trimmed.status?.podIP).toBe('198.18.16.3');
    expect(trimmed.spec?.initContainers?.map((c) => c.lifecycle)).toEqual([undefined, undefined]);
  });

  test('the decisions read the same from the trimmed pod as from the full one', () => {
    const full = fullPod();
    const r = readResizeRequest(full);
    if (!r.ok) throw new Error('fixture request unreadable');
    expect(readResizeRequest(trimmed)).toEqual(r);
    expect(stopPlan(trimmed, 'app')).toEqual(stopPlan(full, 'app'));
    expect(containersToStop(trimmed)).toEqual(containersToStop(full));
    expect(workloadOwner(trimmed)).toEqual(workloadOwner(full));
    expect(podRequest(trimmed)).toEqual(podRequest(full));
    expect(podCgroupValues(trimmed.spec ?? { containers: [] })).toEqual(
      podCgroupValues(full.spec ?? { containers: [] }),
    );
    expect(qosClassChange(trimmed, r.value)).toEqual(qosClassChange(full, r.value));
    expect(nodeResizeEvidence('node-a', [trimmed]).kubeletResizes).toBe(
      nodeResizeEvidence('node-a', [full]).kubeletResizes,
    );
    expect(requestNotInRevision(trimmed, r.value, trimRevisionForAgent(revision()))).toEqual(
      requestNotInRevision(full, r.value, revision()),
    );
  });

  test('a kubelet that reports resources is still seen in the trimmed pod', () => {
    const pod = fullPod();
    pod.status!.containerStatuses![0]!.resources = { requests: { cpu: '100m' } };
    expect(nodeResizeEvidence('node-a', [trimPodForAgent(pod)]).kubeletResizes).toBe(true);
  });
});

describe('trimRevisionForAgent', () => {
  test("keeps the owner and the containers' images and resources (the pre-pull reads the images), drops the rest of the template", () => {
    const trimmed = trimRevisionForAgent(revision());
    const text = JSON.stringify(trimmed);
    for (const dropped of ['hunter2', 'big', 'volumes']) expect(text).not.toContain(dropped);
    expect(trimmed.metadata?.ownerReferences).toEqual([owner]);
    expect(trimmed.data?.template?.spec?.containers).toEqual([
      {
        name: 'app',
        image: 'tailor.local/busybox:v2',
        resources: { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
      },
    ]);
  });
});

describe('trimQuotaForAgent and trimLimitRangeForAgent', () => {
  test('keep the hard amounts and the bounds, not the usage or the defaults', () => {
    const quota = trimQuotaForAgent({
      metadata: { name: 'q', namespace: 'ns', managedFields: [{ manager: 'x' }] },
      spec: { hard: { 'requests.cpu': '4' }, scopes: ['NotTerminating'] },
      status: { used: { 'requests.cpu': '1' } },
    });
    expect(quota).toEqual({ metadata: { name: 'q', namespace: 'ns' }, spec: { hard: { 'requests.cpu': '4' } } });
    const range = trimLimitRangeForAgent({
      metadata: { name: 'lr', namespace: 'ns' },
      spec: {
        limits: [{ type: 'Container', max: { cpu: '1' }, _default: { cpu: '500m' }, defaultRequest: { cpu: '100m' } }],
      },
    });
    expect(range).toEqual({
      metadata: { name: 'lr', namespace: 'ns' },
      spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] },
    });
  });
});
