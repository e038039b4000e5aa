// What every `kubectl tailor` verb shares: the exit codes, the one-line error (PluginError), the
// connection (kubeconfig, namespace, client) with a deadline on the first answer, reading one
// CloneSet with a 404 explained (API not installed, wrong namespace, wrong name), and the wording
// of API errors. Must not: decide anything about a rollout, or write to the cluster.
import { API_GROUP, API_VERSION, CLONESET_PLURAL } from '../../api/types.js';
import { KubeApiError } from '../../runtime/pure/api-error.js';
import { isNotFound, KubeClient } from '../../runtime/kube-client.js';
import type { WireCloneSet } from '../../api/wire.js';
import { loadKubeConfig } from '../kubeconfig.js';
import { describeRef, parseWorkloadRef, type WorkloadRef } from './pure/workload-ref.js';
import { errorMessage } from '../../api/errors.js';

/** The exit codes of every verb; `status` uses all four, the other verbs 0 and 3. */
export const ExitCodes = { complete: 0, blocked: 1, timeout: 2, error: 3 } as const;

/** The longest one read or write may take before it counts as failed. */
export const READ_TIMEOUT_MS = 30_000;

export type Reader = Pick<KubeClient, 'get' | 'list'>;

/** A one-line failure the user can act on; printed as `error: <message>`, exit 3. */
export class PluginError extends Error {}

export interface ConnectionOptions {
  namespace?: string;
  kubeconfig?: string;
}

export const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

export const formatDuration = (ms: number): string => {
  if (ms < 1000) return `${ms}ms`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
};

export const cloneSetPath = (ns: string, name = ''): string =>
  `/apis/${API_GROUP}/${API_VERSION}/namespaces/${encodeURIComponent(ns)}/${CLONESET_PLURAL}${name ? `/${encodeURIComponent(name)}` : ''}`;

/** The workload a verb's argument names (pure/workload-ref.ts), or a PluginError that says what to write. */
export function workloadRef(arg: string): WorkloadRef {
  const ref = parseWorkloadRef(arg);
  if ('error' in ref) throw new PluginError(ref.error);
  return ref;
}

/** What the verbs call the workload `arg` names: `clone "web"`, `InPlaceStatefulSet "db"`. */
export const called = (arg: string): string => describeRef(workloadRef(arg));

/** The API path of the workload `arg` names (`web`, `cloneset/web`, `ipsts/db`); of its kind's collection without a name. */
export function workloadPath(ns: string, arg: string): string {
  const { kind, name } = workloadRef(arg);
  return `/apis/${API_GROUP}/${API_VERSION}/namespaces/${encodeURIComponent(ns)}/${kind.plural}/${encodeURIComponent(name)}`;
}

export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the cluster did not answer within ${formatDuration(ms)}`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Errors that waiting will not fix. */
export const isFatal = (err: unknown): boolean =>
  err instanceof KubeApiError && [400, 401, 403, 404].includes(err.statusCode);

export const describeError = (err: unknown): string => {
  if (err instanceof KubeApiError) {
    if (err.statusCode === 0)
      return `cannot reach the cluster: ${(err.cause as Error | undefined)?.message ?? err.message}`;
    return err.status?.message
      ? `${err.status.reason ? `${err.status.reason}: ` : ''}${err.status.message}`
      : err.message;
  }
  return errorMessage(err);
};

/** Why a workload read answered 404: the API is not installed, the namespace is wrong, or the name is. */
export async function explainNotFound(client: Reader, ns: string, arg: string, err: KubeApiError): Promise<string> {
  const { kind, name } = workloadRef(arg);
  const what = kind.owner.kind;
  if (err.status?.reason !== 'NotFound') {
    return `the ${what} API (${API_GROUP}/${API_VERSION}) is not installed in this cluster: kubectl apply -f crds/`;
  }
  try {
    await client.get(`/api/v1/namespaces/${encodeURIComponent(ns)}`);
  } catch (nsErr) {
    if (isNotFound(nsErr)) return `namespace "${ns}" not found (pass the ${what}'s namespace with -n)`;
  }
  let others = '';
  try {
    const list = await client.list<WireCloneSet>(
      `/apis/${API_GROUP}/${API_VERSION}/namespaces/${encodeURIComponent(ns)}/${kind.plural}`,
    );
    const names = list.items
      .map((c) => c.metadata?.name ?? '')
      .filter(Boolean)
      .sort();
    others =
      names.length > 0
        ? ` (${what}s there: ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''})`
        : ` (it has no ${what}s)`;
  } catch {
    // A hint only.
  }
  return `${what} "${name}" not found in namespace "${ns}"${others}`;
}

/**
 * The workload `arg` names, as the engine reads it (its kind's view: the CloneSet shape with
 * defaults, so every verb reads either kind alike), or a PluginError that says why not.
 */
export async function readWorkload(client: Reader, ns: string, arg: string): Promise<WireCloneSet> {
  const { kind } = workloadRef(arg);
  try {
    return kind.view(await withDeadline(client.get<WireCloneSet>(workloadPath(ns, arg)), READ_TIMEOUT_MS));
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404)
      throw new PluginError(await explainNotFound(client, ns, arg, err), { cause: err });
    throw new PluginError(describeError(err), { cause: err });
  }
}

/** A write's failure as one line: `<what> failed: <why>`. */
export function writeFailed(what: string, err: unknown): PluginError {
  return new PluginError(`${what} failed: ${describeError(err)}`, { cause: err });
}

export interface Connection {
  client: KubeClient;
  namespace: string;
  close(): void;
}

/** Loads the kubeconfig (a server that accepts and never answers must not hang us) and opens a client. */
export async function connect(opts: ConnectionOptions, timeoutMs = READ_TIMEOUT_MS): Promise<Connection> {
  let kc;
  try {
    kc = await withDeadline(loadKubeConfig(opts.kubeconfig), Math.max(1000, timeoutMs));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES')
      throw new PluginError(
        `cannot read kubeconfig ${opts.kubeconfig ?? process.env['KUBECONFIG'] ?? ''}: ${code === 'ENOENT' ? 'no such file' : 'permission denied'}`,
        { cause: err },
      );
    throw new PluginError(errorMessage(err), { cause: err });
  }
  const context = kc.getContextObject(kc.getCurrentContext());
  const namespace = opts.namespace || context?.namespace || 'default';
  const client = new KubeClient(kc);
  return { client, namespace, close: () => client.close() };
}

/** Runs `work` on a fresh connection and closes it afterwards. */
export async function withConnection<T>(
  opts: ConnectionOptions,
  work: (c: Connection) => Promise<T>,
  timeoutMs?: number,
): Promise<T> {
  const connection = await connect(opts, timeoutMs);
  try {
    return await work(connection);
  } finally {
    connection.close();
  }
}

/** `-n <ns>` when the namespace was given, so the printed next command works as typed. */
export const namespaceFlag = (opts: ConnectionOptions): string => (opts.namespace ? ` -n ${opts.namespace}` : '');
