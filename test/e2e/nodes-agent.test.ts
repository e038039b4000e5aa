// The node agent's node-level behaviours on the real three-node bed (issue 33 item 4; decisions 12,
// 52, 53), each agent running as itself: the shipped RBAC and admission policies installed, and
// per node a token of the tailor-agent ServiceAccount bound to a pod on that node, so the API
// server sees the node-name claim the policies fence the agent by (agent-identity.ts; nothing is
// impersonated). The agents are the built CLI, started for each node with its own kubeconfig and
// without --allow-missing-admission-policy, as the DaemonSet runs them:
//   - the agent of one node is refused by the API server when it writes a pod (or the Node) of
//     another node, and may write its own node's pod;
//   - a restart in place over three nodes is carried out by each node's agent for its own pod only:
//     with one node's agent stopped, the other nodes' pods restart and that node's pod waits until
//     its agent is back;
//   - the next revision's images are pulled on exactly the nodes whose pods will update, and each
//     pod leaves service only after its own node reported them Pulled.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ANNOTATION_PULLED_IMAGES, parsePulledImages } from '../../src/api/prepull.js';
import { ANNOTATION_RESIZE_STATUS, ANNOTATION_RESTART_REQUEST } from '../../src/api/types.js';
import type { Node, Pod } from '../../src/api/wire.js';
import { KubeApiError } from '../../src/runtime/pure/api-error.js';
import type { KubeClient } from '../../src/runtime/kube-client.js';
import {
  clientOf,
  installAgentIdentities,
  NODE_NAME_CLAIM,
  type AgentIdentities,
} from '../support/cluster/agent-identity.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { inClusterAgent } from '../support/cluster/in-cluster-agent.js';
import { startNodeAgent, type NodeAgent } from '../support/cluster/node-agent.js';
import { PodWatch } from '../support/cluster/pod-watch.js';
import { streamWatch } from '../support/cluster/watch-stream.js';
import {
  eventually,
  NODE_NAMES,
  nodeImages,
  REGISTRY,
  REGISTRY_AUTH,
  removeImageFromNode,
  RUN_UNTIL_TERM,
} from '../support/cluster/testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  patchTemplateAndWait,
  waitForCloneSet,
  waitForReady,
} from '../support/fixtures/cloneset.js';

const { client, ns } = controllerTestBed('nodes-agent', { anyNode: true });
const [NODE_A, NODE_B, NODE_C] = NODE_NAMES;
const AGENT_USER = 'system:serviceaccount:tailor-system:tailor-agent';
const BULKY = { v1: `${REGISTRY}/tailor/bulky:v1`, v2: `${REGISTRY}/tailor/bulky:v2` };
/** Each node's agent serves metrics on its port and health on the next. */
const PORTS = new Map<string, number>(NODE_NAMES.map((node, i) => [node, 18420 + 2 * i]));
const port = (node: string): number => PORTS.get(node) ?? 0;

let identities: AgentIdentities | undefined;
let inClusterAgentWasThere = false;
const agents = new Map<string, NodeAgent>();

beforeAll(async () => {
  // make dev's agents stay away the whole file: each node's pods are acted on by this file's agent only.
  inClusterAgentWasThere = await inClusterAgent(true);
  identities = await installAgentIdentities(client, NODE_NAMES);
}, 180_000);

afterAll(async () => {
  for (const agent of agents.values()) await agent.stop();
  await identities?.remove();
  if (inClusterAgentWasThere) await inClusterAgent(false);
}, 180_000);

const kubeconfigOf = (node: string): string => {
  const file = identities?.kubeconfigs.get(node);
  if (file === undefined) throw new Error(`no agent identity for ${node}`);
  return file;
};

/** Starts `node`'s agent as itself; it refuses to start unless the API server enforces the policies. */
async function startAgent(node: string): Promise<void> {
  const options = { kubeconfig: kubeconfigOf(node), requireAdmissionPolicy: true, inClusterAgentKeptAway: true };
  agents.set(node, await startNodeAgent(port(node), [], node, options));
}

