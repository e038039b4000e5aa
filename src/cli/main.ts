#!/usr/bin/env node
// Entry point: `tailor controller` and `tailor agent`. Owns flag parsing, process
// signals and the exit code; everything else is built by the commands. Bad input (an unknown
// flag value, no reachable cluster) ends with one clear line and a non-zero exit. Each command's
// modules are imported when it runs, so a process loads only the program it is (decision 32).
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseDuration } from '../api/duration.js';
import type { AgentFlags } from './agent.js';
import type { ControllerFlags } from './controller.js';
import { errorMessage } from '../api/errors.js';

const program = new Command('tailor').description('In-place updates for CloneSet workloads').showHelpAfterError();

const wholeNumber =
  (name: string, min: number) =>
  (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number >= ${min}`);
    return n;
  };
const positiveInt = (name: string): ((value: string) => number) => wholeNumber(name, 1);
const nonNegativeInt = (name: string): ((value: string) => number) => wholeNumber(name, 0);
const duration = (value: string): number => {
  try {
    return parseDuration(value);
  } catch (err) {
    throw new InvalidArgumentError(errorMessage(err));
  }
};

program
  .command('controller')
  .description('run the workload controllers (CloneSet, InPlaceStatefulSet)')
  .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)')
  .option('--namespace <ns>', 'only watch this namespace (default: all)')
  .option(
    '--cloneset-selector <selector>',
    'only reconcile CloneSets whose labels match this selector, e.g. "!tailor.dev/test" (default: all)',
  )
  .addOption(
    new Option('--kinds <kinds...>', 'the workload kinds to run controllers for')
      .choices(['CloneSet', 'InPlaceStatefulSet'])
      .default(['CloneSet', 'InPlaceStatefulSet']),
  )
  .option('--workers <n>', 'workloads of each kind reconciled at once', positiveInt('--workers'), 4)
  .option('--leader-elect', 'elect a leader through a Lease before acting', false)
  .option('--leader-election-namespace <ns>', 'namespace of the Lease', 'tailor-system')
  .option('--leader-election-id <name>', 'name of the Lease', 'tailor-controller')
  .option('--metrics-bind-address <addr>', 'Prometheus metrics address; "0" disables', ':8080')
  .option('--health-probe-bind-address <addr>', '/healthz and /readyz address; "0" disables', ':8081')
  .addOption(
    new Option('--resize-backend <backend>', 'how resizes are applied')
      .choices(['auto', 'kubelet', 'agent'])
      .default('auto'),
  )
  .addOption(new Option('--log-level <level>', 'log level').choices(['debug', 'info', 'warn', 'error']).default('info'))
  .option('--shutdown-grace-period <duration>', 'time in-flight work gets to finish on SIGTERM', duration, 30_000)
  .option(
    '--resync-period <duration>',
    'reconcile every CloneSet at least this often, even with no change; 0 disables',
    duration,
    600_000,
  )
  .option('--lease-duration <duration>', 'leader election: how long a Lease is valid without renewal', duration, 15_000)
  .option(
    '--renew-deadline <duration>',
    'leader election: the leader stops leading if it has not renewed within this',
    duration,
    10_000,
  )
  .option('--retry-period <duration>', 'leader election: time between attempts to acquire or renew', duration, 2_000)
  .option('--request-timeout <duration>', 'deadline of every API request', duration, 30_000)
  .option(
    '--watch-stall-timeout <duration>',
    'relist when a watch delivers nothing (not even a bookmark) for this long',
    duration,
    300_000,
  )
  .option(
    '--image-prepull-timeout <duration>',
    "how long a pod's drain waits for its node's agent to pull new images; 0 never waits",
    duration,
    120_000,
  )
  // commander has checked and converted every flag above; the object has the flags' shape.
  .action(async (opts: ControllerFlags) => {
    const { runController } = await import('./controller.js');
    process.exitCode = await runController(opts);
  });

program
  .command('agent')
  .description('run the node agent: in-place resizes through CRI on a node whose kubelet cannot resize')
  .requiredOption('--node-name <name>', 'the node this agent serves (usually from the downward API spec.nodeName)')
  .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)')
  .option('--cri-endpoint <endpoint>', 'CRI runtime socket', 'unix:///run/containerd/containerd.sock')
  .option('--cgroup-root <path>', "where the host's cgroup filesystem is mounted", '/sys/fs/cgroup')
  .option(
    '--metrics-bind-address <addr>',
    'Prometheus metrics address (unauthenticated: loopback by default); "0" disables',
    '127.0.0.1:8090',
  )
  .option('--health-probe-bind-address <addr>', '/healthz and /readyz address; "0" disables', ':8091')
  .option(
    '--allow-missing-admission-policy',
    "run even when the API server does not enforce Tailor's admission policies (config/policy)",
    false,
  )
  .option(
    '--allow-growth-beyond-quota',
    "resize pods past the pod spec their namespace's ResourceQuota charged (default: refused, a recreate applies it)",
    false,
  )
  .addOption(new Option('--log-level <level>', 'log level').choices(['debug', 'info', 'warn', 'error']).default('info'))
  .option('--shutdown-grace-period <duration>', 'time in-flight work gets to finish on SIGTERM', duration, 30_000)
  .option(
    '--image-prepull-parallelism <n>',
    'images pulled at once ahead of rollouts; 0 turns the pre-pull off',
    nonNegativeInt('--image-prepull-parallelism'),
    2,
  )
  .option(
    '--node-credentials <pem>',
    "the kubelet's client certificate and key in one PEM (e.g. /var/lib/kubelet/pki/kubelet-client-current.pem), required: " +
      "the node's pods, its Node and their pull secrets are read as the node, which the Node authorizer limits to that node",
    '',
  )
  .action(async (opts: AgentFlags) => {
    const { runAgent } = await import('./agent.js');
    process.exitCode = await runAgent(opts);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`tailor: ${errorMessage(err)}`);
  process.exitCode = 1;
});
