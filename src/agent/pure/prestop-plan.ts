// Which preStop hook the node agent runs before it stops a container for a restart in place
// (agent/restart.ts, decision 15), and how the pod's grace period splits between the hook and the stop,
// as the kubelet decides both when it kills a container (pkg/kubelet/kuberuntime killContainer and
// executePreStopHook, pkg/kubelet/lifecycle handlers).
// Owns: that decision, the grace arithmetic, and the bound on the hooks the agent keeps (a hook
// past it is refused, never run in part). Pure. Must not: run a hook, talk to the runtime or the
// network, or read the clock.
import type { Pod } from '../../api/wire.js';

type Container = NonNullable<NonNullable<Pod['spec']>['containers']>[number];
type Handler = NonNullable<NonNullable<Container['lifecycle']>['preStop']>;
type HttpGetAction = NonNullable<Handler['httpGet']>;

/**
 * Characters (as JSON) of one pod's preStop hooks that the node agent keeps in all (cache.ts):
 * hooks are commands, URLs and headers of tens to hundreds of characters; an inline script of a
 * few KiB still fits. A hook past what is left of it is kept as its size only (notKeptHook).
 */
export const PRESTOP_HOOKS_MAX_CHARS = 16 * 1024;

/** The size of a hook, as the bound counts it. */
export const hookChars = (handler: Handler): number => JSON.stringify(handler).length;

interface NotKept {
  readonly notKept: { readonly chars: number; readonly bound: number };
}

/**
 * What the agent's cache keeps in place of a hook past the bound: its size, never a part of it (a
 * command cut short could do something else than the whole one). stopPlan refuses to stop such a
 * container: neither the hook cut short nor no hook is the stop its pod asks for (decision 74).
 */
export const notKeptHook = (chars: number, bound: number): Handler => ({ notKept: { chars, bound } }) as Handler;

const notKeptOf = (handler: Handler): NotKept['notKept'] | undefined => (handler as Partial<NotKept>).notKept;

/** The kubelet's default when a pod names no terminationGracePeriodSeconds. */
export const DEFAULT_GRACE_SECONDS = 30;
/** The kubelet's minimumGracePeriodInSeconds: a stop never gets less, whatever the hook used. */
export const MINIMUM_GRACE_SECONDS = 2;
/** What the kubelet sends as User-Agent, with its version after the slash. */
export const HOOK_USER_AGENT = 'kube-lifecycle/tailor-agent';

export interface HttpGetHook {
  readonly kind: 'httpGet';
  readonly scheme: 'http' | 'https';
  /** A host name or an IP address, IPv6 without brackets. */
  readonly host: string;
  readonly port: number;
  /** Starts with a slash; may carry a query. */
  readonly path: string;
  /** Lower-cased names; `host` only when the hook sets a Host header. */
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
}

export type PreStopHook =
  | { readonly kind: 'exec'; readonly command: readonly string[] }
  | HttpGetHook
  | { readonly kind: 'sleep'; readonly seconds: number }
  /** A hook the kubelet would fail at runtime: it is reported, and the stop goes on. */
  | { readonly kind: 'invalid'; readonly reason: string };

export interface StopPlan {
  /** The pod's grace period: the hook's bound, and the stop's before the hook used some of it. */
  readonly graceSeconds: number;
  /** The hook to run first; none when the container has none or the grace period is 0. */
  readonly hook: PreStopHook | undefined;
  /** Why the container is not to be stopped at all: its hook is past what the agent keeps (notKeptHook). */
  readonly refused?: string;
}

/**
 * What stopping the named container (an app container or a native sidecar) of the pod takes: no
 * hook when the grace period is 0; the hook may run for the whole grace period; the stop gets what
 * is left (stopGraceSeconds).
 */
export function stopPlan(pod: Pod, containerName: string): StopPlan {
  const graceSeconds = pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
  const container = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
    (c) => c.name === containerName,
  );
  const handler = container?.lifecycle?.preStop;
  if (container === undefined || handler === undefined || graceSeconds <= 0) return { graceSeconds, hook: undefined };
  return { graceSeconds, ...planHook(handler, container, pod.status?.podIP) };
}

/** The hook to run, or why the stop is refused: a hook the agent's cache did not keep (notKeptHook). */
function planHook(handler: Handler, container: Container, podIP: string | undefined): Omit<StopPlan, 'graceSeconds'> {
  const notKept = notKeptOf(handler);
  if (notKept !== undefined) return { hook: undefined, refused: notKeptRefusal(container.name, notKept) };
  return { hook: preStopHook(handler, container, podIP) };
}

