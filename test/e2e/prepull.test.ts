// Images pulled before the drain (docs/decisions/0052-images-pulled-before-the-drain.md) on the
// real kubelet, with real pulls from the test bed's registry (hack/cluster.sh: docker-registry with
// htpasswd auth, so every pull needs the pods' imagePullSecrets). Two images of 256 MiB of random
// bytes, neither on the node before its case: without a node agent the pods leave service and
// then the kubelet pulls; with the agent running, the node pulls first (with the pods' secret),
// reports Pulled on its Node, and only then are the pods drained. Each case prints every pod's
// time out of service; the cases assert the order of events, never the times.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ANNOTATION_PULLED_IMAGES, parsePulledImages, type PulledImages } from '../../src/api/prepull.js';
import type { Node } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { inClusterAgent } from '../support/cluster/in-cluster-agent.js';
import { startNodeAgent, type NodeAgent } from '../support/cluster/node-agent.js';
import { PodWatch } from '../support/cluster/pod-watch.js';
import { streamWatch } from '../support/cluster/watch-stream.js';
import {
  eventually,
  NODE_NAME,
  REGISTRY,
  REGISTRY_AUTH,
  removeImageFromNode,
  RUN_UNTIL_TERM,
} from '../support/cluster/testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  patchTemplateAndWait,
  waitForReady,
} from '../support/fixtures/cloneset.js';

const { client, ns } = controllerTestBed('prepull-e2e');
const BULKY = { v1: `${REGISTRY}/tailor/bulky:v1`, v2: `${REGISTRY}/tailor/bulky:v2` };
const NODE_PATH = `/api/v1/nodes/${NODE_NAME}`;
const nodeReport = async (): Promise<PulledImages | undefined> => {
  const node = await client.get<Node>(NODE_PATH);
  const parsed = parsePulledImages(node.metadata?.annotations);
  return parsed.ok ? parsed.value : undefined;
};

let agentWasInstalled = false;
beforeAll(async () => {
  agentWasInstalled = await inClusterAgent(true);
  const auth = Buffer.from(`${REGISTRY_AUTH.username}:${REGISTRY_AUTH.password}`).toString('base64');
  await client.create(`/api/v1/namespaces/${ns}/secrets`, {
    metadata: { name: 'regcred' },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { [REGISTRY]: { auth } } })).toString('base64') },
  });
  for (const image of Object.values(BULKY)) removeImageFromNode(image);
  // No agent runs yet: no report may make the controller wait.
  await client.patch(NODE_PATH, { metadata: { annotations: { [ANNOTATION_PULLED_IMAGES]: null } } }, 'merge');
}, 120_000);

afterAll(async () => {
  if (agentWasInstalled) await inClusterAgent(false);
});

/** A CloneSet of 2 pods on tailor.local/busybox:v1, then its image changed to `image`; resolves with each pod's out-of-service time. */
const container = (image: string): Record<string, unknown> => ({
  name: 'main',
  image,
  imagePullPolicy: 'IfNotPresent',
  command: RUN_UNTIL_TERM,
});

