// The node agent's side of a restart in place (docs/decisions/0015-restart-in-place.md): for a
// CloneSet pod on this node whose `apps.tailor.dev/restart-request` is of the pod's revision and
// names a container by the ID it runs now, stop that container once through CRI, with the pod's
// grace period; the kubelet starts it again (restartPolicy Always) and its restart count rises by
// one. The request needs no answer: a restarted container has a new ID, so it is never stopped
// twice, and the controller reads the restart count.
// Owns: which containers to stop (pure, containersToStop) and the stop calls.
// Must not: stop a container the request does not name by its current ID, act on a pod that no
// CloneSet controls, or write anything to the pod.
import { Counter, type Registry } from 'prom-client';
import { LRUCache } from 'lru-cache';
import { parseRestartRequest } from '../api/schemas.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../api/types.js';
import type { Pod } from '../api/wire.js';
import type { CriClient } from '../cri/client.js';
import type { Informer } from '../runtime/informer.js';
import type { Logger } from '../runtime/logger.js';
import { cloneSetOwner } from './authorize.js';

export interface ContainerToStop {
  readonly name: string;
  /** The runtime's container ID (the status's `containerd://…` without its scheme). */
  readonly containerId: string;
}

/** The kubelet's default when a pod names no terminationGracePeriodSeconds. */
const DEFAULT_GRACE_SECONDS = 30;

/** The containers the pod's restart request asks this agent to stop now; none when there is nothing to do. */
export function containersToStop(pod: Pod): ContainerToStop[] {
  const request = parseRestartRequest(pod.metadata?.annotations);
  if (!request.ok || !cloneSetOwner(pod)) return [];
  if (request.value.revision !== pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH]) return [];
  const statuses = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])];
  return Object.entries(request.value.containers).flatMap(([name, id]) => {
    const status = statuses.find((s) => s.name === name);
    if (status?.state?.running === undefined || status.containerID !== id) return [];
    return [{ name, containerId: id.replace(/^[a-z0-9.+-]+:\/\//, '') }];
  });
}

export interface RestartActuatorOptions {
  readonly pods: Pick<Informer<Pod>, 'get'>;
  readonly cri: Pick<CriClient, 'stopContainer'>;
  readonly logger: Logger;
  readonly registry: Registry;
}

export class RestartActuator {
  private readonly restarts: Counter<'result'>;
  /**
   * Containers this process stopped: the cache shows the old ID until the kubelet reports the new
   * container, and a second stop in that window would restart it twice. Bounded; an entry is only
   * needed for seconds.
   */
  private readonly stopped = new LRUCache<string, true>({ max: 4096 });

  constructor(private readonly options: RestartActuatorOptions) {
    this.restarts = new Counter({
      name: 'tailor_agent_container_restarts_total',
      help: 'Containers the node agent stopped for a restart in place, by result',
      labelNames: ['result'],
      registers: [options.registry],
    });
  }

  async reconcile(key: string): Promise<void> {
    const pod = this.options.pods.get(key);
    if (!pod || pod.metadata?.deletionTimestamp) return;
    const grace = pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
    for (const { name, containerId } of containersToStop(pod)) {
      if (this.stopped.has(containerId)) continue;
      try {
        await this.options.cri.stopContainer(containerId, grace);
      } catch (err) {
        this.restarts.inc({ result: 'failed' });
        throw new Error(`stopping container ${name} of pod ${key} for a restart in place failed`, { cause: err });
      }
      this.stopped.set(containerId, true);
      this.restarts.inc({ result: 'stopped' });
      this.options.logger.info({ pod: key, container: name, containerId }, 'stopped a container for a restart in place');
    }
  }
}