async function stopAgent(node: string): Promise<void> {
  await agents.get(node)?.stop();
  agents.delete(node);
}

/** A counter of `node`'s running agent, summed over the series that carry `label` (e.g. `result="stopped"`). */
async function agentCounter(node: string, metric: string, label: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port(node)}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${metric}{`) && line.includes(label))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

const onNode = (node: string): Record<string, unknown> => ({ nodeSelector: { 'kubernetes.io/hostname': node } });
/** One pod per node of those the pods may use. */
const onePerNode = (app: string): Record<string, unknown> => ({
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: 'kubernetes.io/hostname',
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { app } },
    },
  ],
});
const restarts = (pod: Pod | undefined): number => pod?.status?.containerStatuses?.[0]?.restartCount ?? -1;
const containerId = (pod: Pod | undefined): string => pod?.status?.containerStatuses?.[0]?.containerID ?? '';
const isReady = (pod: Pod | undefined): boolean =>
  pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const nodeOf = (pods: readonly Pod[], node: string): Pod | undefined => pods.find((p) => p.spec?.nodeName === node);

/** What the API server answered a write: `allowed`, or the code and the admission policy that refused it, and its message. */
async function answer(write: () => Promise<unknown>): Promise<{ verdict: string; message: string }> {
  try {
    await write();
    return { verdict: 'allowed', message: '' };
  } catch (err) {
    if (!(err instanceof KubeApiError)) throw err;
    const message = err.status?.message ?? '';
    const policy = /ValidatingAdmissionPolicy '([^']+)'/.exec(message)?.[1] ?? 'no policy';
    return { verdict: `${err.statusCode} by ${policy}`, message };
  }
}

describe('the node agent on three nodes, each as itself', () => {
  it("is refused by the API server when it writes a pod or the Node of another node, and may write its own node's pod", async () => {
    const writers = new Map<string, KubeClient>();
    for (const node of NODE_NAMES) writers.set(node, await clientOf(kubeconfigOf(node)));
    try {
      // Each identity is the agent's service account, with its own node's claim (the API server's view).
      for (const [node, writer] of writers) {
        const review = await writer.create<{
          status?: { userInfo?: { username?: string; extra?: Record<string, string[]> } };
        }>('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'SelfSubjectReview',
        });
        const user = review.status?.userInfo;
        expect([user?.username, user?.extra?.[NODE_NAME_CLAIM]]).toEqual([AGENT_USER, [node]]);
      }
      const target = (node: string): string => `target-${node}`;
      for (const node of NODE_NAMES) {
        await client.create(`/api/v1/namespaces/${ns}/pods`, {
          metadata: { name: target(node) },
          spec: {
            ...onNode(node),
            containers: [
              { name: 'main', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never', command: RUN_UNTIL_TERM },
            ],
          },
        });
      }
      for (const node of NODE_NAMES) {
        await eventually(`${target(node)} bound to ${node}`, async () =>
          (await client.get<Pod>(`/api/v1/namespaces/${ns}/pods/${target(node)}`)).spec?.nodeName === node
            ? true
            : undefined,
        );
      }

      const seen: string[] = [];
      const expected: string[] = [];
      for (const [writerNode, writer] of writers) {
        for (const podNode of NODE_NAMES) {
          const status = JSON.stringify({ writtenBy: writerNode });
          const patch = { metadata: { annotations: { [ANNOTATION_RESIZE_STATUS]: status } } };
          const { verdict, message } = await answer(() =>
            writer.patch(`/api/v1/namespaces/${ns}/pods/${target(podNode)}`, patch, 'merge'),
          );
          const namesBoth = message.includes(`its token names node ${writerNode}, the pod is bound to ${podNode}`);
          seen.push(
            `${writerNode} writes a pod on ${podNode}: ${verdict}${verdict === 'allowed' || namesBoth ? '' : ` (${message})`}`,
          );
          expected.push(
            `${writerNode} writes a pod on ${podNode}: ${writerNode === podNode ? 'allowed' : '403 by tailor-pod-annotations'}`,
          );
          if (writerNode === podNode) continue;
          // Its report on another node's Node is refused too (its own is written by the agents below).
          const report = { metadata: { annotations: { [ANNOTATION_PULLED_IMAGES]: '{}' } } };
          seen.push(
            `${writerNode} writes node ${podNode}: ${(await answer(() => writer.patch(`/api/v1/nodes/${podNode}`, report, 'merge'))).verdict}`,
          );
          expected.push(`${writerNode} writes node ${podNode}: 403 by tailor-node-annotations`);
        }
      }
      expect(seen).toEqual(expected);
      // End state: each pod carries what its own node's agent wrote, and nothing of the refused writes.
      for (const node of NODE_NAMES) {
        const pod = await client.get<Pod>(`/api/v1/namespaces/${ns}/pods/${target(node)}`);
        expect([node, pod.metadata?.annotations?.[ANNOTATION_RESIZE_STATUS]]).toEqual([
          node,
          JSON.stringify({ writtenBy: node }),
        ]);
      }
    } finally {
      for (const writer of writers.values()) writer.close();
    }
  }, 120_000);

  it("restarts in place each node's pod by that node's agent only: with one node's agent stopped, its pod waits until the agent is back", async () => {
    // Each starts only if the API server enforces the policies (no --allow-missing-admission-policy).
    for (const node of NODE_NAMES) await startAgent(node);
    const name = 'spread';
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        name,
        { replicas: 3, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 3 } },
        {
          containers: [
            { name: 'main', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never', command: RUN_UNTIL_TERM },
          ],
          ...onePerNode(name),
        },
      ),
    );
    await waitForReady(client, ns, name, 3, 120_000);
    const before = await activePods(client, ns, name);
    expect(before.map((p) => p.spec?.nodeName).sort()).toEqual([...NODE_NAMES]);
    const restartedOnce = (pods: readonly Pod[], node: string): boolean => {
      const [was, now] = [nodeOf(before, node), nodeOf(pods, node)];
      return now?.metadata?.uid === was?.metadata?.uid && restarts(now) === restarts(was) + 1 && isReady(now);
    };

    await stopAgent(NODE_B);
    await client.patch(
      cloneSetPath(ns, name),
      {
        spec: {
          template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } },
        },
      },
      'merge',
    );
    await eventually(
      `the pods on ${NODE_A} and ${NODE_C} restarted in place`,
      async () => {
        const pods = await activePods(client, ns, name);
        return restartedOnce(pods, NODE_A) && restartedOnce(pods, NODE_C) ? true : undefined;
      },
      120_000,
    );
    // The request for the pod on B stands, and nobody carries it out while B's agent is away.
    await new Promise((r) => setTimeout(r, 10_000));
    const held = nodeOf(await activePods(client, ns, name), NODE_B);
    const wasOnB = nodeOf(before, NODE_B);
    expect(held?.metadata?.annotations?.[ANNOTATION_RESTART_REQUEST]).toContain(containerId(wasOnB));
    expect([restarts(held), containerId(held), isReady(held)]).toEqual([restarts(wasOnB), containerId(wasOnB), false]);
    expect((await readCloneSet(client, ns, name)).status?.updatedReadyReplicas).toBe(2);

    await startAgent(NODE_B);
    await waitForCloneSet(
      client,
      ns,
      name,
      'every pod restarted in place once and ready',
      (cs, pods) => cs.status?.updatedReadyReplicas === 3 && NODE_NAMES.every((node) => restartedOnce(pods, node)),
      120_000,
    );
    // Each agent stopped one container: its own node's (B's counted by the agent started again).
    const stopped = await Promise.all(
      NODE_NAMES.map(async (node) => [
        node,
        await agentCounter(node, 'tailor_agent_container_restarts_total', 'result="stopped"'),
      ]),
    );
    expect(stopped).toEqual(NODE_NAMES.map((node) => [node, 1]));
  }, 360_000);

  it("pulls the next revision's images on exactly the nodes whose pods update, each pod leaving service only after its own node reported them", async () => {
    for (const node of NODE_NAMES) if (agents.get(node)?.alive() !== true) await startAgent(node);
    const auth = Buffer.from(`${REGISTRY_AUTH.username}:${REGISTRY_AUTH.password}`).toString('base64');
    await client.create(`/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: 'regcred' },
      type: 'kubernetes.io/dockerconfigjson',
      data: {
        '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { [REGISTRY]: { auth } } })).toString('base64'),
      },
    });
    for (const node of NODE_NAMES) removeImageFromNode(BULKY.v2, node);
    const name = 'pull';
    const twoNodes = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE_A, NODE_B] }] },
            ],
          },
        },
      },
    };
    const pod = (image: string): Record<string, unknown> => ({
      imagePullSecrets: [{ name: 'regcred' }],
      containers: [{ name: 'main', image, imagePullPolicy: 'IfNotPresent', command: RUN_UNTIL_TERM }],
    });
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        name,
        { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          ...pod(BULKY.v1),
          ...twoNodes,
          ...onePerNode(name),
        },
      ),
    );
    await waitForReady(client, ns, name, 2, 180_000);
    const before = await activePods(client, ns, name);
    expect(before.map((p) => p.spec?.nodeName).sort()).toEqual([NODE_A, NODE_B]);

    // Every node's reports of bulky:v2 from now on, with when each was seen.
    const reports: { node: string; at: number; state: string }[] = [];
    const abort = new AbortController();
    await streamWatch<Node>(client, '/api/v1/nodes', {}, abort.signal, ({ object }) => {
      const parsed = parsePulledImages(object.metadata?.annotations);
      const state = parsed.ok ? parsed.value[BULKY.v2]?.state : undefined;
      if (state !== undefined) reports.push({ node: object.metadata?.name ?? '', at: Date.now(), state });
    });
    const watch = await PodWatch.start(client, ns, `app=${name}`, 2);
    try {
      await patchTemplateAndWait(client, ns, name, {
        template: { spec: pod(BULKY.v2) },
        what: 'both pods on bulky:v2 and ready',
        until: (cs) => cs.status?.updatedReadyReplicas === 2,
        timeoutMs: 300_000,
      });
    } finally {
      watch.stop();
      abort.abort();
    }

    // Only the nodes whose pods updated pulled it (the agent first, Pulling then Pulled), and hold it now.
    const statesOf = (node: string): string[] => reports.filter((r) => r.node === node).map((r) => r.state);
    expect(NODE_NAMES.map((node) => [node, [...new Set(statesOf(node))]])).toEqual([
      [NODE_A, ['Pulling', 'Pulled']],
      [NODE_B, ['Pulling', 'Pulled']],
      [NODE_C, []],
    ]);
    expect(NODE_NAMES.map((node) => [node, nodeImages(node).includes(BULKY.v2)])).toEqual([
      [NODE_A, true],
      [NODE_B, true],
      [NODE_C, false],
    ]);
    // Each pod left service only after its own node reported the image Pulled.
    const figures: string[] = [];
    for (const p of before) {
      const node = p.spec?.nodeName ?? '';
      const pulledAt = reports.find((r) => r.node === node && r.state === 'Pulled')?.at ?? Infinity;
      const spell = watch.outOfService().get(p.metadata?.name ?? '');
      expect([node, (spell?.firstLeftAt ?? -Infinity) >= pulledAt]).toEqual([node, true]);
      figures.push(
        `${node}: left service ${(((spell?.firstLeftAt ?? NaN) - pulledAt) / 1000).toFixed(1)} s after its node's Pulled`,
      );
    }
    watch.expectUnavailableAtMost(1);
    const after = await activePods(client, ns, name);
    expect(after.map((p) => p.metadata?.uid).sort()).toEqual(before.map((p) => p.metadata?.uid).sort());
    process.stdout.write(`[nodes-agent] pre-pull over two of three nodes: ${figures.join('; ')}\n`);
  }, 420_000);
});
