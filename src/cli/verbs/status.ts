// `kubectl tailor status <clone>`: the wait loop (read the CloneSet and its pods every interval
// until the verdict is final or the timeout passes), the terminal output (redraw in place on a
// TTY, one line per change otherwise) and the exit code:
//   0 rollout complete · 1 rollout blocked · 2 timed out (or, with --no-watch, not finished yet)
//   3 bad input or an error (unknown CloneSet or namespace, no cluster, no permission)
// The verdict itself comes from status-view.ts. Must not: write to the cluster, or judge a
// rollout itself.
import { CLONESET_OWNER, controllerOf } from '../../api/owner.js';
import { selectorString } from '../../workload/pure/selector.js';
import { KubeApiError } from '../../runtime/api-error.js';
import { renderStatus, renderSummaryLine } from '../status-render.js';
import { buildStatusView, type StatusView } from '../status-view.js';
import {
  cloneSetPath,
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
}

async function readSnapshot(client: Reader, ns: string, name: string): Promise<Snapshot> {
  const cs = await client.get<WireCloneSet>(cloneSetPath(ns, name));
  const selector = cs.status?.labelSelector || selectorString(cs.spec?.selector);
  const list = await client.list<Pod>(
    `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`,
    selector ? { labelSelector: selector } : undefined,
  );
  const uid = cs.metadata?.uid;
  const pods = list.items.filter((p) => uid !== undefined && controllerOf(p, CLONESET_OWNER)?.uid === uid);
  return { cs, pods };
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
        return fail(
          view ? `CloneSet "${name}" in namespace "${ns}" was deleted` : await explainNotFound(client, ns, name, err),
        );
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
