// The agent's judgement of a resize request against its namespace's LimitRanges and
// ResourceQuotas (docs/decisions/0051-agent-resizes-within-quota.md): a resize on the agent path
// never changes the pod spec, so the API server's LimitRanger and ResourceQuota admission never see
// it. Refused requests are Infeasible: the CloneSet's onInfeasible Recreate gives the pod its new
// resources through a new pod, which the API server admits against both.
// Pure. Must not: do I/O, or look at resources other than cpu and memory.
import type * as k8s from '@kubernetes/client-node';
import { formatQuantity, parseQuantity } from '../../api/quantity.js';
import { AgentVerdicts } from '../../api/reasons.js';
import { isSidecar } from '../../api/pod.js';
import type { Pod, Wire } from '../../api/wire.js';
import type { ContainerResources, ResizeRequest } from '../../resize/agent-protocol.js';

export type LimitRange = Wire<k8s.V1LimitRange>;
export type ResourceQuota = Wire<k8s.V1ResourceQuota>;

type Resource = 'cpu' | 'memory';
const RESOURCES: readonly Resource[] = ['cpu', 'memory'];

/** What refuses the request, or undefined. */
export interface NamespaceLimitsVerdict {
  readonly reason: typeof AgentVerdicts.OutsideLimitRange | typeof AgentVerdicts.GrowthNotChargedToQuota;
  readonly message: string;
}

/** A quantity in nano-units (exact for cpu and memory); undefined when absent or unreadable. */
function nanos(text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  try {
    return parseQuantity(text, { allowNegative: false }).nanos;
  } catch {
    return undefined;
  }
}

const NANO = 1_000_000_000n;

/** One container's (or the pod's) request and limit of one resource, as quantities and their text. */
interface Amounts {
  readonly request?: { readonly text: string; readonly value: bigint } | undefined;
  readonly limit?: { readonly text: string; readonly value: bigint } | undefined;
}

function amounts(r: ContainerResources | undefined, resource: Resource): Amounts {
  const of = (text: string | undefined): Amounts['request'] => {
    const value = nanos(text);
    return text === undefined || value === undefined ? undefined : { text, value };
  };
  const limit = of(r?.limits?.[resource]);
  // An absent request takes the limit (the API server's defaulting of pods).
  return { request: of(r?.requests?.[resource]) ?? limit, limit };
}

/** LimitRanger's three checks of one resource against one limit item, with its messages. */
function violations(
  kind: string,
  resource: Resource,
  item: NonNullable<LimitRange['spec']>['limits'][number],
  a: Amounts,
): string[] {
  const found: string[] = [];
  const min = item.min?.[resource];
  const minValue = nanos(min);
  if (min !== undefined && minValue !== undefined) {
    if (a.request === undefined)
      found.push(`minimum ${resource} usage per ${kind} is ${min}.  No request is specified`);
    else if (a.request.value < minValue)
      found.push(`minimum ${resource} usage per ${kind} is ${min}, but request is ${a.request.text}`);
    if (a.limit !== undefined && a.limit.value < minValue)
      found.push(`minimum ${resource} usage per ${kind} is ${min}, but limit is ${a.limit.text}`);
  }
  const max = item.max?.[resource];
  const maxValue = nanos(max);
  if (max !== undefined && maxValue !== undefined) {
    if (a.limit === undefined) found.push(`maximum ${resource} usage per ${kind} is ${max}.  No limit is specified`);
    else if (a.limit.value > maxValue)
      found.push(`maximum ${resource} usage per ${kind} is ${max}, but limit is ${a.limit.text}`);
    if (a.request !== undefined && a.request.value > maxValue)
      found.push(`maximum ${resource} usage per ${kind} is ${max}, but request is ${a.request.text}`);
  }
  const ratio = item.maxLimitRequestRatio?.[resource];
  const ratioValue = nanos(ratio);
  if (ratio !== undefined && ratioValue !== undefined) {
    if (a.request === undefined || a.request.value === 0n) {
      found.push(
        `${resource} max limit to request ratio per ${kind} is ${ratio}, but no request is specified or request is 0`,
      );
    } else if (a.limit === undefined || a.limit.value === 0n) {
      found.push(
        `${resource} max limit to request ratio per ${kind} is ${ratio}, but no limit is specified or limit is 0`,
      );
    } else if (a.limit.value * NANO > ratioValue * a.request.value) {
      const observed = Number((a.limit.value * 1_000_000n) / a.request.value) / 1_000_000;
      found.push(
        `${resource} max limit to request ratio per ${kind} is ${ratio}, but provided ratio is ${observed.toFixed(6)}`,
      );
    }
  }
  return found;
}

interface SpecContainer {
  readonly name: string;
  readonly restartPolicy?: string | undefined;
  readonly resources?: ContainerResources | undefined;
}

