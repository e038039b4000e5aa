// `kubectl tailor`: the kubectl plugin (bin/kubectl-tailor runs it). Owns the command line, the
// wait loop of `kubectl tailor status <clone>` (read the CloneSet and its pods every interval
// until the verdict is final or the timeout passes), the terminal output (redraw in place on a
// TTY, one line per change otherwise) and the exit code:
//   0 rollout complete · 1 rollout blocked · 2 timed out (or, with --no-watch, not finished yet)
//   3 bad input or an error (unknown CloneSet or namespace, no cluster, no permission)
// Errors end with one line on stderr. The verdict itself comes from status-view.ts.
// Must not: write to the cluster, or judge a rollout itself.
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { readFileSync } from 'node:fs';
import { parseDuration } from '../api/duration.js';
import type { CloneSet } from '../api/types.js';
import { selectorString } from '../cloneset/selector.js';
import { API_GROUP, API_VERSION, CLONESET_PLURAL } from '../api/types.js';
import { isNotFound, KubeApiError, KubeClient, type Pod, type Wire } from '../runtime/kube-client.js';
import { loadKubeConfig } from './kubeconfig.js';
import { buildStatusView, renderStatus, renderSummaryLine, type StatusView } from './status-view.js';

export const ExitCodes = { complete: 0, blocked: 1, timeout: 2, error: 3 } as const;

/** A blocker that may clear by itself (e.g. FailedUpdate from an API conflict) must hold this long. */
const CONFIRM_TRANSIENT_MS = 10_000;

/** The longest one read of the CloneSet and its pods may take before it counts as failed. */
const READ_TIMEOUT_MS = 30_000;

type WireCloneSet = Wire<CloneSet>;
type Reader = Pick<KubeClient, 'get' | 'list'>;

/** A one-line failure the user can act on; printed as `error: <message>`. */
class PluginError extends Error {}

export interface StatusOptions {
  namespace?: string;
  kubeconfig?: string;
  /** Milliseconds; 0 waits without a limit. */
  timeout: number;
  /** Milliseconds between reads. */
  interval: number;
  watch: boolean;
}

/** A duration flag: 30s, 5m, 1h30m, 500ms; a bare number is seconds; 0 is none. */
function durationFlag(value: string): number {
  try {
    return parseDuration(value);
  } catch (err) {
    throw new InvalidArgumentError(`${err instanceof Error ? err.message : String(err)}, or 0 for no limit`);
  }
}

const parseInterval = (value: string): number => {
  const ms = durationFlag(value);
  if (ms <= 0) throw new InvalidArgumentError('the interval must be greater than 0');
  return ms;
};

const formatDuration = (ms: number): string => {
  if (ms < 1000) return `${ms}ms`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
};

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

const cloneSetPath = (ns: string, name = ''): string =>
  `/apis/${API_GROUP}/${API_VERSION}/namespaces/${encodeURIComponent(ns)}/${CLONESET_PLURAL}${name ? `/${encodeURIComponent(name)}` : ''}`;

interface Snapshot {
  cs: WireCloneSet;
  pods: Pod[];
}

async function readSnapshot(client: Reader, ns: string, name: string): Promise<Snapshot> {
  const cs = await client.get<WireCloneSet>(cloneSetPath(ns, name));
  const selector = cs.status?.labelSelector || selectorString(cs.spec?.selector);
  const list = await client.list<Pod>(
    `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`,
    selector ? { labelSelector: selector } : undefined,
  );
  const uid = cs.metadata?.uid;
  const pods = list.items.filter((p) => p.metadata?.ownerReferences?.some((o) => o.controller && o.uid === uid));
  return { cs, pods };
}