const notKeptRefusal = (container: string, { chars, bound }: NotKept['notKept']): string =>
  `the preStop hook of container ${container} (${chars} characters) is past the ${bound} characters of hooks ` +
  'the node agent keeps of a pod: the agent does not stop the container, with its hook cut short or without it; ' +
  'delete the pod to have it recreated, or make the hook shorter (a script in the image)';

/** The stop's grace period once the hook ran for `hookElapsedMs` (0 without a hook): whole seconds left, at least 2. */
export function stopGraceSeconds(graceSeconds: number, hookElapsedMs: number): number {
  const left = graceSeconds - Math.floor(Math.max(0, hookElapsedMs) / 1000);
  return Math.max(MINIMUM_GRACE_SECONDS, left);
}

/**
 * A hook is an exec command, an HTTP GET (scheme lower-cased, http by default; host defaults to the
 * pod IP; a port by number or by the name of one of the container's ports, a numeric string
 * standing for its number; the path; the headers, with the kubelet's User-Agent and Accept unless
 * the hook sets them) or a sleep. tcpSocket is not a hook the kubelet runs (it fails at runtime),
 * so neither does the agent: the hook is invalid and the stop goes on.
 */
function preStopHook(handler: Handler, container: Container, podIP?: string): PreStopHook {
  // The kubelet's order: exec, then httpGet, then sleep (validation allows only one).
  if (handler.exec !== undefined) {
    const command = handler.exec.command ?? [];
    return command.length > 0 ? { kind: 'exec', command } : { kind: 'invalid', reason: 'the exec hook has no command' };
  }
  if (handler.httpGet !== undefined) return httpGetHook(handler.httpGet, container, podIP);
  if (handler.sleep !== undefined) return { kind: 'sleep', seconds: Math.max(0, handler.sleep.seconds) };
  return {
    kind: 'invalid',
    reason: 'the hook has no exec, httpGet or sleep action (tcpSocket is not supported as a hook)',
  };
}

function httpGetHook(action: HttpGetAction, container: Container, podIP?: string): PreStopHook {
  const scheme = (action.scheme ?? '').toLowerCase() || 'http';
  if (scheme !== 'http' && scheme !== 'https')
    return { kind: 'invalid', reason: `the httpGet hook's scheme ${scheme} is not http or https` };
  const host = action.host || podIP;
  if (!host) return { kind: 'invalid', reason: 'the httpGet hook names no host and the pod has no IP' };
  const port = resolvePort(action.port, container);
  if (typeof port === 'string') return { kind: 'invalid', reason: port };
  const path = action.path ?? '';
  return {
    kind: 'httpGet',
    scheme,
    host: host.replace(/^\[(.*)\]$/, '$1'),
    port,
    path: path.startsWith('/') ? path : `/${path}`,
    headers: hookHeaders(action.httpHeaders ?? []),
  };
}

/** The port number, or why there is none (a message). */
function resolvePort(port: number | string | undefined, container: Container): number | string {
  let n: number;
  if (typeof port === 'number') n = port;
  else if (port === undefined || port === '') return 'the httpGet hook names no port';
  else {
    const named = container.ports?.find((p) => p.name === port)?.containerPort;
    if (named !== undefined) n = named;
    // A name that is not one of the container's ports may still be a number written as a string.
    else if (/^[+-]?\d+$/.test(port)) n = Number(port);
    else return `the httpGet hook's port ${port} is not a port of container ${container.name}`;
  }
  return Number.isInteger(n) && n > 0 && n < 65536 ? n : `the httpGet hook's port ${n} is not a valid port number`;
}

/** The hook's headers by lower-cased name (a name given twice sends both values), with the kubelet's defaults. */
function hookHeaders(given: ReadonlyArray<{ name: string; value: string }>): Record<string, string | string[]> {
  const byName = new Map<string, string[]>();
  for (const { name, value } of given) {
    const key = name.toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), value]);
  }
  const headers: Record<string, string | string[]> = { 'user-agent': HOOK_USER_AGENT, accept: '*/*' };
  for (const [name, values] of byName) {
    // One Host only: the kubelet uses the first as the request's host.
    headers[name] = name === 'host' || values.length === 1 ? (values[0] ?? '') : values;
  }
  return headers;
}
