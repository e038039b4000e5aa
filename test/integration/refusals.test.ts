// A CloneSet whose writes the API server refuses, against the real API server: the refusal is a
// condition with a stable message and one event, the controller backs off instead of looping
// (its request rate over 20 s stays under 2 per second), and it recovers once the refusal ends.
import { afterAll, describe, expect, it } from '@jest/globals';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import {
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  patchTemplateAndWait,
  waitForCloneSet,
  type TestCloneSet,
} from '../support/fixtures/cloneset.js';
import { FAKE_SCHEDULER } from '../support/cluster/fake-kubelet.js';

const { client, ns, controllerRequests } = controllerTestBed('refusals', { fakeKubelet: true });
const fake = { schedulerName: FAKE_SCHEDULER };
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
const failedScale = (cs: TestCloneSet) =>
  cs.status?.conditions?.find((c) => c.type === 'FailedScale' && c.status === 'True');

interface EventList {
  items: { reason?: string; message?: string; count?: number; involvedObject?: { name?: string } }[];
}

/** Requests per second the controller sends over `windowMs`, and the condition's messages seen. */
async function measure(name: string, windowMs: number): Promise<{ rate: number; messages: Set<string> }> {
  const messages = new Set<string>();
  const start = await controllerRequests();
  const began = Date.now();
  while (Date.now() - began < windowMs) {
    const message = failedScale(await readCloneSet(client, ns, name))?.message;
    if (message) messages.add(message);
    await sleep(1000);
  }
  const requests = (await controllerRequests()) - start;
  const rate = requests / ((Date.now() - began) / 1000);
  process.stdout.write(
    `[refusals] ${name}: ${requests} controller requests in ${((Date.now() - began) / 1000).toFixed(1)} s = ${rate.toFixed(2)}/s\n`,
  );
  return { rate, messages };
}

const POLICY = `tailor-test-refuse-pods-${ns}`;

afterAll(async () => {
  const admission = '/apis/admissionregistration.k8s.io/v1';
  await client.delete(`${admission}/validatingadmissionpolicybindings/${POLICY}`).catch(() => undefined);
  await client.delete(`${admission}/validatingadmissionpolicies/${POLICY}`).catch(() => undefined);
});

/** A ValidatingAdmissionPolicy that refuses every pod create in this test's namespace (403). */
async function refusePodCreates(): Promise<void> {
  const admission = '/apis/admissionregistration.k8s.io/v1';
  await client.create(`${admission}/validatingadmissionpolicies`, {
    metadata: { name: POLICY },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
      },
      validations: [{ expression: 'false', message: 'pod creation refused by the test', reason: 'Forbidden' }],
    },
  });
  await client.create(`${admission}/validatingadmissionpolicybindings`, {
    metadata: { name: POLICY },
    spec: {
      policyName: POLICY,
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
    },
  });
  // Policies reach the API server's admission chain through an informer: wait until it refuses.
  const probe = { metadata: { name: 'probe' }, spec: { containers: [{ name: 'c', image: 'none' }] } };
  for (const deadline = Date.now() + 30_000; ; await sleep(250)) {
    try {
      await client.create(`/api/v1/namespaces/${ns}/pods?dryRun=All`, probe);
    } catch {
      return;
    }
    if (Date.now() > deadline) throw new Error('the admission policy never refused a pod create');
  }
}

