// The order in which an in-place update changes one pod's containers (decision 0021): everything
// it does to a container (a new image, a resize, a restart for env read from pod metadata or a
// rolling restart) goes with that container's batch. Native sidecars first, then the app
// containers, and among the app containers Kruise's container priority (env
// KRUISE_CONTAINER_PRIORITY, or the container-launch-priority annotation `Ordered`: spec order),
// higher first. Each batch is updated only once the one before runs the new revision and is ready.
// Owns: the priority names it reads and the batch split. Pure. Must not: look at container
// status (plan.ts judges a batch's completion) or decide anything else of the update.
import type * as k8s from '@kubernetes/client-node';
import type { Wire } from '../../api/wire.js';
import { isSidecar, type ContainerLists } from '../../api/pod.js';

/** A container's update priority, as OpenKruise names it (an integer; higher goes first). */
export const ENV_CONTAINER_PRIORITY = 'KRUISE_CONTAINER_PRIORITY';
/** Pod annotation whose value `Ordered` gives the containers priorities in spec order (first highest). */
export const ANNOTATION_CONTAINER_LAUNCH_PRIORITY = 'apps.tailor.dev/container-launch-priority';
/** The same annotation under OpenKruise's group, honoured for pods migrated from Kruise. */
export const KRUISE_ANNOTATION_CONTAINER_LAUNCH_PRIORITY = 'apps.kruise.io/container-launch-priority';
export const LAUNCH_PRIORITY_ORDERED = 'Ordered';

type Container = Wire<k8s.V1Container>;

/**
 * `names` (containers the update changes) split into update batches, in the order they go:
 * changed native sidecars (spec order), then the app containers grouped by priority, highest
 * first. Without priorities, or when every app container has the same one, the app containers
 * are one batch. Names the spec does not hold are left out.
 */
export function containerBatches(
  spec: ContainerLists<Container>,
  annotations: Readonly<Record<string, string>> | undefined,
  names: readonly string[],
): string[][] {
  const wanted = new Set(names);
  const sidecars = (spec.initContainers ?? []).filter((c) => isSidecar(c) && wanted.has(c.name)).map((c) => c.name);
  const containers = spec.containers ?? [];
  const priorities = containerPriorities(containers, annotations);
  const byPriority = new Map<number, string[]>();
  containers.forEach((c, i) => {
    if (!wanted.has(c.name)) return;
    const priority = priorities?.[i] ?? 0;
    byPriority.set(priority, [...(byPriority.get(priority) ?? []), c.name]);
  });
  const appBatches = [...byPriority.entries()].sort(([a], [b]) => b - a).map(([, batch]) => batch);
  return [sidecars, ...appBatches].filter((batch) => batch.length > 0);
}

/**
 * Each app container's priority, by index; undefined when the pod asks for no order (no
 * annotation, and the env priorities absent, all zero or all the same, as Kruise reads them).
 */
function containerPriorities(
  containers: readonly Container[],
  annotations: Readonly<Record<string, string>> | undefined,
): number[] | undefined {
  const annotation =
    annotations?.[ANNOTATION_CONTAINER_LAUNCH_PRIORITY] ?? annotations?.[KRUISE_ANNOTATION_CONTAINER_LAUNCH_PRIORITY];
  if (annotation === LAUNCH_PRIORITY_ORDERED) return containers.map((_, i) => -i);
  const priorities = containers.map((c) => envPriority(c));
  return new Set(priorities).size > 1 ? priorities : undefined;
}

/** The container's KRUISE_CONTAINER_PRIORITY; 0 when unset or not an integer (Kruise refuses such a pod at admission). */
function envPriority(container: Container): number {
  const value = container.env?.find((e) => e.name === ENV_CONTAINER_PRIORITY)?.value;
  const parsed = value !== undefined && /^[+-]?\d+$/.test(value.trim()) ? Number.parseInt(value, 10) : NaN;
  return Number.isSafeInteger(parsed) ? parsed : 0;
}
