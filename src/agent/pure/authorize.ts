// Whether the node agent may act on a resize request at all, before admission (docs/architecture.md §5 Trust boundaries):
// the pod's controller owner is an apps.tailor.dev CloneSet; the request is exactly what that
// CloneSet's revision (the ControllerRevision the request and the pod's controller-revision-hash
// label name, owned by the same CloneSet) asks for; the new resources keep the pod's QoS class;
// and no changed resource has resizePolicy RestartContainer. The API server already lets only
// Tailor's controller write requests (config/policy); this is the agent's own check, so a forged
// request that got through is still refused with a reason.
// Pure. Must not: do I/O, look at what the agent applied (the caller passes it), or decide what
// to do with a refusal (decide.ts decide()).
import { LABEL_CONTROLLER_REVISION_HASH } from '../../api/types.js';
import { workloadControllerOf, type OwnerReferenceLike } from '../../api/owner.js';
import { compareQuantities, parseQuantity } from '../../api/quantity.js';
import { resizableContainers } from '../../api/pod.js';
import type { ControllerRevision } from '../../api/revision.js';
import type { Pod } from '../../api/wire.js';
import type { ContainerResources, ResizeRequest } from '../../resize/agent-protocol.js';
import { restartRequired, type ResizableResource } from '../../resize/policy.js';
import { qosClass, type QosContainer } from '../../resize/qos.js';

type OwnerReference = OwnerReferenceLike;

/** The pod's controller owner when it is one of our workload kinds (the controller's own rule, api/owner.ts). */
export const workloadOwner = (pod: Pod): OwnerReference | undefined => workloadControllerOf(pod);

const RESOURCES: readonly ResizableResource[] = ['cpu', 'memory'];

function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  try {
    return compareQuantities(parseQuantity(a), parseQuantity(b)) === 0;
  } catch {
    return false;
  }
}

/** What a template container asks of cpu/memory, with a missing request taking the limit (as the controller sends it). */
function wanted(resources: QosContainer['resources']): ContainerResources {
  const pick = (values: Record<string, string> | undefined): Record<string, string> =>
    Object.fromEntries(Object.entries(values ?? {}).filter(([k]) => k === 'cpu' || k === 'memory'));
  const limits = pick(resources?.limits);
  return { requests: { ...limits, ...pick(resources?.requests) }, limits };
}

function differs(want: ContainerResources, got: ContainerResources): string | undefined {
  for (const part of ['requests', 'limits'] as const) {
    for (const r of RESOURCES) {
      if (!sameQuantity(want[part]?.[r], got[part]?.[r])) {
        return `${r} ${part === 'requests' ? 'request' : 'limit'} ${got[part]?.[r] ?? 'unset'}, the revision asks for ${want[part]?.[r] ?? 'unset'}`;
      }
    }
  }
  return undefined;
}

/**
 * Why the request is not what the pod's CloneSet asks for, or undefined when it is. `revision` is
 * the ControllerRevision named by the request, undefined when the agent does not know it.
 */
export function requestNotInRevision(
  pod: Pod,
  request: ResizeRequest,
  revision: ControllerRevision | undefined,
): string | undefined {
  const owner = workloadOwner(pod);
  if (!owner) return 'the pod is not controlled by a CloneSet or an InPlaceStatefulSet';
  const label = pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH];
  if (label !== request.revision)
    return `the request names revision ${request.revision}, the pod is labelled with revision ${label ?? '(none)'}`;
  if (!revision) return `ControllerRevision ${pod.metadata?.namespace}/${request.revision} does not exist`;
  const revOwner = workloadControllerOf(revision);
  if (revOwner?.uid !== owner.uid)
    return `ControllerRevision ${request.revision} does not belong to ${owner.kind} ${owner.name}`;
  const spec = revision.data?.template?.spec;
  const containers = resizableContainers(spec);
  for (const [name, got] of Object.entries(request.containers)) {
    const c = containers.find((t) => t.name === name);
    if (!c) return `revision ${request.revision} has no container ${name}`;
    const problem = differs(wanted(c.resources), got);
    if (problem) return `container ${name}: ${problem} in revision ${request.revision}`;
  }
  return undefined;
}

/** The pod's containers (init containers included, as the QoS rule counts them) with `resources(name)` in place of the spec's. */
function qosContainers(pod: Pod, resources: (name: string) => ContainerResources | undefined): QosContainer[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => ({
    resources: resources(c.name) ?? c.resources,
  }));
}

/** Why the request would change the pod's QoS class (refused, as the API server refuses it for pods/resize), or undefined. */
export function qosClassChange(pod: Pod, request: ResizeRequest): string | undefined {
  const before = pod.status?.qosClass ?? qosClass(qosContainers(pod, () => undefined));
  const after = qosClass(qosContainers(pod, (name) => request.containers[name]));
  return before === after ? undefined : `the new resources would change the pod's QoS class from ${before} to ${after}`;
}

/**
 * Why the request needs a container restart the agent will not do (resizePolicy RestartContainer
 * on a resource that changes), or undefined. `current(name)` gives what the container runs with now.
 * The kubelet starts a restarted container with the pod spec's resources, which on this path never
 * change, so a restart could not give the container its new resources at start.
 */
export function restartRequiredBy(
  pod: Pod,
  request: ResizeRequest,
  current: (name: string) => ContainerResources | undefined,
): string | undefined {
  const containers = resizableContainers(pod.spec);
  for (const [name, next] of Object.entries(request.containers)) {
    const c = containers.find((x) => x.name === name);
    if (!c) continue;
    const now = current(name) ?? c.resources ?? {};
    const changed = RESOURCES.filter(
      (r) => !sameQuantity(now.requests?.[r], next.requests?.[r]) || !sameQuantity(now.limits?.[r], next.limits?.[r]),
    );
    if (restartRequired(c, changed)) {
      return (
        `container ${name} has resizePolicy RestartContainer for ${changed.join(', ')}: the node's kubelet cannot resize, ` +
        "and a container it restarts starts with the pod spec's resources, so the agent cannot honour it (a recreate can)"
      );
    }
  }
  return undefined;
}