describe('a CloneSet whose pod creates are refused', () => {
  it('backs off while an admission policy refuses creates, keeps one stable FailedScale message, and recovers when it goes', async () => {
    await refusePodCreates();
    await client.create(cloneSetPath(ns), cloneSetManifest('refused', { replicas: 3 }, fake));
    const refused = await waitForCloneSet(
      client,
      ns,
      'refused',
      'a FailedScale condition',
      (cs) => failedScale(cs) !== undefined,
    );
    expect(failedScale(refused)).toMatchObject({ reason: 'ApiRefused' });
    expect(failedScale(refused)?.message).toMatch(/^create pods: 403 Forbidden: .*pod creation refused by the test/);

    const { rate, messages } = await measure('refused', 20_000);
    expect(rate).toBeLessThan(2);
    expect(messages.size).toBe(1);
    const events = await client.get<EventList>(`/api/v1/namespaces/${ns}/events`, {
      fieldSelector: 'reason=FailedCreate',
    });
    expect(events.items.filter((e) => e.involvedObject?.name === 'refused')).toHaveLength(1);

    await client.delete(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${POLICY}`);
    const healed = await waitForCloneSet(
      client,
      ns,
      'refused',
      '3 pods and no FailedScale',
      (cs, pods) => pods.length === 3 && cs.status?.replicas === 3 && !failedScale(cs),
      90_000,
    );
    expect(healed.status?.replicas).toBe(3);
  });

  it('backs off to the long end when the API server rejects the pod as invalid, and says why', async () => {
    // The CRD accepts this template; pod validation refuses a request above its limit (422).
    const invalid = cloneSetManifest(
      'invalid',
      { replicas: 2 },
      {
        ...fake,
        containers: [
          {
            name: 'main',
            image: 'tailor.local/busybox:v1',
            imagePullPolicy: 'Never',
            command: ['/bin/sleep', '3600'],
            resources: { requests: { cpu: '200m' }, limits: { cpu: '100m' } },
          },
        ],
      },
    );
    await client.create(cloneSetPath(ns), invalid);
    const refused = await waitForCloneSet(
      client,
      ns,
      'invalid',
      'a FailedScale condition',
      (cs) => failedScale(cs) !== undefined,
    );
    expect(failedScale(refused)).toMatchObject({ reason: 'ApiRejected' });
    expect(failedScale(refused)?.message).toMatch(/422 Invalid: .*must be less than or equal to cpu limit/);
    const { rate } = await measure('invalid', 20_000);
    expect(rate).toBeLessThan(0.5);
  });

  // Issue 20.16: the refusal's cause going away is seen at once, not after the backoff. A
  // LimitRange refuses at admission alone (a ResourceQuota needs the quota controller, which this
  // control-plane tier does not run); both are watched the same way.
  it('heals a scale-up a LimitRange refused within seconds of the limit range being deleted, after 30 s of refusals', async () => {
    const limits = {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'tiny' },
      spec: { limits: [{ type: 'Container', max: { cpu: '10m' } }] },
    };
    await client.create(`/api/v1/namespaces/${ns}/limitranges`, limits);
    const sized = {
      containers: [
        {
          name: 'main',
          image: 'tailor.local/busybox:v1',
          imagePullPolicy: 'Never',
          command: ['/bin/sleep', '3600'],
          resources: { requests: { cpu: '50m' }, limits: { cpu: '50m' } },
        },
      ],
    };
    await client.create(cloneSetPath(ns), cloneSetManifest('limited', { replicas: 3 }, { ...fake, ...sized }));
    const refused = await waitForCloneSet(
      client,
      ns,
      'limited',
      'a FailedScale condition',
      (cs) => failedScale(cs) !== undefined,
    );
    expect(failedScale(refused)?.message).toMatch(/maximum cpu usage per Container is 10m/);
    const { rate } = await measure('limited', 30_000);
    expect(rate).toBeLessThan(2);
    const lifted = Date.now();
    await client.delete(`/api/v1/namespaces/${ns}/limitranges/tiny`);
    await waitForCloneSet(
      client,
      ns,
      'limited',
      '3 pods and no FailedScale',
      (cs, pods) => pods.length === 3 && !failedScale(cs),
      90_000,
    );
    const healSeconds = (Date.now() - lifted) / 1000;
    process.stdout.write(`[refusals] limit range: healed ${healSeconds.toFixed(1)} s after it was deleted\n`);
    // Before, the backoff after 30 s of refusals (~30 s and growing) decided when it healed.
    expect(healSeconds).toBeLessThan(10);
  });

  // Issue 20.10: history is pruned even while every pod write is refused.
  it('prunes revisions beyond revisionHistoryLimit while its pod creates are rejected', async () => {
    const container = (image: string) => ({
      name: 'main',
      image,
      imagePullPolicy: 'Never',
      command: ['/bin/sleep', '3600'],
      resources: { requests: { cpu: '200m' }, limits: { cpu: '100m' } },
    });
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'history',
        { replicas: 1, revisionHistoryLimit: 1 },
        { ...fake, containers: [container('tailor.local/busybox:v0')] },
      ),
    );
    await waitForCloneSet(client, ns, 'history', 'a FailedScale condition', (cs) => failedScale(cs) !== undefined);
    for (let i = 1; i <= 5; i++) {
      await patchTemplateAndWait(client, ns, 'history', {
        template: { spec: { containers: [container(`tailor.local/busybox:v${i}`)] } },
        what: `revision ${i + 1}`,
        until: (cs) => cs.status?.observedGeneration === (cs.metadata?.generation ?? 0),
      });
    }
    const revisions = async (): Promise<number> =>
      (
        await client.get<{ items: unknown[] }>(`/apis/apps/v1/namespaces/${ns}/controllerrevisions`, {
          labelSelector: 'apps.tailor.dev/cloneset=history',
        })
      ).items.length;
    // The limit, plus the current and the update revision.
    for (const deadline = Date.now() + 20_000; (await revisions()) > 3 && Date.now() < deadline;) await sleep(500);
    expect(await revisions()).toBeLessThanOrEqual(3);
  });
});
