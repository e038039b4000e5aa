// Metrics of resizes: pods per resize state for each CloneSet (a gauge set on every reconcile),
// and how long resizes took from the template edit reaching the pod to the node actuating it.
import { Gauge, Histogram, type Registry } from 'prom-client';
import { RESIZE_STATES, type CloneSetResizeStatus } from '../api/types.js';

export class ResizeMetrics {
  readonly pods: Gauge<'namespace' | 'cloneset' | 'state'>;
  readonly duration: Histogram;

  constructor(registry: Registry) {
    this.pods = new Gauge({
      name: 'tailor_resize_pods',
      help: 'Pods of a CloneSet whose resize is unfinished, by state (Proposed, InProgress, Deferred, Infeasible)',
      labelNames: ['namespace', 'cloneset', 'state'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'tailor_resize_duration_seconds',
      help: 'Seconds from sending a resize to the node reporting it actuated',
      buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600],
      registers: [registry],
    });
  }

  record(namespace: string, cloneset: string, status: CloneSetResizeStatus): void {
    const counts: Record<string, number> = {
      Proposed: status.proposed,
      InProgress: status.inProgress,
      Deferred: status.deferred,
      Infeasible: status.infeasible,
    };
    for (const state of RESIZE_STATES) this.pods.set({ namespace, cloneset, state }, counts[state] ?? 0);
  }

  forget(namespace: string, cloneset: string): void {
    for (const state of RESIZE_STATES) this.pods.remove({ namespace, cloneset, state });
  }
}
