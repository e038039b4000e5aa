// Containers restarted in place on a real kubelet (decision 15): a rolling restart of 10 pods
// (the template's restartedAt annotation, as `kubectl tailor restart` writes it) restarts every
// container exactly once, pod by pod within maxUnavailable, UIDs kept; and a label that a
// container's env reads through the downward API restarts that container, which then sees the
// new value. A container's preStop hook runs before its restart, as it would before the kubelet
// stops it; and a slow hook with a long grace period does not delay another pod's restart on the
// same node. The node agent runs for the node as a process of this test, as the DaemonSet would.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  patchTemplateAndWait,
  waitForCloneSet,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import { PodWatch } from '../support/cluster/pod-watch.js';
import { startNodeAgent, type NodeAgent } from '../support/cluster/node-agent.js';
import { eventually, kubectl, RUN_UNTIL_TERM } from '../support/cluster/testbed.js';

const { client, ns } = controllerTestBed('restart-e2e');
let agent: NodeAgent | undefined;

beforeAll(async () => {
  agent = await startNodeAgent(18390);
}, 120_000);
afterAll(async () => {
  await agent?.stop();
});

const loop = RUN_UNTIL_TERM;
const restarts = (pod: Pod): number => pod.status?.containerStatuses?.[0]?.restartCount ?? -1;
const restartAll = (name: string): Promise<unknown> =>
  client.patch(
    cloneSetPath(ns, name),
    {
      spec: {
        template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } },
      },
    },
    'merge',
  );
/** The file the pods' preStop hooks write to, in an emptyDir that outlives the container's restart. */
const HOOK_LOG = '/hooks/prestop.log';
const hookLog = (pod: Pod): string =>
  kubectl([
    '-n',
    ns,
    'exec',
    pod.metadata?.name ?? '',
    '-c',
    'main',
    '--',
    '/bin/sh',
    '-c',
    `cat ${HOOK_LOG} 2>/dev/null || true`,
  ]);
/** A container that runs until SIGTERM with `preStop` as its hook (a shell line), its log in an emptyDir. */
const withHook = (preStop: string, grace: number): Record<string, unknown> => ({
  terminationGracePeriodSeconds: grace,
  volumes: [{ name: 'hooks', emptyDir: {} }],
  containers: [
    {
      name: 'main',
      image: 'tailor.local/busybox:v1',
      imagePullPolicy: 'Never',
      command: loop,
      volumeMounts: [{ name: 'hooks', mountPath: '/hooks' }],
      lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', preStop] } } },
    },
  ],
});

