// Autoscalers on a CloneSet and an InPlaceStatefulSet, on the real cluster (issues 32.5 and 42.4):
// - HPA: the kube-controller-manager's HorizontalPodAutoscaler scales a CloneSet through its
//   `scale` subresource (reading `status.labelSelector`). Without a metrics server the HPA still
//   enforces its bounds: a CloneSet below `minReplicas` is scaled up to it, which is the whole path
//   a metric-driven scale takes through Tailor.
// - VPA: a vertical autoscaler that resizes single pods in place (VPA's InPlaceOrRecreate mode
//   patches `pods/resize`), as the VPA updater does. Tailor neither reverts the new values nor
//   reports them as a stuck resize, and a later image rollout keeps them: an in-place update sends
//   resources only when the template's resources change.
import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { eventually, RESIZE_WITHOUT_RESTART, sizedContainer } from '../support/cluster/testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  patchTemplateAndWait,
  waitForCloneSet,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import {
  newStatefulSet,
  readSet,
  setPods,
  setsPath,
  waitForRollingUpdate,
  waitForRunningAndReady,
} from '../support/fixtures/stateful.js';

const { client, ns } = controllerTestBed('autoscalers-e2e');

const limitsOf = (pod: Pod | undefined): unknown => pod?.spec?.containers[0]?.resources?.limits;
const actualLimitsOf = (pod: Pod | undefined): unknown => pod?.status?.containerStatuses?.[0]?.resources?.limits;

describe('autoscalers', () => {
  it('an HPA scales a CloneSet through its scale subresource (1 -> minReplicas 3)', async () => {
    await client.create(cloneSetPath(ns), cloneSetManifest('hpa', { replicas: 1 }));
    await waitForReady(client, ns, 'hpa', 1);
    await client.create(`/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers`, {
      metadata: { name: 'hpa' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: 'hpa' },
        minReplicas: 3,
        maxReplicas: 5,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
        ],
      },
    });
    const cs = await waitForReady(client, ns, 'hpa', 3, 180_000);
    expect(cs.spec.replicas).toBe(3);
    const hpa = await client.get<{ status?: { currentReplicas?: number; desiredReplicas?: number } }>(
      `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers/hpa`,
    );
    // The HPA read the CloneSet's replicas through /scale (and its selector from status.labelSelector).
    expect(hpa.status?.desiredReplicas).toBe(3);
    await client.delete(`/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers/hpa`);
  });

  it("a vertical autoscaler's in-place resize of one pod is kept, not reported stuck, and survives an image rollout", async () => {
    const container = (image: string): Record<string, unknown> => ({
      ...sizedContainer('100m', '64Mi', { resizePolicy: RESIZE_WITHOUT_RESTART }),
      image,
    });
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'vpa',
        { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        { containers: [container('tailor.local/busybox:v1')] },
      ),
    );
    await waitForReady(client, ns, 'vpa', 2);
    const [target, other] = await activePods(client, ns, 'vpa');
    const name = target?.metadata?.name ?? '';
    const recommended = { cpu: '150m', memory: '96Mi' };
    // What VPA's updater sends in InPlaceOrRecreate mode.
    await client.patch(
      `/api/v1/namespaces/${ns}/pods/${name}/resize`,
      { spec: { containers: [{ name: 'main', resources: { requests: recommended, limits: recommended } }] } },
      'strategic',
    );
    const resized = (pods: Pod[]): boolean => {
      const pod = pods.find((p) => p.metadata?.name === name);
      return JSON.stringify(actualLimitsOf(pod)) === JSON.stringify(recommended);
    };
    await waitForCloneSet(
      client,
      ns,
      'vpa',
      'the kubelet to actuate the recommendation',
      (_cs, pods) => resized(pods),
      120_000,
    );

    // Tailor leaves the drift alone: no revert, nothing pending in status.resize, no ResizeBlocked.
    await new Promise((r) => setTimeout(r, 10_000));
    const settled = await readCloneSet(client, ns, 'vpa');
    expect(settled.status?.resize?.resizing ?? 0).toBe(0);
    expect(settled.status?.conditions?.find((c) => c.type === 'ResizeBlocked')?.status).not.toBe('True');
    let pods = await activePods(client, ns, 'vpa');
    expect(limitsOf(pods.find((p) => p.metadata?.name === name))).toEqual(recommended);
    expect(limitsOf(pods.find((p) => p.metadata?.name === other?.metadata?.name))).toEqual({
      cpu: '100m',
      memory: '64Mi',
    });

    // An image rollout keeps the autoscaler's values: the template's resources did not change.
    await patchTemplateAndWait(client, ns, 'vpa', {
      template: { spec: { containers: [container('tailor.local/busybox:v2')] } },
      what: 'rolled out',
      until: (cs) => cs.status?.updatedReadyReplicas === 2,
      timeoutMs: 180_000,
    });
    pods = await activePods(client, ns, 'vpa');
    const after = pods.find((p) => p.metadata?.name === name);
    expect(after?.metadata?.uid).toBe(target?.metadata?.uid);
    expect(after?.spec?.containers[0]?.image).toBe('tailor.local/busybox:v2');
    expect(limitsOf(after)).toEqual(recommended);
    expect(actualLimitsOf(after)).toEqual(recommended);
  });
});

