// `kubectl tailor`: the kubectl plugin (bin/kubectl-tailor runs it; bin/kubectl_complete-tailor
// runs its completion). Owns the command line: the verbs, their flags and help, parsing bad input
// into one line on stderr and exit 3, and the verbs' specs for shell completion. Each verb lives
// in src/cli/verbs/ (status.ts, history.ts, undo.ts, pause.ts, restart.ts, complete.ts).
// Exit codes: 0 done (status: the rollout is complete) · 1 status: the rollout is blocked ·
// 2 status: timed out (or, with --no-watch, not finished) · 3 bad input or an error (unknown
// CloneSet, revision or namespace, no cluster, no permission).
// Must not: talk to the cluster itself, or hold a verb's logic.
import { Command, CommanderError, InvalidArgumentError, type Option } from 'commander';
import { readFileSync } from 'node:fs';
import { parseDuration } from '../api/duration.js';
import { ExitCodes, oneLine, type ConnectionOptions } from './verbs/common.js';
import { complete } from './verbs/complete.js';
import {
  bashScript,
  SHELLS,
  zshScript,
  type ArgKind,
  type OptionSpec,
  type ValueKind,
  type VerbSpec,
} from './verbs/pure/completion.js';
import { history, type HistoryOptions } from './verbs/history.js';
import { setPaused } from './verbs/pause.js';
import { restart } from './verbs/restart.js';
import { status, type StatusOptions } from './verbs/status.js';
import { undo, type UndoOptions } from './verbs/undo.js';
import { errorMessage } from '../api/errors.js';

/** A duration flag: 30s, 5m, 1h30m, 500ms; a bare number is seconds; 0 is none. */
function durationFlag(value: string): number {
  try {
    return parseDuration(value);
  } catch (err) {
    throw new InvalidArgumentError(`${errorMessage(err)}, or 0 for no limit`);
  }
}

const parseInterval = (value: string): number => {
  const ms = durationFlag(value);
  if (ms <= 0) throw new InvalidArgumentError('the interval must be greater than 0');
  return ms;
};

/** A revision number: a positive integer, as the history lists them. */
export function parseRevision(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(
      `"${value}" is not a revision number (a positive integer; see kubectl tailor history <clone>)`,
    );
  }
  return Number(value);
}

/** An undo target: a revision number, or 0 for the previous revision (kubectl's meaning). */
export function parseToRevision(value: string): number {
  return value.trim() === '0' ? 0 : parseRevision(value);
}

export function parseOutput(value: string): 'yaml' | 'json' {
  if (value === 'yaml' || value === 'json') return value;
  throw new InvalidArgumentError(`"${value}" is not an output format (yaml or json)`);
}

function parseShell(value: string): string {
  if (SHELLS.includes(value)) return value;
  throw new InvalidArgumentError(`"${value}" is not a supported shell (${SHELLS.join(' or ')})`);
}

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** What each verb's argument is, and each value-taking flag's value, for completion. */
const ARG_KINDS: Record<string, ArgKind> = { completion: 'shell' };
const VALUE_KINDS: Record<string, ValueKind> = {
  '--namespace': 'namespace',
  '--kubeconfig': 'file',
  '--revision': 'revision',
  '--to-revision': 'revision',
  '--output': { choices: ['yaml', 'json'] },
};

/** `-n, --namespace` and `--kubeconfig`, which every verb that reads the cluster takes. */
function withCluster(command: Command): Command {
  return command
    .option('-n, --namespace <ns>', 'namespace (default: the kubeconfig context\'s namespace, else "default")')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)');
}

const EXIT_STATUS = `
Exit status:
  0  done
  3  bad input or an error: unknown CloneSet, revision or namespace, no cluster, no permission`;

/** Runs a verb and keeps its exit code; PluginError and other failures reach runPlugin as one line. */
const act =
  <A extends unknown[]>(verb: (...args: A) => Promise<number>) =>
  async (...args: A): Promise<void> => {
    process.exitCode = await verb(...args);
  };

