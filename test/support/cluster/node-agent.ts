// Tailor's node agent for one node of the test bed (the first unless told), run as a process of the test (as the
// DaemonSet would run it) from the built CLI: for e2e tests that need its restarts in place on a
// kubelet that resizes by itself. It runs as the test bed's admin, whom the admission policy does
// not check, so it starts without the policy. While it runs, `make dev`'s in-cluster agent (if
// installed) is kept off the node, so one agent acts on the node's pods (in-cluster-agent.ts).
// Owns the process it starts; stop() ends it and lets the in-cluster agent back.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { inClusterAgent } from './in-cluster-agent.js';
import { containerdSocket, nodeCredentials, NODE_NAME, eventually } from './testbed.js';

export interface NodeAgent {
  /** SIGTERM, then resolves once the agent has exited (it takes back its node's image pre-pull report on the way out). */
  stop(): Promise<void>;
  /** Whether the process is still running (it never exited or crashed since it started). */
  alive(): boolean;
}

/**
 * Starts the agent of `node` with its metrics and health endpoints on `port` and `port + 1`, with
 * `nodeFlags` before the script (the V8 sizes the DaemonSet runs it with); resolves once it is ready.
 */
export interface NodeAgentOptions {
  /** The agent's kubeconfig (default: the bed's admin, whom the admission policy does not check). */
  readonly kubeconfig?: string;
  /** Leave out --allow-missing-admission-policy: the agent starts only where the API server enforces the policies. */
  readonly requireAdmissionPolicy?: boolean;
  /** The caller keeps make dev's in-cluster agent away itself (several agents of the test at once). */
  readonly inClusterAgentKeptAway?: boolean;
}

export async function startNodeAgent(
  port: number,
  nodeFlags: readonly string[] = [],
  node: string = NODE_NAME,
  options: NodeAgentOptions = {},
): Promise<NodeAgent> {
  const movedAway = options.inClusterAgentKeptAway === true ? false : await inClusterAgent(true);
  // Its log, for a failing test's reader: .tailor/logs/agent-<port>.log.
  mkdirSync('.tailor/logs', { recursive: true });
  const log = openSync(`.tailor/logs/agent-${port}.log`, 'w');
  const agent = spawn(
    process.execPath,
    [
      ...nodeFlags,
      'dist/cli/main.js',
      'agent',
      '--node-name',
      node,
      '--kubeconfig',
      options.kubeconfig ?? process.env.TAILOR_KUBECONFIG ?? '',
      '--cri-endpoint',
      `unix://${containerdSocket(node)}`,
      '--metrics-bind-address',
      `127.0.0.1:${port}`,
      '--health-probe-bind-address',
      `127.0.0.1:${port + 1}`,
      ...(options.requireAdmissionPolicy === true ? [] : ['--allow-missing-admission-policy']),
      // Pull secrets are read as the node, never as the agent's own identity (decision 53).
      '--node-credentials',
      nodeCredentials(node),
    ],
    { stdio: ['ignore', log, log] },
  );
  await eventually('the node agent to be ready', async () =>
    (await fetch(`http://127.0.0.1:${port + 1}/readyz`).catch(() => undefined))?.ok ? true : undefined,
  );
  let running = true;
  const exited = new Promise<void>((resolve) =>
    agent.once('exit', () => {
      running = false;
      closeSync(log);
      resolve();
    }),
  );
  return {
    alive: () => running,
    stop: async () => {
      agent.kill('SIGTERM');
      await exited;
      if (movedAway) await inClusterAgent(false);
    },
  };
}
