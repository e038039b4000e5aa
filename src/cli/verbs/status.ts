// `kubectl tailor status <clone>`: the wait loop (read the CloneSet and its pods every interval
// until the verdict is final or the timeout passes), the terminal output (redraw in place on a
// TTY, one line per change otherwise) and the exit code:
//   0 rollout complete · 1 rollout blocked · 2 timed out (or, with --no-watch, not finished yet)
//   3 bad input or an error (unknown CloneSet or namespace, no cluster, no permission)
// The verdict itself comes from status-view.ts. Must not: write to the cluster, or judge a
// rollout itself.
import { workloadControllerOf } from '../../api/owner.js';
import { selectorString } from '../../workload/pure/selector.js';
import { KubeApiError } from '../../runtime/pure/api-error.js';
import { renderStatus, renderSummaryLine } from '../pure/status-render.js';
import { buildStatusView, withDriver, type StatusView } from '../pure/status-view.js';
import { driverOf, ROLLOUTS_PATH, type RolloutDriver } from '../pure/driver.js';
import {
  called,
  workloadPath,
  workloadRef,
  describeError,
  ExitCodes,
  explainNotFound,
  formatDuration,
  isFatal,
  oneLine,
  READ_TIMEOUT_MS,
  withConnection,
  withDeadline,
  type ConnectionOptions,
  type Reader,
} from './common.js';
import type { WireCloneSet, Pod } from '../../api/wire.js';

/** A blocker that may clear by itself (e.g. FailedUpdate from an API conflict) must hold this long. */
const CONFIRM_TRANSIENT_MS = 10_000;

export interface StatusOptions extends ConnectionOptions {
  /** Milliseconds; 0 waits without a limit. */
  timeout: number;
  /** Milliseconds between reads. */
  interval: number;
  watch: boolean;
}

interface Snapshot {
  cs: WireCloneSet;
  pods: Pod[];
  driver: RolloutDriver | undefined;
}

async function readSnapshot(client: Reader, ns: string, name: string): Promise<Snapshot> {
  const cs = workloadRef(name).kind.view(await client.get<WireCloneSet>(workloadPath(ns, name)));
  const selector = cs.status?.labelSelector || selectorString(cs.spec?.selector);
  const list = await client.list<Pod>(
    `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`,
    selector ? { labelSelector: selector } : undefined,
  );
  const uid = cs.metadata?.uid;
  const pods = list.items.filter((p) => uid !== undefined && workloadControllerOf(p)?.uid === uid);
  return { cs, pods, driver: await readDriver(client, ns, cs) };
}

/**
 * The Kruise Rollout driving the workload, if any: none when its CRD is not installed or the user
 * may not list Rollouts (the status is complete without it).
 */
async function readDriver(client: Reader, ns: string, cs: WireCloneSet): Promise<RolloutDriver | undefined> {
  try {
    const rollouts = await client.list<unknown>(ROLLOUTS_PATH(ns), { limit: 100 });
    return driverOf(rollouts.items, cs.kind ?? '', cs.metadata?.name ?? '');
  } catch (err) {
    if (err instanceof KubeApiError && (err.statusCode === 404 || err.statusCode === 403)) return undefined;
    throw err;
  }
}

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
  return new StatusFollower(name, ns, opts, deps).run();
}

/** One `kubectl tailor status` run: read, show, and stop once the rollout settles or time is up. */
class StatusFollower {
  private readonly now: () => number;
  private readonly out: Output;
  private readonly started: number;
  private readonly deadline: number;
  private readonly subject: string;
  private view: StatusView | undefined;
  private blockedSince: number | undefined;

  constructor(
    private readonly name: string,
    private readonly ns: string,
    private readonly opts: StatusOptions,
    private readonly deps: StatusDeps,
  ) {
    this.now = deps.now ?? Date.now;
    const tty = deps.stdout.isTTY === true && process.env['TERM'] !== 'dumb';
    this.out = tty ? new TerminalOutput(deps.stdout) : new LineOutput(deps.stdout);
    this.started = this.now();
    this.deadline = opts.timeout > 0 ? this.started + opts.timeout : Infinity;
    this.subject = `${called(name)}`;
  }

