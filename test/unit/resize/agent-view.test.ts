import { describe, expect, it } from '@jest/globals';
import { ANNOTATION_RESIZE_REQUEST, ANNOTATION_RESIZE_STATUS } from '../../../src/api/types.js';
import { readResizeRequest } from '../../../src/resize/agent-protocol.js';
import { podResizeView } from '../../../src/resize/state.js';
import type { Pod } from '../../../src/api/wire.js';
import { buildPod } from '../../support/fixtures/pods.js';

const request = { revision: 'web-2', containers: { app: { requests: { cpu: '200m' }, limits: { cpu: '400m' } } } };
const pod = (annotations: Record<string, string>): Pod =>
  buildPod({ annotations, node: 'n1', containers: [{ name: 'app' }] });
const withStatus = (status: object): Pod =>
  pod({ [ANNOTATION_RESIZE_REQUEST]: JSON.stringify(request), [ANNOTATION_RESIZE_STATUS]: JSON.stringify(status) });

describe('the resize state of a pod resized by the node agent', () => {
  it.each([
    [
      'is Proposed, naming the node, while no agent has answered',
      pod({ [ANNOTATION_RESIZE_REQUEST]: JSON.stringify(request) }),
      { state: 'Proposed', reason: 'NoAgentResponse', done: false },
    ],
    [
      'is Proposed while the agent last answered an older revision',
      withStatus({ revision: 'web-1', state: '', since: '2026-01-01T00:00:00Z' }),
      { state: 'Proposed', reason: 'NotObserved' },
    ],
    [
      'is done when the agent applied this revision',
      withStatus({ revision: 'web-2', state: '', since: '2026-01-01T00:00:00Z' }),
      { done: true },
    ],
    [
      'is Deferred with the agent reason and since',
      withStatus({ revision: 'web-2', state: 'Deferred', reason: 'NodeFull', since: '2026-01-01T00:00:00Z' }),
      { state: 'Deferred', reason: 'NodeFull', since: '2026-01-01T00:00:00Z', done: false },
    ],
    [
      'is Infeasible as the agent says',
      withStatus({ revision: 'web-2', state: 'Infeasible', since: '2026-01-01T00:00:00Z' }),
      { state: 'Infeasible', done: false },
    ],
    [
      'is Proposed, not Infeasible, when the agent says the kubelet resizes there',
      withStatus({ revision: 'web-2', state: 'Infeasible', reason: 'KubeletResizes', since: '2026-01-01T00:00:00Z' }),
      { state: 'Proposed', reason: 'KubeletResizes', done: false },
    ],
    [
      'reports a half-written status instead of guessing',
      pod({ [ANNOTATION_RESIZE_REQUEST]: JSON.stringify(request), [ANNOTATION_RESIZE_STATUS]: '{"revision":' }),
      { state: 'Proposed', reason: 'InvalidStatus' },
    ],
    [
      'reports an unknown state instead of guessing',
      withStatus({ revision: 'web-2', state: 'Sideways', since: '2026-01-01T00:00:00Z' }),
      { state: 'Proposed', reason: 'InvalidStatus' },
    ],
  ])('%s', (_name, p, expected) => {
    expect(podResizeView(p)).toMatchObject(expected);
  });
});

describe('a resize request', () => {
  it.each([
    ['with a revision and cpu/memory quantities is valid', JSON.stringify(request), true],
    ['that is not JSON is invalid', '{', false],
    ['with no containers is invalid', JSON.stringify({ revision: 'r', containers: {} }), false],
    [
      'with another resource is invalid',
      JSON.stringify({ revision: 'r', containers: { a: { requests: { 'nvidia.com/gpu': '1' } } } }),
      false,
    ],
    [
      'with a number instead of a quantity string is invalid',
      JSON.stringify({ revision: 'r', containers: { a: { limits: { cpu: 1 } } } }),
      false,
    ],
    [
      'with a string that is no quantity is invalid',
      JSON.stringify({ revision: 'r', containers: { a: { limits: { cpu: 'fast' } } } }),
      false,
    ],
    ['that is JSON null is invalid', 'null', false],
    [
      'with containers as an array is invalid',
      JSON.stringify({ revision: 'r', containers: [{ requests: { cpu: '1' } }] }),
      false,
    ],
  ])('%s', (_name, raw, ok) => {
    expect(readResizeRequest(pod({ [ANNOTATION_RESIZE_REQUEST]: raw })).ok).toBe(ok);
  });
});
