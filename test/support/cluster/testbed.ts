// Facts about the full test bed's nodes that e2e tests need (node names, runtime sockets, ctr).
// Owns nothing at runtime: hack/cluster.sh and hack/bed/ are the source of truth; keep these in
// step with them.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { kubeBinary } from './kube-version.js';
import { kubeconfigPath } from './bed.js';

/** The first node: where the specs written for one node run their pods (createTestNamespace pins them). */
export const NODE_NAME = 'tailor-node';
/** The bed's nodes when it runs three (make dev and the e2e tier on the default release). */
export const NODE_NAMES = ['tailor-node', 'tailor-node-2', 'tailor-node-3'] as const;
/** A node's runtime socket on the host (hack/bed/node.sh; inside the node it is /run/tailor/containerd). */
export const containerdSocket = (node: string = NODE_NAME): string =>
  `/run/tailor/nodes/${node}/containerd/containerd.sock`;
export const CONTAINERD_SOCKET = containerdSocket(NODE_NAME);
/** The kubelet's client certificate and key: the node's identity, for the agent's --node-credentials. */
export const nodeCredentials = (node: string = NODE_NAME): string =>
  `/run/tailor/nodes/${node}/kubelet/pki/kubelet-client-current.pem`;
export const NODE_CREDENTIALS = nodeCredentials(NODE_NAME);
/** The test bed's registry (plain HTTP, htpasswd auth) and the images only it serves (hack/bed/registry.sh). */
export const REGISTRY = '198.18.0.1:5050';
export const REGISTRY_AUTH = { username: 'tailor', password: 'tailor-pull' } as const;

/** Container IDs that a node's containerd holds in the CRI namespace. */
export function containerdContainerIds(node: string = NODE_NAME): string[] {
  const out = execFileSync(
    'ctr',
    ['--address', containerdSocket(node), '--namespace', 'k8s.io', 'containers', 'ls', '-q'],
    {
      encoding: 'utf8',
    },
  );
  return out.split('\n').filter(Boolean);
}

/** `ctr` against a node's containerd, in the CRI's namespace; returns stdout. */
const ctr = (node: string, ...args: string[]): string =>
  execFileSync('ctr', ['--address', containerdSocket(node), '--namespace', 'k8s.io', ...args], { encoding: 'utf8' });

/** The `ctr images ls` rows of a node: reference, type, manifest digest, ... */
const imageRows = (node: string): string[][] =>
  ctr(node, 'images', 'ls')
    .split('\n')
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => line.split(/\s+/));

/** The image references a node's containerd holds (tags, repo digests and image IDs alike). */
export const nodeImages = (node: string = NODE_NAME): string[] => imageRows(node).map((row) => row[0] ?? '');

/**
 * Removes an image from a node for good: every record the CRI plugin made for it (the tag, the
 * repo digest and the image ID all name the same manifest), so its content goes too and the next
 * pull is a real one.
 */
export function removeImageFromNode(image: string, node: string = NODE_NAME): void {
  const rows = imageRows(node);
  const manifest = rows.find((row) => row[0] === image)?.[2];
  if (manifest === undefined) return;
  ctr(node, 'images', 'rm', '--sync', ...rows.filter((row) => row[2] === manifest).map((row) => row[0] ?? ''));
}

export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: lastError });
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The targeted release's kubectl (KUBE_VERSION, else the default), pointed at the test bed; returns stdout. */
export function kubectl(args: string[], input?: string): string {
  return execFileSync(kubeBinary('kubectl'), ['--kubeconfig', kubeconfigPath(), ...args], {
    encoding: 'utf8',
    input,
  });
}

/** A busybox command that runs until SIGTERM and then exits at once. */
export const RUN_UNTIL_TERM = ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];

/** cpu and memory resize without restarting the container. */
export const RESIZE_WITHOUT_RESTART = [
  { resourceName: 'cpu', restartPolicy: 'NotRequired' },
  { resourceName: 'memory', restartPolicy: 'NotRequired' },
];

/** A busybox container that exits on SIGTERM, with equal cpu/memory requests and limits. */
export function sizedContainer(
  cpu: string,
  memory: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name: 'main',
    image: 'tailor.local/busybox:v1',
    imagePullPolicy: 'Never',
    command: RUN_UNTIL_TERM,
    resources: { requests: { cpu, memory }, limits: { cpu, memory } },
    ...extra,
  };
}

/**
 * A cgroup v1 file of a pod's first container (or of the pod), as the cgroupfs driver lays it out
 * under its node's cgroup root (/<node>: hack/bed/node.sh).
 */
export function podCgroupFile(
  controllerName: string,
  pod: {
    metadata?: { uid?: string };
    spec?: { nodeName?: string };
    status?: { qosClass?: string; containerStatuses?: { containerID?: string }[] };
  },
  file: string,
  level: 'pod' | 'container' = 'container',
): string {
  const id = pod.status?.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, '') ?? '';
  const qos = pod.status?.qosClass === 'Guaranteed' ? '' : `${pod.status?.qosClass?.toLowerCase()}/`;
  const root = `/sys/fs/cgroup/${controllerName}/${pod.spec?.nodeName ?? NODE_NAME}`;
  const dir = `${root}/kubepods/${qos}pod${pod.metadata?.uid}${level === 'container' ? `/${id}` : ''}`;
  return readFileSync(`${dir}/${file}`, 'utf8').trim();
}

/** Polls every 50 ms until `done` holds; returns when it first held (ms since the epoch). */
export async function firstTime(what: string, done: () => Promise<boolean>, timeoutMs = 120_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done()) return Date.now();
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