  async run(): Promise<number> {
    const sleep = this.deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    for (;;) {
      const failed = await this.read();
      if (failed !== undefined) return failed;
      const t = this.now();
      const done = this.view ? this.show(this.view, t) : undefined;
      const ended = done ?? this.stopWaiting(t);
      if (ended !== undefined) return ended;
      await sleep(Math.max(0, Math.min(this.opts.interval, this.deadline - t)));
    }
  }

  /** Reads the CloneSet and its pods into the view; an exit code when reading cannot go on. */
  private async read(): Promise<number | undefined> {
    const { client } = this.deps;
    try {
      // A stalled connection must not outlive the timeout: give each read a deadline of its own.
      const budget = Math.max(1000, Math.min(READ_TIMEOUT_MS, this.deadline - this.now()));
      const snapshot = await withDeadline(readSnapshot(client, this.ns, this.name), budget);
      this.view = withDriver(buildStatusView(snapshot.cs, snapshot.pods, this.now()), snapshot.driver);
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) {
        return this.fail(
          this.view
            ? `CloneSet "${this.name}" in namespace "${this.ns}" was deleted`
            : await explainNotFound(client, this.ns, this.name, err),
        );
      }
      if (isFatal(err) || (!this.view && !this.opts.watch)) return this.fail(describeError(err));
      this.out.retrying(oneLine(describeError(err)));
    }
    return undefined;
  }

  /** Shows the view; the exit code once its verdict is final. */
  private show(view: StatusView, t: number): number | undefined {
    const waited = formatDuration(Math.max(1000, Math.floor((t - this.started) / 1000) * 1000));
    const limit = this.opts.timeout > 0 ? `, timeout ${formatDuration(this.opts.timeout)}` : '';
    this.out.show(view, this.opts.watch ? `(watching for ${waited}${limit}; Ctrl-C stops)` : '');
    this.blockedSince = view.verdict === 'blocked' ? (this.blockedSince ?? t) : undefined;
    const done = finalVerdict(view, this.opts.watch, this.blockedSince === undefined ? 0 : t - this.blockedSince);
    if (done === undefined) return undefined;
    this.out.finish(view, done === ExitCodes.complete);
    if (done === ExitCodes.complete) this.deps.stdout.write(`${this.subject} ${view.message}\n`);
    else this.deps.stderr.write(`error: ${this.subject} rollout is blocked: ${oneLine(view.message)}\n`);
    return done;
  }

  /** The exit code when the rollout has not settled and there is no more waiting: not watching, or time is up. */
  private stopWaiting(t: number): number | undefined {
    if (!this.opts.watch) {
      this.out.finish(this.view, false);
      this.deps.stderr.write(`${this.subject} rollout is not finished: ${this.view?.message ?? 'no status'}\n`);
      return ExitCodes.timeout;
    }
    if (t < this.deadline) return undefined;
    this.out.finish(this.view, false);
    const said = oneLine(this.view?.message ?? 'no status read');
    this.deps.stderr.write(
      `error: timed out after ${formatDuration(this.opts.timeout)} waiting for ${this.subject}: ${said}\n`,
    );
    return ExitCodes.timeout;
  }

  private fail(message: string): number {
    this.out.finish(this.view, true);
    this.deps.stderr.write(`error: ${oneLine(message)}\n`);
    return ExitCodes.error;
  }
}

/** `kubectl tailor status`: follows the rollout on a fresh connection; returns the exit code. */
export async function status(name: string, opts: StatusOptions): Promise<number> {
  // loadKubeConfig asks the server for /version; that first answer gets the same deadline as a read.
  const connectTimeout = Math.min(READ_TIMEOUT_MS, opts.timeout || READ_TIMEOUT_MS);
  return withConnection(
    opts,
    ({ client, namespace }) =>
      followStatus(name, namespace, opts, { client, stdout: process.stdout, stderr: process.stderr }),
    connectTimeout,
  );
}
