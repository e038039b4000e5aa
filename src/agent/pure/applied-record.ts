// What the node agent applied to a pod, as a value (docs/architecture.md §3.2 An agent resize, §5
// Trust boundaries): the record's shape, the record of a request just applied to the containers
// running now, and what each container runs with according to it (its spec once it restarted).
// Owns: the record's shape and those readings of it. Pure. Must not: read the node, the status
// annotation or the clock (agent/applied.ts keeps the records and rebuilds them from the node).
import { resizableContainers } from '../../api/pod.js';
import type { Pod } from '../../api/wire.js';
import type { ContainerResources, ResizeRequest } from '../../resize/agent-protocol.js';

/** What was applied to one container, and to which container instance. */
export type AppliedContainer = ContainerResources & { readonly containerID: string };

/** What this agent applied to a pod, kept by the agent itself (never read back from the annotation). */
export interface AppliedRecord {
  /** The revision of the request last applied. */
  readonly revision: string;
  /** Container name → what was applied, and to which container instance. */
  readonly containers: Readonly<Record<string, AppliedContainer>>;
}

/** The running container of each name, as CRI lists it. */
export type RunningContainers = ReadonlyMap<string, { readonly id: string }>;

/** The request's resources for each container it names, recorded against the container running now. */
export function appliedContainers(
  request: ResizeRequest,
  running: RunningContainers,
): Record<string, AppliedContainer> {
  const applied: Record<string, AppliedContainer> = {};
  for (const name of Object.keys(request.containers)) {
    const r = request.containers[name] ?? {};
    applied[name] = {
      containerID: running.get(name)?.id ?? '',
      ...(r.requests ? { requests: r.requests } : {}),
      ...(r.limits ? { limits: r.limits } : {}),
    };
  }
  return applied;
}

/** What the record says a container was given, without the container ID; undefined when it names none. */
export function recordedResources(record: AppliedRecord | undefined, name: string): ContainerResources | undefined {
  const done = record?.containers[name];
  return done
    ? { ...(done.requests ? { requests: done.requests } : {}), ...(done.limits ? { limits: done.limits } : {}) }
    : undefined;
}

/**
 * What each container runs with now: what the agent applied to this very container instance (its
 * own record, never the annotation), else its spec.
 */
export function currentResources(
  pod: Pod,
  running: RunningContainers,
  record: AppliedRecord | undefined,
): Record<string, ContainerResources> {
  const current: Record<string, ContainerResources> = {};
  for (const c of resizableContainers(pod.spec)) {
    const done = record?.containers[c.name];
    const id = running.get(c.name)?.id;
    current[c.name] =
      done && (id === undefined || done.containerID === id)
        ? { requests: done.requests, limits: done.limits }
        : (c.resources ?? {});
  }
  return current;
}
