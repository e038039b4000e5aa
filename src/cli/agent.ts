// `tailor agent`: the node agent for nodes whose kubelet cannot resize in place (DESIGN.md §2.3).
// Builds the CRI client and the manager (no leader election: one agent per node, acting on its
// node's pods only), detects the cgroup version and swap controller under --cgroup-root, and runs
// until SIGTERM/SIGINT. Must not: contain agent logic (src/agent does).
import { detectSwapController } from '../cgroup/pod.js';
import { setupAgent } from '../agent/setup.js';
import { detectCgroupVersion } from '../cgroup/container.js';
import { CriClient } from '../cri/client.js';
import { createLogger, type LogLevel } from '../runtime/logger.js';
import { Manager } from '../runtime/manager.js';
import { loadKubeAuth } from './kubeconfig.js';
import { runUntilSignal } from './run.js';

export interface AgentFlags {
  nodeName: string;
  kubeconfig?: string;
  criEndpoint: string;
  cgroupRoot: string;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  logLevel: LogLevel;
  shutdownGracePeriod: number;
}

const address = (flag: string): string | undefined => (flag === '0' ? undefined : flag.startsWith(':') ? `0.0.0.0${flag}` : flag);

export async function runAgent(flags: AgentFlags): Promise<number> {
  if (flags.nodeName === '') throw new Error('--node-name must not be empty');
  const logger = createLogger(flags.logLevel, { component: 'tailor-agent', node: flags.nodeName });
  const kubeConfig = await loadKubeAuth(flags.kubeconfig);
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
    throw new Error(`cannot reach the container runtime at ${flags.criEndpoint}: ${(err as Error).message}`, { cause: err });
  }
  const manager = new Manager({
    kubeConfig,
    logger,
    component: 'tailor-agent',
    metricsAddress: address(flags.metricsBindAddress),
    healthAddress: address(flags.healthProbeBindAddress),
    shutdownGraceMs: flags.shutdownGracePeriod,
  });
  const agent = setupAgent(manager, {
    nodeName: flags.nodeName,
    cri,
    cgroupRoot: flags.cgroupRoot,
    cgroupVersion,
    swapControllerAvailable,
    logger,
  });

  try {
    return await runUntilSignal(manager, logger);
  } finally {
    agent.stop();
    cri.close();
  }
}