/** Why a CloneSet read answered 404: the API is not installed, the namespace is wrong, or the name is. */
async function explainNotFound(client: Reader, ns: string, name: string, err: KubeApiError): Promise<string> {
  if (err.status?.reason !== 'NotFound') {
    return `the CloneSet API (${API_GROUP}/${API_VERSION}) is not installed in this cluster: kubectl apply -f crds/`;
  }
  try {
    await client.get(`/api/v1/namespaces/${encodeURIComponent(ns)}`);
  } catch (nsErr) {
    if (isNotFound(nsErr)) return `namespace "${ns}" not found (pass the CloneSet's namespace with -n)`;
  }
  let others = '';
  try {
    const list = await client.list<WireCloneSet>(cloneSetPath(ns));
    const names = list.items
      .map((c) => c.metadata?.name ?? '')
      .filter(Boolean)
      .sort();
    others =
      names.length > 0 ? ` (CloneSets there: ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''})` : ' (it has no CloneSets)';
  } catch {
    // A hint only.
  }
  return `CloneSet "${name}" not found in namespace "${ns}"${others}`;
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the cluster did not answer within ${formatDuration(ms)}`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Errors that waiting will not fix. */
const isFatal = (err: unknown): boolean => err instanceof KubeApiError && [400, 401, 403, 404].includes(err.statusCode);

const describeError = (err: unknown): string => {
  if (err instanceof KubeApiError) {
    if (err.statusCode === 0) return `cannot reach the cluster: ${(err.cause as Error | undefined)?.message ?? err.message}`;
    return err.status?.message ? `${err.status.reason ? `${err.status.reason}: ` : ''}${err.status.message}` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
};

// ---- output --------------------------------------------------------------------------------

interface Output {
  /** Shows the current view (only when something changed). */
  show(view: StatusView, footer: string): void;
  /** Shows a read error while retrying. */
  retrying(message: string): void;
  /** Leaves the final view where the user can read it. */
  finish(view: StatusView | undefined, verdictShown: boolean): void;
}

/** A terminal: the view redrawn in place, lines cut to the terminal width so none wraps. */
class TerminalOutput implements Output {
  private drawn = 0;
  private last = '';
  private note = '';
  constructor(private readonly stream: NodeJS.WriteStream) {}

  show(view: StatusView, footer: string): void {
    const lines = [...renderStatus(view), ...(footer ? [footer] : []), ...(this.note ? [this.note] : [])];
    this.draw(lines);
  }
  retrying(message: string): void {
    this.note = `(retrying: ${message})`;
  }
  finish(): void {
    this.note = '';
  }
  private draw(lines: string[]): void {
    const width = Math.max(20, (this.stream.columns || 120) - 1);
    const cut = lines.map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
    const text = cut.join('\n');
    if (text === this.last) return;
    const up = this.drawn > 0 ? `\x1b[${this.drawn}F` : '';
    this.stream.write(`${up}\x1b[0J${text}\n`);
    this.drawn = cut.length;
    this.last = text;
  }
}

/** Logs and pipes: one summary line whenever it changes; the full view at the end when not complete. */
class LineOutput implements Output {
  private last = '';
  private lastRetry = '';
  constructor(private readonly stream: NodeJS.WritableStream) {}

  show(view: StatusView): void {
    const line = renderSummaryLine(view);
    if (line === this.last) return;
    this.stream.write(`${line}\n`);
    this.last = line;
  }
  retrying(message: string): void {
    if (message === this.lastRetry) return;
    this.stream.write(`retrying: ${message}\n`);
    this.lastRetry = message;
  }
  finish(view: StatusView | undefined, verdictShown: boolean): void {
    if (view && !verdictShown) this.stream.write(`${renderStatus(view).join('\n')}\n`);
  }
}

// ---- status --------------------------------------------------------------------------------

export interface StatusDeps {
  client: Reader;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WritableStream;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The exit code a view settles, if it does: complete; blocked once a blocker that cannot clear
 * by itself shows, or a transient one has held for CONFIRM_TRANSIENT_MS (at once when not
 * watching).
 */
function finalVerdict(view: StatusView, watching: boolean, blockedForMs: number): number | undefined {
  if (view.verdict === 'complete') return ExitCodes.complete;
  if (view.verdict !== 'blocked') return undefined;
  const settled = view.blockers.some((b) => !b.transient) || blockedForMs >= CONFIRM_TRANSIENT_MS;
  return settled || !watching ? ExitCodes.blocked : undefined;
}

/** Follows one CloneSet's rollout; returns the exit code. */
export async function followStatus(name: string, ns: string, opts: StatusOptions, deps: StatusDeps): Promise<number> {
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const client = deps.client;
  const tty = deps.stdout.isTTY === true && process.env['TERM'] !== 'dumb';
  const out: Output = tty ? new TerminalOutput(deps.stdout) : new LineOutput(deps.stdout);
  const started = now();
  const deadline = opts.timeout > 0 ? started + opts.timeout : Infinity;
  const subject = `clone "${name}"`;
  let view: StatusView | undefined;
  let blockedSince: number | undefined;

  const fail = (message: string): number => {
    out.finish(view, true);
    deps.stderr.write(`error: ${oneLine(message)}\n`);
    return ExitCodes.error;
  };

  for (;;) {
    try {
      // A stalled connection must not outlive the timeout: give each read a deadline of its own.
      const budget = Math.max(1000, Math.min(READ_TIMEOUT_MS, deadline - now()));
      const snapshot = await withDeadline(readSnapshot(client, ns, name), budget);
      view = buildStatusView(snapshot.cs, snapshot.pods, now());
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) {
        return fail(view ? `CloneSet "${name}" in namespace "${ns}" was deleted` : await explainNotFound(client, ns, name, err));
      }
      if (isFatal(err) || (!view && !opts.watch)) return fail(describeError(err));
      out.retrying(oneLine(describeError(err)));
    }
    const t = now();
    if (view) {
      const waited = formatDuration(Math.max(1000, Math.floor((t - started) / 1000) * 1000));
      const limit = opts.timeout > 0 ? `, timeout ${formatDuration(opts.timeout)}` : '';
      out.show(view, opts.watch ? `(watching for ${waited}${limit}; Ctrl-C stops)` : '');
      blockedSince = view.verdict === 'blocked' ? (blockedSince ?? t) : undefined;
      const done = finalVerdict(view, opts.watch, blockedSince === undefined ? 0 : t - blockedSince);
      if (done !== undefined) {
        out.finish(view, done === ExitCodes.complete);
        if (done === ExitCodes.complete) deps.stdout.write(`${subject} ${view.message}\n`);
        else deps.stderr.write(`error: ${subject} rollout is blocked: ${oneLine(view.message)}\n`);
        return done;
      }
    }
    if (!opts.watch) {
      out.finish(view, false);
      deps.stderr.write(`${subject} rollout is not finished: ${view?.message ?? 'no status'}\n`);
      return ExitCodes.timeout;
    }
    if (t >= deadline) {
      out.finish(view, false);
      deps.stderr.write(
        `error: timed out after ${formatDuration(opts.timeout)} waiting for ${subject}: ${oneLine(view?.message ?? 'no status read')}\n`,
      );
      return ExitCodes.timeout;
    }
    await sleep(Math.max(0, Math.min(opts.interval, deadline - t)));
  }
}

async function status(name: string, opts: StatusOptions): Promise<number> {
  let kc;
  try {
    // loadKubeConfig asks the server for /version; a server that accepts and never answers must not hang us.
    kc = await withDeadline(loadKubeConfig(opts.kubeconfig), Math.max(1000, Math.min(READ_TIMEOUT_MS, opts.timeout || READ_TIMEOUT_MS)));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES')
      throw new PluginError(
        `cannot read kubeconfig ${opts.kubeconfig ?? process.env['KUBECONFIG'] ?? ''}: ${code === 'ENOENT' ? 'no such file' : 'permission denied'}`,
      );
    throw new PluginError(err instanceof Error ? err.message : String(err));
  }
  const context = kc.getContextObject(kc.getCurrentContext());
  const ns = opts.namespace || context?.namespace || 'default';
  const client = new KubeClient(kc);
  try {
    return await followStatus(name, ns, opts, { client, stdout: process.stdout, stderr: process.stderr });
  } finally {
    client.close();
  }
}

// ---- command line --------------------------------------------------------------------------

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export function buildProgram(): Command {
  const program = new Command('kubectl tailor')
    .description("Tailor's kubectl plugin: follow in-place rollouts of CloneSets (apps.tailor.dev)")
    .version(version(), '--version')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`${oneLine(text)}\n`) });

  program
    .command('status')
    .description("show a CloneSet's rollout and wait until it is complete, blocked, or the timeout passes")
    .argument('<clone>', 'CloneSet name')
    .option('-n, --namespace <ns>', 'namespace (default: the kubeconfig context\'s namespace, else "default")')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)')
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
    .action(async (clone: string, opts: StatusOptions) => {
      process.exitCode = await status(clone, opts);
    });
  return program;
}

/** Runs the plugin with process.argv-style arguments; returns the exit code. */
export async function runPlugin(argv: string[]): Promise<number> {
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
    process.stderr.write(`error: ${oneLine(err instanceof Error ? err.message : String(err))}\n`);
    return ExitCodes.error;
  }
}
