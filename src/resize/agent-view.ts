// The resize state of a pod that Tailor's node agent resizes, read from the agent's
// `resize-status` answer to the controller's `resize-request` (agent-protocol.ts), in the same
// four states the kubelet's report maps to. A request nobody has answered stays Proposed and says
// so, so a node without a running agent is visible rather than silently stuck. The agent's
// KubeletResizes verdict reads as Proposed, not Infeasible: it says the request went to the wrong
// backend (backend.ts removes it and the kubelet takes over), never that the pod cannot fit. Pure.
import { AgentVerdicts, ResizeViewReasons } from '../api/reasons.js';
import type { Pod } from '../api/wire.js';
import { readResizeStatus, type Parsed, type ResizeRequest } from './agent-protocol.js';
import type { ResizeView } from './view.js';

export function agentResizeView(pod: Pod, request: Parsed<ResizeRequest>): ResizeView {
  if (!request.ok) {
    return {
      state: 'Proposed',
      reason: ResizeViewReasons.InvalidRequest,
      message: request.error ?? 'no resize request',
      done: false,
    };
  }
  const status = readResizeStatus(pod);
  if (!status.ok) {
    return status.error
      ? { state: 'Proposed', reason: ResizeViewReasons.InvalidStatus, message: status.error, done: false }
      : {
          state: 'Proposed',
          reason: ResizeViewReasons.NoAgentResponse,
          message: `no Tailor agent has answered on node ${pod.spec?.nodeName || '(unscheduled)'}; is the agent DaemonSet running there?`,
          done: false,
        };
  }
  const s = status.value;
  if (s.revision !== request.value.revision) {
    return {
      state: 'Proposed',
      reason: ResizeViewReasons.NotObserved,
      message: `the agent last answered for revision ${s.revision}`,
      done: false,
    };
  }
  if (s.state === '') return { done: true };
  if (s.reason === AgentVerdicts.KubeletResizes) {
    return {
      state: 'Proposed',
      reason: s.reason,
      ...(s.message ? { message: s.message } : {}),
      since: s.since,
      done: false,
    };
  }
  return {
    state: s.state,
    ...(s.reason ? { reason: s.reason } : {}),
    ...(s.message ? { message: s.message } : {}),
    since: s.since,
    done: false,
  };
}
