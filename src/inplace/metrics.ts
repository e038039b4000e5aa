// Metrics of in-place updates: how many pods were updated in place and with what result, and how
// long each took from drain to completion. Registered on the manager's registry.
import { Counter, Histogram, type Registry } from 'prom-client';

export type InPlaceResult = 'started' | 'succeeded' | 'recreated' | 'blocked' | 'reverted' | 'failed';

export class InPlaceMetrics {
  readonly updates: Counter<'result'>;
  readonly duration: Histogram;

  constructor(registry: Registry) {
    this.updates = new Counter({
      name: 'tailor_inplace_updates_total',
      help: 'In-place pod updates by result: started, succeeded, recreated (fell back), blocked (InPlaceOnly), reverted, failed',
      labelNames: ['result'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'tailor_inplace_update_duration_seconds',
      help: 'Seconds from the start of an in-place update (drain or patch) to its completion',
      buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600],
      registers: [registry],
    });
  }
}