export function buildProgram(): Command {
  const program = new Command('kubectl tailor')
    .description(
      "Tailor's kubectl plugin: follow and steer in-place rollouts of CloneSets and InPlaceStatefulSets (apps.tailor.dev)",
    )
    .version(version(), '--version')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`${oneLine(text)}\n`) });

  withCluster(
    program
      .command('status')
      .description("show a CloneSet's rollout and wait until it is complete, blocked, or the timeout passes")
      .argument('<clone>', 'a CloneSet (web) or an InPlaceStatefulSet (ipsts/db)'),
  )
    .option('--timeout <duration>', 'give up after this long, e.g. 5m; 0 waits without a limit', durationFlag, 0)
    .option('--interval <duration>', 'how often to read the CloneSet and its pods', parseInterval, 1000)
    .option('-w, --watch', 'keep watching until the rollout is complete or blocked (default)', true)
    .option('--no-watch', 'print the current status once and exit')
    .addHelpText(
      'after',
      `
Exit status:
  0  the rollout is complete: every desired pod (or, under a partition, the expected number)
     runs the update revision and is ready, and no resize is unfinished
  1  the rollout is blocked: FailedUpdate, ResizeBlocked, an Infeasible resize the strategy
     waits on, or Progressing False (ProgressDeadlineExceeded); the reason is printed
  2  the timeout passed first (with --no-watch: the rollout is not finished yet)
  3  bad input or an error: unknown CloneSet or namespace, no cluster, no permission

Examples:
  kubectl tailor status web
  kubectl tailor status web -n shop --timeout 5m   # gate a CI pipeline on the rollout`,
    )
    .action(act((clone: string, opts: StatusOptions) => status(clone, opts)));

  withCluster(
    program
      .command('history')
      .description("list a CloneSet's revisions and what each changed, or print one revision's pod template")
      .argument('<clone>', 'a CloneSet (web) or an InPlaceStatefulSet (ipsts/db)'),
  )
    .option('--revision <n>', "print this revision's pod template", parseRevision)
    .option('-o, --output <format>', 'with --revision: yaml (default) or json', parseOutput)
    .addHelpText(
      'after',
      `${EXIT_STATUS}\n\nExamples:\n  kubectl tailor history web\n  kubectl tailor history web --revision 2`,
    )
    .action(act((clone: string, opts: HistoryOptions) => history(clone, opts)));

  withCluster(
    program
      .command('undo')
      .description("roll a CloneSet's pod template back to the previous revision (or --to-revision)")
      .argument('<clone>', 'a CloneSet (web) or an InPlaceStatefulSet (ipsts/db)'),
  )
    .option('--to-revision <n>', 'the revision to roll back to; 0 or none: the previous one', parseToRevision)
    .addHelpText(
      'after',
      `${EXIT_STATUS}\n\nExamples:\n  kubectl tailor undo web\n  kubectl tailor undo web --to-revision 2`,
    )
    .action(act((clone: string, opts: UndoOptions) => undo(clone, opts)));

  withCluster(
    program
      .command('pause')
      .description("pause a CloneSet's rollout (spec.updateStrategy.paused)")
      .argument('<clone>', 'a CloneSet (web) or an InPlaceStatefulSet (ipsts/db)'),
  )
    .addHelpText('after', EXIT_STATUS)
    .action(act((clone: string, opts: ConnectionOptions) => setPaused(clone, true, opts)));

  withCluster(
    program
      .command('resume')
      .description("resume a paused CloneSet's rollout")
      .argument('<clone>', 'a CloneSet (web) or an InPlaceStatefulSet (ipsts/db)'),
  )
    .addHelpText('after', EXIT_STATUS)
    .action(act((clone: string, opts: ConnectionOptions) => setPaused(clone, false, opts)));

  withCluster(
    program
      .command('restart')
      .description("restart every container of a CloneSet's pods in place, pod by pod within maxUnavailable")
      .argument('<clone>', 'a CloneSet (web) or an InPlaceStatefulSet (ipsts/db)'),
  )
    .addHelpText('after', `${EXIT_STATUS}\n\nFollow it with: kubectl tailor status <clone>`)
    .action(act((clone: string, opts: ConnectionOptions) => restart(clone, opts)));

  program
    .command('completion')
    .description('print a shell completion script for kubectl-tailor (bash or zsh)')
    .argument('<shell>', 'bash or zsh', parseShell)
    .addHelpText(
      'after',
      `
\`kubectl tailor <TAB>\` works through kubectl's own completion (kubectl 1.26+) once
kubectl_complete-tailor is on PATH (make install-plugin puts it there). This script completes
kubectl-tailor run by its own name:
  source <(kubectl tailor completion bash)      # or zsh`,
    )
    .action((shell: string) => {
      process.stdout.write(shell === 'zsh' ? zshScript() : bashScript());
    });
  return program;
}

/** The verbs, their argument and their flags, as completion sees them. */
export function verbSpecs(program: Command = buildProgram()): VerbSpec[] {
  const optionSpec = (o: Option): OptionSpec => {
    const flags = [o.short, o.long].filter((f): f is string => Boolean(f));
    const takesValue = o.required || o.optional;
    return { flags, description: o.description, value: takesValue ? (VALUE_KINDS[o.long ?? ''] ?? 'none') : undefined };
  };
  return program.commands.map((c) => ({
    name: c.name(),
    description: c.description(),
    arg: ARG_KINDS[c.name()] ?? (c.registeredArguments.length > 0 ? 'clone' : 'none'),
    options: [...c.options.map(optionSpec), { flags: ['-h', '--help'], description: 'show help' }],
  }));
}

/** Answers a completion request (the words after `kubectl tailor`); always 0. */
export function runCompletion(words: string[]): Promise<number> {
  return complete(verbSpecs(), words.length > 0 ? words : ['']);
}

/** Runs the plugin with process.argv-style arguments; returns the exit code. */
export async function runPlugin(argv: string[]): Promise<number> {
  if (argv[2] === '__complete') return runCompletion(argv.slice(3));
  const program = buildProgram();
  process.exitCode = undefined;
  // `kubectl tailor ... | head` closes the pipe early: stop quietly instead of crashing.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  });
  if (argv.length <= 2) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and --version exit 0; usage errors were printed by commander as one line.
      return err.exitCode === 0 ? 0 : ExitCodes.error;
    }
    // PluginError and everything else end the same way: one line, exit 3.
    process.stderr.write(`error: ${oneLine(errorMessage(err))}\n`);
    return ExitCodes.error;
  }
}