describe('restart in place', () => {
  it('restarts every container of 10 pods exactly once, within maxUnavailable 2, same UIDs', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'rr',
        { replicas: 10, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 2 } },
        {
          containers: [{ name: 'main', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never', command: loop }],
        },
      ),
    );
    await waitForReady(client, ns, 'rr', 10, 180_000);
    const before = new Map((await activePods(client, ns, 'rr')).map((p) => [p.metadata?.uid, restarts(p)]));
    const watch = await PodWatch.start(client, ns, 'app=rr', 10);
    const started = Date.now();
    try {
      await client.patch(
        cloneSetPath(ns, 'rr'),
        {
          spec: {
            template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } },
          },
        },
        'merge',
      );
      await waitForCloneSet(
        client,
        ns,
        'rr',
        'every pod restarted and ready',
        (cs, pods) =>
          cs.status?.updatedReadyReplicas === 10 &&
          pods.length === 10 &&
          pods.every((p) => restarts(p) === (before.get(p.metadata?.uid) ?? -9) + 1),
        300_000,
      );
      const seconds = (Date.now() - started) / 1000;
      watch.expectUnavailableAtMost(2);
      process.stdout.write(
        `[restart] rolling restart of 10 pods: ${seconds.toFixed(1)} s, worst moment ${watch.maxUnavailable} of 10 out of service\n`,
      );
    } finally {
      watch.stop();
    }
    const after = await activePods(client, ns, 'rr');
    expect(new Set(after.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    for (const pod of after) expect(restarts(pod)).toBe((before.get(pod.metadata?.uid) ?? -9) + 1);
  });

  it("runs each container's preStop exec hook once before its restart", async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'hooked',
        { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        withHook(`echo "preStop of $HOSTNAME" >> ${HOOK_LOG}`, 10),
      ),
    );
    await waitForReady(client, ns, 'hooked', 2);
    const before = new Map((await activePods(client, ns, 'hooked')).map((p) => [p.metadata?.uid, restarts(p)]));
    for (const pod of await activePods(client, ns, 'hooked')) expect(hookLog(pod)).toBe('');
    await restartAll('hooked');
    await waitForCloneSet(
      client,
      ns,
      'hooked',
      'both pods restarted and ready',
      (cs, pods) =>
        cs.status?.updatedReadyReplicas === 2 &&
        pods.length === 2 &&
        pods.every((p) => restarts(p) === (before.get(p.metadata?.uid) ?? -9) + 1),
      180_000,
    );
    const pods = await activePods(client, ns, 'hooked');
    expect(new Set(pods.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    for (const pod of pods) expect(hookLog(pod)).toBe(`preStop of ${pod.metadata?.name}\n`);
  });

  it("a slow preStop hook with a long grace period does not delay another pod's restart on the node", async () => {
    // More slow pods than the agent once had restart workers (4): each would have held one.
    const slowPods = 5;
    const hookSeconds = 45;
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'slowstop',
        { replicas: slowPods, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: slowPods } },
        withHook(`echo start >> ${HOOK_LOG}; sleep ${hookSeconds}; echo done >> ${HOOK_LOG}`, 300),
      ),
    );
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'quickstop',
        { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 2 } },
        { containers: [{ name: 'main', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never', command: loop }] },
      ),
    );
    await waitForReady(client, ns, 'slowstop', slowPods);
    await waitForReady(client, ns, 'quickstop', 2);
    const slowBefore = new Map((await activePods(client, ns, 'slowstop')).map((p) => [p.metadata?.uid, restarts(p)]));
    const quickBefore = new Map((await activePods(client, ns, 'quickstop')).map((p) => [p.metadata?.uid, restarts(p)]));

    await restartAll('slowstop');
    const hooksStarted = Date.now();
    await eventually(
      'every slow pod in its preStop hook',
      async () =>
        (await activePods(client, ns, 'slowstop')).every((p) => hookLog(p) === 'start\n') ? true : undefined,
      60_000,
    );
    const quickStarted = Date.now();
    await restartAll('quickstop');
    await waitForCloneSet(
      client,
      ns,
      'quickstop',
      'both quick pods restarted and ready',
      (cs, pods) =>
        cs.status?.updatedReadyReplicas === 2 &&
        pods.length === 2 &&
        pods.every((p) => restarts(p) === (quickBefore.get(p.metadata?.uid) ?? -9) + 1),
      60_000,
    );
    const quickSeconds = (Date.now() - quickStarted) / 1000;
    // The slow hooks still run: their containers have not been stopped yet.
    expect(Date.now() - hooksStarted).toBeLessThan(hookSeconds * 1000);
    for (const pod of await activePods(client, ns, 'slowstop')) {
      expect(restarts(pod)).toBe(slowBefore.get(pod.metadata?.uid));
      expect(hookLog(pod)).toBe('start\n');
    }
    process.stdout.write(
      `[restart] 2 pods restarted in ${quickSeconds.toFixed(1)} s while ${slowPods} preStop hooks of ${hookSeconds} s ran\n`,
    );

    await waitForCloneSet(
      client,
      ns,
      'slowstop',
      'every slow pod restarted after its hook',
      (cs, pods) =>
        cs.status?.updatedReadyReplicas === slowPods &&
        pods.length === slowPods &&
        pods.every((p) => restarts(p) === (slowBefore.get(p.metadata?.uid) ?? -9) + 1),
      180_000,
    );
    for (const pod of await activePods(client, ns, 'slowstop')) expect(hookLog(pod)).toBe('start\ndone\n');
  }, 300_000);

  it('restarts a container whose env reads a label the template changed, and it sees the new value', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'envmeta',
        { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          containers: [
            {
              name: 'main',
              image: 'tailor.local/busybox:v1',
              imagePullPolicy: 'Never',
              command: loop,
              env: [{ name: 'TRACK', valueFrom: { fieldRef: { fieldPath: "metadata.labels['track']" } } }],
            },
          ],
        },
      ),
    );
    await waitForReady(client, ns, 'envmeta', 2);
    await patchTemplateAndWait(client, ns, 'envmeta', {
      template: { metadata: { labels: { app: 'envmeta', track: 'blue' } } },
      what: 'two pods labelled blue',
      until: (cs, pods) =>
        cs.status?.updatedReadyReplicas === 2 && pods.every((p) => p.metadata?.labels?.['track'] === 'blue'),
      timeoutMs: 180_000,
    });
    const before = new Map((await activePods(client, ns, 'envmeta')).map((p) => [p.metadata?.uid, restarts(p)]));
    await patchTemplateAndWait(client, ns, 'envmeta', {
      template: { metadata: { labels: { app: 'envmeta', track: 'green' } } },
      what: 'both pods restarted with track=green',
      until: (cs, pods) =>
        cs.status?.updatedReadyReplicas === 2 &&
        pods.every(
          (p) => p.metadata?.labels?.['track'] === 'green' && restarts(p) === (before.get(p.metadata?.uid) ?? -9) + 1,
        ),
      timeoutMs: 180_000,
    });
    const pods = await activePods(client, ns, 'envmeta');
    expect(new Set(pods.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    for (const pod of pods) {
      const env = kubectl(['-n', ns, 'exec', pod.metadata?.name ?? '', '--', '/bin/sh', '-c', 'echo "$TRACK"']);
      expect(env.trim()).toBe('green');
    }
  });
});
