// `tailor agent`: the node agent for nodes whose kubelet cannot resize in place (docs/architecture.md §4.4 Two resize backends).
// Builds the manager (no leader election: one agent per node, acting on its node's pods only),
// checks that the API server enforces Tailor's admission policies (refusing to start without them
// unless --allow-missing-admission-policy; src/agent/policy-check.ts), builds the CRI client,
// detects the cgroup version and swap controller under --cgroup-root, builds the client that reads
// as the node (--node-credentials: its pods, its Node, their pull secrets), and runs until
// SIGTERM/SIGINT. Must not: contain agent logic (src/agent does).
import { detectSwapController } from '../cgroup/pod.js';
import { AdmissionPolicyMonitor } from '../agent/policy-check.js';
import { setupAgent } from '../agent/setup.js';
import { detectCgroupVersion } from '../cgroup/container.js';
import { CriClient } from '../cri/client.js';
import { createLogger, type LogLevel } from '../runtime/logger.js';
import { Manager } from '../runtime/manager.js';
import { existsSync } from 'node:fs';
import { KubeClient, type KubeAuth } from '../runtime/kube-client.js';
import { loadKubeAuth, NodeIdentityAuth } from './kubeconfig.js';
import { runUntilSignal } from './run.js';
import { errorMessage } from '../api/errors.js';

export interface AgentFlags {
  nodeName: string;
  kubeconfig?: string;
  criEndpoint: string;
  cgroupRoot: string;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  logLevel: LogLevel;
  shutdownGracePeriod: number;
  /** Run even when the API server does not enforce config/policy (reported as a gauge and an error log). */
  allowMissingAdmissionPolicy?: boolean;
  /** Grow pods past what their namespace's ResourceQuota charged (docs/decisions/0051-agent-resizes-within-quota.md). */
  allowGrowthBeyondQuota?: boolean;
  /** Images pulled at once ahead of rollouts (src/agent/prepull.ts); 0 turns the pre-pull off. */
  imagePrepullParallelism: number;
  /** The kubelet's client certificate and key (one PEM): the agent reads its node's pods, Node and pull secrets as the node. Required. */
  nodeCredentials: string;
}

const address = (flag: string): string | undefined =>
  flag === '0' ? undefined : flag.startsWith(':') ? `0.0.0.0${flag}` : flag;

export async function runAgent(flags: AgentFlags): Promise<number> {
  if (flags.nodeName === '') throw new Error('--node-name must not be empty');
  const logger = createLogger(flags.logLevel, { component: 'tailor-agent', node: flags.nodeName });
  const kubeConfig = await loadKubeAuth(flags.kubeconfig);
  const manager = new Manager({
    kubeConfig,
    logger,
    component: 'tailor-agent',
    metricsAddress: address(flags.metricsBindAddress),
    healthAddress: address(flags.healthProbeBindAddress),
    shutdownGraceMs: flags.shutdownGracePeriod,
  });
  const policies = new AdmissionPolicyMonitor({ client: manager.client, registry: manager.metrics.registry, logger });
  const problems = await policies.check();
  if (problems.length > 0 && flags.allowMissingAdmissionPolicy !== true) {
    manager.client.close();
    throw new Error(
      `Tailor's admission policies are not enforced: ${problems.join('; ')}. Install them (kubectl apply -k config/policy), ` +
        'or start the agent with --allow-missing-admission-policy to run without them',
    );
  }
  if (problems.length > 0)
    logger.warn('running without enforced admission policies (--allow-missing-admission-policy)');

  const cgroupVersion = await detectCgroupVersion(flags.cgroupRoot);
  const swapControllerAvailable = await detectSwapController(flags.cgroupRoot, cgroupVersion);
  const cri = new CriClient(flags.criEndpoint);
  try {
    const version = await cri.version();
    logger.info(
      { runtime: version.runtimeName, runtimeVersion: version.runtimeVersion, cgroupVersion, swapControllerAvailable },
      'container runtime',
    );
  } catch (err) {
    cri.close();
    manager.client.close();
    throw new Error(`cannot reach the container runtime at ${flags.criEndpoint}: ${errorMessage(err)}`, { cause: err });
  }
  const asNode = nodeClient(kubeConfig, flags.nodeCredentials);
  manager.onShutdown(() => Promise.resolve(asNode.close()));
  setupAgent(manager, {
    nodeName: flags.nodeName,
    cri,
    cgroupRoot: flags.cgroupRoot,
    cgroupVersion,
    swapControllerAvailable,
    allowGrowthBeyondQuota: flags.allowGrowthBeyondQuota === true,
    imagePrePullParallelism: flags.imagePrepullParallelism,
    asNode,
    logger,
  });

  policies.start();
  try {
    return await runUntilSignal(manager, logger);
  } finally {
    await policies.stop();
    cri.close();
  }
}

/**
 * The client that reads as this node, with the kubelet's own client certificate and key: its pods,
 * its Node and its pods' pull secrets, which the Node authorizer limits to this node (decisions 53
 * and 86). The agent's ServiceAccount may read none of them.
 */
function nodeClient(kubeConfig: KubeAuth, pemFile: string): KubeClient {
  if (pemFile === '')
    throw new Error(
      "--node-credentials is required: the agent reads its node's pods as the node (the kubelet's client certificate and key, e.g. /var/lib/kubelet/pki/kubelet-client-current.pem)",
    );
  if (!existsSync(pemFile))
    throw new Error(
      `--node-credentials ${pemFile} does not exist: point it at the kubelet's client certificate and key (one PEM), mounted from the node`,
    );
  return new KubeClient(new NodeIdentityAuth(kubeConfig, pemFile));
}