/** The pod's totals as LimitRanger sums them: regular containers and sidecars add, a plain init container (with the sidecars before it) is a maximum. */
function podAmounts(
  containers: readonly SpecContainer[],
  inits: readonly SpecContainer[],
  resources: (c: SpecContainer) => ContainerResources | undefined,
  resource: Resource,
): Amounts {
  let request: bigint | undefined;
  let limit: bigint | undefined;
  const add = (a: bigint | undefined, b: bigint | undefined): bigint | undefined =>
    b === undefined ? a : (a ?? 0n) + b;
  const max = (a: bigint | undefined, b: bigint | undefined): bigint | undefined =>
    b === undefined ? a : a === undefined || b > a ? b : a;
  for (const c of containers) {
    const a = amounts(resources(c), resource);
    request = add(request, a.request?.value);
    limit = add(limit, a.limit?.value);
  }
  let sidecarRequest: bigint | undefined;
  let sidecarLimit: bigint | undefined;
  let initRequest: bigint | undefined;
  let initLimit: bigint | undefined;
  for (const c of inits) {
    const a = amounts(resources(c), resource);
    if (isSidecar(c)) {
      request = add(request, a.request?.value);
      limit = add(limit, a.limit?.value);
      sidecarRequest = add(sidecarRequest, a.request?.value);
      sidecarLimit = add(sidecarLimit, a.limit?.value);
      initRequest = max(initRequest, sidecarRequest);
      initLimit = max(initLimit, sidecarLimit);
    } else {
      initRequest = max(initRequest, add(sidecarRequest, a.request?.value));
      initLimit = max(initLimit, add(sidecarLimit, a.limit?.value));
    }
  }
  request = max(request, initRequest);
  limit = max(limit, initLimit);
  const text = (v: bigint | undefined): Amounts['request'] =>
    v === undefined ? undefined : { text: formatNanos(v, resource), value: v };
  return { request: text(request), limit: text(limit) };
}

/** A sum for a message, in Kubernetes' canonical form (cpu "210m", memory "320Mi"). */
function formatNanos(v: bigint, resource: Resource): string {
  return formatQuantity({ nanos: v, format: resource === 'cpu' ? 'DecimalSI' : 'BinarySI' });
}

/**
 * What LimitRanger would refuse in the pod with the request's resources in place, or undefined:
 * what it checks at pod admission (Container and Pod limits: min, max, maxLimitRequestRatio for
 * cpu and memory), with its messages. Exact: a LimitRange is about one pod.
 */
export function limitRangeViolation(
  pod: Pod,
  request: ResizeRequest,
  limitRanges: readonly LimitRange[],
): string | undefined {
  const containers: readonly SpecContainer[] = pod.spec?.containers ?? [];
  const inits: readonly SpecContainer[] = pod.spec?.initContainers ?? [];
  const resources = (c: SpecContainer): ContainerResources | undefined => request.containers[c.name] ?? c.resources;
  const found: string[] = [];
  for (const range of limitRanges) {
    for (const item of range.spec?.limits ?? []) {
      for (const resource of RESOURCES) {
        if (item.type === 'Container') {
          for (const c of [...containers, ...inits])
            found.push(...violations('Container', resource, item, amounts(resources(c), resource)));
        } else if (item.type === 'Pod') {
          found.push(...violations('Pod', resource, item, podAmounts(containers, inits, resources, resource)));
        }
      }
    }
  }
  return found.length === 0 ? undefined : `LimitRange: ${[...new Set(found)].join('; ')}`;
}

/** The quota keys that charge a resource's requests and its limits. */
const CHARGES: Readonly<
  Record<Resource, { readonly requests: readonly string[]; readonly limits: readonly string[] }>
> = {
  cpu: { requests: ['requests.cpu', 'cpu'], limits: ['limits.cpu'] },
  memory: { requests: ['requests.memory', 'memory'], limits: ['limits.memory'] },
};

/**
 * Which growth beyond the pod spec a quota of the namespace would not have charged, or undefined:
 * a request or limit the request raises above the spec's, for a resource a quota constrains
 * (requests.<r>/<r> for requests, limits.<r> for limits). A quota is about the whole namespace,
 * which one node's agent cannot count (the growth other nodes' agents applied is invisible to it
 * and never charged), so growth beyond the spec is refused unless the operator allowed it
 * (--allow-growth-beyond-quota). Shrinking, and growing back up to the spec, are always within
 * what the quota charged. Quota scopes are not read: any quota of the namespace counts.
 */
export function growthNotChargedToQuota(
  pod: Pod,
  request: ResizeRequest,
  quotas: readonly ResourceQuota[],
): string | undefined {
  const spec = new Map<string, ContainerResources | undefined>(
    [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => [c.name, c.resources]),
  );
  for (const [name, wanted] of Object.entries(request.containers)) {
    for (const resource of RESOURCES) {
      const before = amounts(spec.get(name), resource);
      const after = amounts(wanted, resource);
      for (const part of ['requests', 'limits'] as const) {
        const was = part === 'requests' ? before.request : before.limit;
        const will = part === 'requests' ? after.request : after.limit;
        if (will === undefined || (was !== undefined && will.value <= was.value)) continue;
        const quota = quotas.find((q) => CHARGES[resource][part].some((key) => q.spec?.hard?.[key] !== undefined));
        if (quota === undefined) continue;
        const keys = CHARGES[resource][part].filter((key) => quota.spec?.hard?.[key] !== undefined);
        return (
          `container ${name}: the ${resource} ${part === 'requests' ? 'request' : 'limit'} would grow from ${was?.text ?? 'none'} to ` +
          `${will.text} beyond the pod spec, which ResourceQuota ${quota.metadata?.name ?? ''} (${keys.join(', ')}) charges; ` +
          'the node agent does not resize past what the quota charged (a recreate does, through the API server)'
        );
      }
    }
  }
  return undefined;
}

/** The verdict of the namespace's LimitRanges and ResourceQuotas on a request, or undefined when they allow it. */
export function namespaceLimitsVerdict(
  pod: Pod,
  request: ResizeRequest,
  limitRanges: readonly LimitRange[],
  quotas: readonly ResourceQuota[],
  allowGrowthBeyondQuota: boolean,
): NamespaceLimitsVerdict | undefined {
  const outside = limitRangeViolation(pod, request, limitRanges);
  if (outside !== undefined) return { reason: AgentVerdicts.OutsideLimitRange, message: outside };
  if (allowGrowthBeyondQuota) return undefined;
  const growth = growthNotChargedToQuota(pod, request, quotas);
  return growth === undefined ? undefined : { reason: AgentVerdicts.GrowthNotChargedToQuota, message: growth };
}
