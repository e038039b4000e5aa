// Whether resizing a container restarts it, from the container's resizePolicy (KEP-1287
// "Container Resize Policy"). Owns that reading only. Must not: do I/O, or decide how a restart is
// carried out (the in-place engine drains first through the readiness gate).
import type * as k8s from '@kubernetes/client-node';
import type { Wire } from '../api/wire.js';

export type ResizableResource = 'cpu' | 'memory';

/** What restartRequired reads of a container; a client-node V1Container (wire form) fits. */
export type PolicyContainer = Pick<Wire<k8s.V1Container>, 'resizePolicy'>;

/**
 * One entry per resource, restartPolicy NotRequired (the default for a resource without an entry)
 * or RestartContainer. When several resources change at once, RestartContainer on any of them
 * wins. NotRequired is a preference, not a promise: the runtime may still restart a container it
 * cannot resize live. KEP drafts also name PreferNoRestart; the API (1.34) knows only NotRequired
 * and RestartContainer, and anything but RestartContainer is read as "no restart".
 */
export function restartRequired(container: PolicyContainer, changedResources: readonly ResizableResource[]): boolean {
  return changedResources.some(
    (resource) =>
      container.resizePolicy?.find((p) => p.resourceName === resource)?.restartPolicy === 'RestartContainer',
  );
}
