// One pod's resize as Tailor sees it, whichever side reports it (the kubelet's conditions or the
// node agent's annotation): the shape state.ts and agent-view.ts both produce. Types only.
import type { ResizeState } from '../api/types.js';

export interface ResizeView {
  /** Undefined when nothing is pending. */
  state?: ResizeState;
  /** The kubelet's reason (Deferred, Infeasible, Error, …), the agent's, or one of ResizeViewReasons. */
  reason?: string;
  message?: string;
  /** RFC 3339: when this state began, from the condition's lastTransitionTime when present. */
  since?: string;
  /** The node runs exactly the resources the spec asks for and has nothing pending. */
  done: boolean;
}
