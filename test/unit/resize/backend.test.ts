// The one backend rule: node evidence from pods and the Node, the backend per pod, and when a
// resize request is stale and must be removed. Tables, plus a property: under `auto` a pod gets
// an answer from someone whatever the evidence is.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ANNOTATION_RESIZE_REQUEST, ANNOTATION_RESIZE_STATUS } from '../../../src/api/types.js';
import {
  agentSaysKubeletResizes,
  backendForPod,
  nodeResizeEvidence,
  staleResizeRequest,
  type NodeResizeEvidence,
} from '../../../src/resize/backend.js';
import type { Node, Pod } from '../../../src/api/wire.js';
import { buildPod, runningStatus, waitingStatus } from '../../support/fixtures/pods.js';

type Shape = 'reports' | 'silent' | 'waiting';
const pod = (name: string, node: string, shape: Shape, annotations: Record<string, string> = {}): Pod =>
  buildPod({
    name,
    uid: name,
    annotations,
    node,
    containers: [{ name: 'app' }],
    phase: 'Running',
    containerStatuses: [
      shape === 'waiting'
        ? waitingStatus('app', 'ContainerCreating', { image: 'i' })
        : runningStatus('app', { image: 'i', ...(shape === 'reports' ? { resources: {} } : {}) }),
    ],
  });
const ended = (p: Pod, phase: string): Pod => ({ ...p, status: { ...p.status, phase } });
const node = (version: string): Node => ({
  metadata: { name: 'n1' },
  status: { nodeInfo: { kubeletVersion: version } as never },
});
const request = JSON.stringify({ revision: 'r2', containers: { app: { requests: { cpu: '200m' } } } });
const status = (revision: string, reason?: string): string =>
  JSON.stringify({ revision, state: 'Infeasible', since: '2026-01-01T00:00:00Z', ...(reason ? { reason } : {}) });

describe('evidence about a node kubelet', () => {
  it.each<[string, Pod[], Node | undefined, boolean | undefined]>([
    [
      'a running container that reports resources proves the kubelet resizes',
      [pod('a', 'n1', 'reports')],
      undefined,
      true,
    ],
    [
      'one reporting container wins over silent ones',
      [pod('a', 'n1', 'silent'), pod('b', 'n1', 'reports')],
      undefined,
      true,
    ],
    ['running containers that report nothing prove it does not', [pod('a', 'n1', 'silent')], undefined, false],
    ['a pod with no running container is no evidence', [pod('a', 'n1', 'waiting')], undefined, undefined],
    [
      'pods of other nodes are no evidence',
      [pod('a', 'n2', 'reports'), pod('b', 'n2', 'silent')],
      undefined,
      undefined,
    ],
    ['no pods is no evidence', [], undefined, undefined],
    // The pod GC fails the pods of a node out of service and leaves their statuses (decision 74).
    [
      'an ended pod is no evidence, whatever its stale status says',
      [ended(pod('a', 'n1', 'reports'), 'Failed'), ended(pod('b', 'n1', 'silent'), 'Succeeded')],
      undefined,
      undefined,
    ],
    [
      'a kubelet older than 1.27 cannot resize whatever the pods say',
      [pod('a', 'n1', 'reports')],
      node('v1.26.9'),
      false,
    ],
    ['a recent kubelet version alone proves nothing', [], node('v1.34.4'), undefined],
  ])('%s', (_name, pods, n, want) => {
    expect(nodeResizeEvidence('n1', pods, n).kubeletResizes).toBe(want);
  });
});

describe('the backend of a pod', () => {
  const yes: NodeResizeEvidence = { kubeletResizes: true, why: '' };
  const no: NodeResizeEvidence = { kubeletResizes: false, why: '' };
  const unknown: NodeResizeEvidence = { kubeletResizes: undefined, why: '' };
  const plain = pod('p', 'n1', 'waiting');
  const answered = pod('p', 'n1', 'waiting', {
    [ANNOTATION_RESIZE_REQUEST]: request,
    [ANNOTATION_RESIZE_STATUS]: status('r2', 'KubeletResizes'),
  });
  const answeredOlder = pod('p', 'n1', 'waiting', {
    [ANNOTATION_RESIZE_REQUEST]: request,
    [ANNOTATION_RESIZE_STATUS]: status('r1', 'KubeletResizes'),
  });
  const infeasible = pod('p', 'n1', 'waiting', {
    [ANNOTATION_RESIZE_REQUEST]: request,
    [ANNOTATION_RESIZE_STATUS]: status('r2', 'ExceedsAllocatable'),
  });
  it.each<[string, 'auto' | 'kubelet' | 'agent', NodeResizeEvidence, Pod, 'kubelet' | 'agent']>([
    ['auto with positive evidence is the kubelet', 'auto', yes, plain, 'kubelet'],
    ['auto with negative evidence is the agent', 'auto', no, plain, 'agent'],
    ['auto with no evidence is the agent, which answers either way', 'auto', unknown, plain, 'agent'],
    ['a configured kubelet is the kubelet', 'kubelet', no, plain, 'kubelet'],
    ['a configured agent is the agent', 'agent', yes, plain, 'agent'],
    ['the agent saying KubeletResizes for this request makes it the kubelet', 'auto', no, answered, 'kubelet'],
    ['the agent saying KubeletResizes overrides a configured agent', 'agent', unknown, answered, 'kubelet'],
    ['a KubeletResizes answer to an older request does not count', 'auto', unknown, answeredOlder, 'agent'],
    ['another Infeasible verdict keeps the agent', 'auto', unknown, infeasible, 'agent'],
  ])('%s', (_name, configured, evidence, p, want) => {
    expect(backendForPod(configured, evidence, p)).toBe(want);
  });

  it('under auto a pod is resized by the kubelet exactly when someone with evidence says so, else it goes to the agent, which always answers', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Shape>('reports', 'silent', 'waiting'),
        fc.array(fc.constantFrom<Shape>('reports', 'silent', 'waiting'), { maxLength: 4 }),
        (own, others) => {
          const pods = [pod('p', 'n1', own), ...others.map((s, i) => pod(`o${i}`, 'n1', s))];
          const evidence = nodeResizeEvidence('n1', pods);
          const backend = backendForPod('auto', evidence, pods[0] as Pod);
          expect(backend === 'kubelet').toBe([own, ...others].includes('reports'));
        },
      ),
    );
  });
});

describe('a stale resize request', () => {
  it.each<[string, Record<string, string>, 'kubelet' | 'agent', boolean]>([
    ['is a request on a pod the kubelet resizes', { [ANNOTATION_RESIZE_REQUEST]: request }, 'kubelet', true],
    ['includes an unreadable request', { [ANNOTATION_RESIZE_REQUEST]: '{' }, 'kubelet', true],
    ['is not a request on a pod the agent resizes', { [ANNOTATION_RESIZE_REQUEST]: request }, 'agent', false],
    ['is nothing when there is no request', {}, 'kubelet', false],
  ])('%s', (_name, annotations, backend, want) => {
    expect(staleResizeRequest(pod('p', 'n1', 'reports', annotations), backend)).toBe(want);
  });

  it('follows from the agent answer KubeletResizes: the answered request is stale', () => {
    const p = pod('p', 'n1', 'waiting', {
      [ANNOTATION_RESIZE_REQUEST]: request,
      [ANNOTATION_RESIZE_STATUS]: status('r2', 'KubeletResizes'),
    });
    expect(agentSaysKubeletResizes(p)).toBe(true);
    expect(staleResizeRequest(p, backendForPod('auto', { kubeletResizes: undefined, why: '' }, p))).toBe(true);
  });
});