async function rollOutTo(
  name: string,
  image: string,
): Promise<{ watch: PodWatch; uidsKept: boolean; seconds: Map<string, number> }> {
  await client.create(
    cloneSetPath(ns),
    cloneSetManifest(
      name,
      { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
      {
        imagePullSecrets: [{ name: 'regcred' }],
        containers: [container('tailor.local/busybox:v1')],
      },
    ),
  );
  await waitForReady(client, ns, name, 2, 120_000);
  const before = new Set((await activePods(client, ns, name)).map((p) => p.metadata?.uid));
  const watch = await PodWatch.start(client, ns, `app=${name}`, 2);
  await patchTemplateAndWait(client, ns, name, {
    template: { spec: { containers: [container(image)] } },
    what: 'both pods updated in place and ready',
    until: (cs) => cs.status?.updatedReadyReplicas === 2,
    timeoutMs: 240_000,
  });
  watch.stop();
  const after = new Set((await activePods(client, ns, name)).map((p) => p.metadata?.uid));
  const seconds = new Map([...watch.outOfService()].map(([pod, spell]) => [pod, spell.totalMs / 1000]));
  return { watch, uidsKept: [...after].every((uid) => before.has(uid)) && after.size === 2, seconds };
}

const show = (seconds: Map<string, number>): string => [...seconds.values()].map((s) => `${s.toFixed(1)} s`).join(', ');

/** What the kubelet said about its pulls of `image` in this namespace ("… in 2.982s …"): the pull's own duration, for the figures. */
async function kubeletPulls(image: string): Promise<string> {
  const events = await client.list<{ reason?: string; message?: string }>(`/api/v1/namespaces/${ns}/events`);
  const times = events.items
    .filter((e) => e.reason === 'Pulled' && e.message?.includes(`"${image}"`))
    .map((e) => /in ([0-9.]+m?s) /.exec(e.message ?? '')?.[1] ?? 'already present');
  return times.length > 0 ? times.join(', ') : 'none';
}

describe('images pulled before the drain', () => {
  let agent: NodeAgent | undefined;
  let withoutPrePull: Map<string, number> | undefined;
  afterAll(async () => {
    await agent?.stop();
  });

  it('without a node agent, each pod is out of service while the kubelet pulls (same UIDs)', async () => {
    const { watch, uidsKept, seconds } = await rollOutTo('plain', BULKY.v1);
    withoutPrePull = seconds;
    expect(uidsKept).toBe(true);
    watch.expectUnavailableAtMost(1);
    process.stdout.write(
      `[prepull] without pre-pull, out of service per pod: ${show(seconds)} (the kubelet's pulls: ${await kubeletPulls(BULKY.v1)})\n`,
    );
  }, 300_000);

  it("with the agent, the node pulls first with the pods' pull secret, and pods leave service only after", async () => {
    agent = await startNodeAgent(18394);
    await eventually(
      'the agent to report for its node',
      async () => ((await nodeReport()) !== undefined ? true : undefined),
      30_000,
    );
    // Every change of the node's report, with when it was seen.
    const reports: { at: number; report: PulledImages | undefined }[] = [];
    const abort = new AbortController();
    await streamWatch<Node>(
      client,
      '/api/v1/nodes',
      { fieldSelector: `metadata.name=${NODE_NAME}` },
      abort.signal,
      ({ object }) => {
        const parsed = parsePulledImages(object.metadata?.annotations);
        reports.push({ at: Date.now(), report: parsed.ok ? parsed.value : undefined });
      },
    );
    let result: Awaited<ReturnType<typeof rollOutTo>>;
    try {
      result = await rollOutTo('pre', BULKY.v2);
    } finally {
      abort.abort();
    }
    const pulledAt = reports.find((r) => r.report?.[BULKY.v2]?.state === 'Pulled')?.at;
    // The node's reports in order, so a failure shows what the agent said (its log: .tailor/logs/agent-18394.log).
    const states = reports.map((r) => r.report?.[BULKY.v2]?.state ?? '-');
    expect(states).toContain('Pulling');
    expect(states).toContain('Pulled');
    expect(result.watch.outOfService().size).toBe(2);
    for (const [pod, spell] of result.watch.outOfService()) {
      expect([pod, spell.firstLeftAt >= (pulledAt ?? Infinity)]).toEqual([pod, true]);
    }
    expect(result.uidsKept).toBe(true);
    result.watch.expectUnavailableAtMost(1);
    const pullingAt = reports.find((r) => r.report?.[BULKY.v2]?.state === 'Pulling')?.at ?? NaN;
    const nodePull = (((pulledAt ?? NaN) - pullingAt) / 1000).toFixed(1);
    process.stdout.write(
      `[prepull] with pre-pull, out of service per pod: ${show(result.seconds)}; the node's pull took ${nodePull} s before any pod left service ` +
        `(without pre-pull: ${show(withoutPrePull ?? new Map())})\n`,
    );
  }, 300_000);

  it("takes the node's report back when the agent stops", async () => {
    await agent?.stop();
    agent = undefined;
    expect(await nodeReport()).toBeUndefined();
  }, 60_000);
});
