import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Pod } from '../../../src/api/wire.js';
import { NodeEvidenceIndex } from '../../../src/workload/node-evidence.js';
import { nodeResizeEvidence } from '../../../src/resize/backend.js';
import { buildPod, runningStatus } from '../../support/fixtures/pods.js';

const NODES = ['n1', 'n2', ''];
type Says = 'resizes' | 'silent' | 'nothing';

function pod(name: string, node: string, says: Says): Pod {
  const status =
    says === 'nothing'
      ? {
          name: 'app',
          ready: false,
          restartCount: 0,
          image: '',
          imageID: '',
          state: { waiting: { reason: 'ContainerCreating' } },
        }
      : runningStatus('app', says === 'resizes' ? { resources: { limits: { cpu: '100m' } } } : {});
  return buildPod({ name, node, containerStatuses: [status] });
}

describe('NodeEvidenceIndex', () => {
  it.each<[string, [string, Says][], boolean | undefined]>([
    ['a node without pods has no evidence', [], undefined],
    ['a pod whose containers are not running says nothing', [['a', 'nothing']], undefined],
    ['a running container without status resources says the kubelet does not resize', [['a', 'silent']], false],
    [
      'one container reporting resources wins over silent ones',
      [
        ['a', 'silent'],
        ['b', 'resizes'],
      ],
      true,
    ],
  ])('%s', (_name, pods, expected) => {
    const index = new NodeEvidenceIndex();
    for (const [name, says] of pods) index.onAdd(pod(name, 'n1', says));
    expect(index.get('n1').kubeletResizes).toBe(expected);
  });

  it('names the pod that gives the evidence', () => {
    const index = new NodeEvidenceIndex();
    index.onAdd(pod('witness', 'n1', 'resizes'));
    expect(index.get('n1').why).toBe("pod ns/witness on node n1 reports its containers' actual resources");
  });

  it('after any sequence of changes says what a rebuild from the pods now cached would say', () => {
    const change = fc.record({
      kind: fc.constantFrom('upsert', 'delete'),
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      node: fc.constantFrom(...NODES),
      says: fc.constantFrom<Says>('resizes', 'silent', 'nothing'),
    });
    fc.assert(
      fc.property(fc.array(change, { maxLength: 40 }), (changes) => {
        const index = new NodeEvidenceIndex();
        const cached = new Map<string, Pod>();
        for (const c of changes) {
          const old = cached.get(c.name);
          if (c.kind === 'delete') {
            if (old) index.onDelete(old);
            cached.delete(c.name);
            continue;
          }
          const next = pod(c.name, c.node, c.says);
          if (old) index.onUpdate(old, next);
          else index.onAdd(next);
          cached.set(c.name, next);
        }
        for (const node of NODES) {
          expect(index.get(node).kubeletResizes).toBe(nodeResizeEvidence(node, [...cached.values()]).kubeletResizes);
        }
      }),
    );
  });
});
