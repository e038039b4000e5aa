// The node agent's metrics (docs/architecture.md §3.2 An agent resize): what became of each
// resize request it handled, by result.
// Owns: the agent's metric names and help texts. The result label's values are ResizeResult, in
// pure/decide.ts, so the pure decision imports nothing from here.
// Must not: decide a result (pure/decide.ts reportResult and the reconciler do) or register
// anything outside the registry it is given.
import { Counter, type Registry } from 'prom-client';

export class AgentMetrics {
  readonly resizesTotal: Counter<'result'>;
  constructor(registry: Registry) {
    this.resizesTotal = new Counter({
      name: 'tailor_agent_resizes_total',
      help: 'Resize requests handled by the node agent, by result',
      labelNames: ['result'],
      registers: [registry],
    });
  }
}
