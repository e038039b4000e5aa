// Status tells the truth on a real kubelet (issue 20, items 15 and 17): counts and status.resize
// follow the pods within about a second, and a rollout an unpullable image stops names the pod
// and the kubelet's reason. Each prints its figure.
import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  patchTemplateAndWait,
  waitForCloneSet,
  trueCondition as condition,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import { firstTime, RESIZE_WITHOUT_RESTART, sizedContainer } from '../support/cluster/testbed.js';

const { client, ns } = controllerTestBed('status-truth');

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
const notRequired = { resizePolicy: RESIZE_WITHOUT_RESTART };

describe('status follows the pods', () => {
  it('counts a finished resize out of status.resize within about a second of the last pod reporting it', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'lag',
        { replicas: 3, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          containers: [sizedContainer('100m', '64Mi', notRequired)],
        },
      ),
    );
    await waitForReady(client, ns, 'lag', 3);
    await client.patch(
      cloneSetPath(ns, 'lag'),
      { spec: { template: { spec: { containers: [sizedContainer('150m', '64Mi', notRequired)] } } } },
      'merge',
    );
    const resized = (p: Pod): boolean => p.status?.containerStatuses?.[0]?.resources?.limits?.['cpu'] === '150m';
    const podsDone = await firstTime('every pod to report the new cpu', async () => {
      const pods = await activePods(client, ns, 'lag');
      return pods.length === 3 && pods.every(resized);
    });
    const statusDone = await firstTime('status.resize to count nothing resizing', async () => {
      const cs = await readCloneSet(client, ns, 'lag');
      return (cs.status?.resize?.resizing ?? 0) === 0 && cs.status?.updatedReadyReplicas === 3;
    });
    const lagSeconds = Math.max(0, statusDone - podsDone) / 1000;
    process.stdout.write(
      `[status-truth] status.resize settled ${lagSeconds.toFixed(2)} s after the last pod reported its resize\n`,
    );
    // 1 s of coalescing, the reconcile and the watch; it was 4.6 s with 5 s pacing.
    expect(lagSeconds).toBeLessThan(2.5);
  });

  it('names the pod an unpullable image holds, with the kubelet reason and the image, within 30 s', async () => {
    const container = (image: string) => ({ ...sizedContainer('50m', '32Mi'), image, imagePullPolicy: 'IfNotPresent' });
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'nope',
        { replicas: 4, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          containers: [container('tailor.local/busybox:v1')],
        },
      ),
    );
    await waitForReady(client, ns, 'nope', 4);
    const edited = Date.now();
    const blocked = await patchTemplateAndWait(client, ns, 'nope', {
      template: { spec: { containers: [container('tailor.local/busybox:does-not-exist')] } },
      what: 'RolloutBlocked naming the stuck pod',
      until: (cs) => /(ErrImagePull|ImagePullBackOff)/.test(condition(cs, 'RolloutBlocked')?.message ?? ''),
      timeoutMs: 60_000,
    });
    const seconds = (Date.now() - edited) / 1000;
    const message = condition(blocked, 'RolloutBlocked')?.message ?? '';
    process.stdout.write(`[status-truth] stuck pod named ${seconds.toFixed(1)} s after the edit: ${message}\n`);
    expect(seconds).toBeLessThan(30);
    expect(message).toMatch(/stuck: nope-\w+ \(container main: (ErrImagePull|ImagePullBackOff)/);
    expect(message).toContain('does-not-exist');
    // The budget held: one pod out of service, three still on the old image.
    const pods = await activePods(client, ns, 'nope');
    expect(pods.filter((p) => p.spec?.containers[0]?.image === 'tailor.local/busybox:v1')).toHaveLength(3);
  });

  // Issue 20.16: lifting a ResourceQuota heals a refused scale-up at once, not after the backoff.
  it('scales up within seconds of a ResourceQuota that refused it being deleted, after 30 s of refusals', async () => {
    await client.create(`/api/v1/namespaces/${ns}/resourcequotas`, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'no-pods' },
      spec: { hard: { pods: '0' } },
    });
    // Admission counts against a quota once the quota controller has filled in its status.
    const path = `/api/v1/namespaces/${ns}/resourcequotas/no-pods`;
    await firstTime(
      'the quota to be in force',
      async () =>
        (await client.get<{ status?: { hard?: Record<string, string> } }>(path)).status?.hard?.['pods'] === '0',
      60_000,
    );
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest('quota', { replicas: 2 }, { containers: [sizedContainer('10m', '16Mi')] }),
    );
    await waitForCloneSet(
      client,
      ns,
      'quota',
      'a FailedScale condition',
      (cs) => condition(cs, 'FailedScale') !== undefined,
    );
    await sleep(30_000);
    const lifted = Date.now();
    await client.delete(path);
    await waitForReady(client, ns, 'quota', 2, 120_000);
    const seconds = (Date.now() - lifted) / 1000;
    process.stdout.write(
      `[status-truth] a quota-refused scale-up healed ${seconds.toFixed(1)} s after the quota was deleted (pods Ready)\n`,
    );
    expect(seconds).toBeLessThan(20);
  });
});