describe('autoscalers on an InPlaceStatefulSet', () => {
  it('an HPA scales the set through its scale subresource (1 -> minReplicas 3), in ordinal order', async () => {
    await client.create(setsPath(ns), newStatefulSet('ss-hpa', 1));
    await waitForRunningAndReady(client, ns, 1);
    const hpaPath = `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers`;
    await client.create(hpaPath, {
      metadata: { name: 'ss-hpa' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'InPlaceStatefulSet', name: 'ss-hpa' },
        minReplicas: 3,
        maxReplicas: 5,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
        ],
      },
    });
    const pods = await waitForRunningAndReady(client, ns, 3);
    expect(pods.map((p) => p.metadata?.name)).toEqual(['ss-hpa-0', 'ss-hpa-1', 'ss-hpa-2']);
    expect((await readSet(client, ns, 'ss-hpa')).spec.replicas).toBe(3);
    await client.delete(`${hpaPath}/ss-hpa`);
    await client.delete(setsPath(ns, 'ss-hpa'));
    await waitForRunningAndReady(client, ns, 0);
  });

  it("a vertical autoscaler's in-place resize of one pod is kept and survives an image rollout", async () => {
    const set = newStatefulSet('ss-vpa', 2);
    const container = set.spec.template.spec.containers[0]!;
    container.resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } };
    container.resizePolicy = RESIZE_WITHOUT_RESTART;
    await client.create(setsPath(ns), set);
    const [target] = await waitForRunningAndReady(client, ns, 2);
    const recommended = { cpu: '150m', memory: '96Mi' };
    // What VPA's updater sends in InPlaceOrRecreate mode, with targetRef at the set.
    await client.patch(
      `/api/v1/namespaces/${ns}/pods/ss-vpa-0/resize`,
      { spec: { containers: [{ name: 'webserver', resources: { requests: recommended, limits: recommended } }] } },
      'strategic',
    );
    await eventually('the kubelet to actuate the recommendation', async () => {
      const pod = (await setPods(client, ns)).find((p) => p.metadata?.name === 'ss-vpa-0');
      return JSON.stringify(actualLimitsOf(pod)) === JSON.stringify(recommended) ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, 5_000));
    const settled = await readSet(client, ns, 'ss-vpa');
    expect(settled.status?.resize?.resizing ?? 0).toBe(0);
    expect(settled.status?.conditions?.find((c) => c.type === 'ResizeBlocked')?.status).not.toBe('True');

    const template = structuredClone(set.spec.template);
    template.spec.containers[0] = { ...container, image: 'tailor.local/busybox:v2' };
    await client.patch(setsPath(ns, 'ss-vpa'), { spec: { template } }, 'merge');
    await waitForRollingUpdate(client, ns, 'ss-vpa');
    const after = (await setPods(client, ns)).find((p) => p.metadata?.name === 'ss-vpa-0');
    expect(after?.metadata?.uid).toBe(target?.metadata?.uid);
    expect(after?.spec?.containers[0]?.image).toBe('tailor.local/busybox:v2');
    expect(limitsOf(after)).toEqual(recommended);
    await client.delete(setsPath(ns, 'ss-vpa'));
  });
});
