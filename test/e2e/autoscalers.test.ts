// Autoscalers on a CloneSet, on the real cluster (issue 32.5):
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
import { RESIZE_WITHOUT_RESTART, sizedContainer } from '../support/cluster/testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  patchTemplateAndWait,
  waitForCloneSet,
  waitForReady,
} from '../support/fixtures/cloneset.js';

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
