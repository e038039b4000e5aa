import { describe, expect, it } from '@jest/globals';
import type * as k8s from '@kubernetes/client-node';
import type { ContainerLists } from '../../../../src/api/pod.js';
import type { Wire } from '../../../../src/api/wire.js';
import { containerBatches } from '../../../../src/inplace/pure/container-order.js';

/** A pod spec's container lists, as containerBatches reads them. */
type Spec = ContainerLists<Wire<k8s.V1Container>>;

const priority = (value: string) => [{ name: 'KRUISE_CONTAINER_PRIORITY', value }];
const app = (name: string, env?: { name: string; value: string }[]) => ({
  name,
  image: `${name}:v1`,
  ...(env ? { env } : {}),
});
const sidecar = (name: string) => ({ name, image: `${name}:v1`, restartPolicy: 'Always' });
const initStep = (name: string) => ({ name, image: `${name}:v1` });

const plain: Spec = { containers: [app('nginx'), app('redis')] };
const kruisePriorities: Spec = { containers: [app('nginx'), app('redis', priority('10'))] };
const equalPriorities: Spec = { containers: [app('nginx', priority('5')), app('redis', priority('5'))] };
const threeLevels: Spec = {
  containers: [app('a', priority('1')), app('b', priority('-3')), app('c', priority('7')), app('d', priority('1'))],
};
const withSidecars: Spec = {
  initContainers: [initStep('setup'), sidecar('mesh'), sidecar('log')],
  containers: [app('nginx'), app('redis', priority('10'))],
};
const badPriority: Spec = { containers: [app('nginx', priority('high')), app('redis', priority('2'))] };
const ORDERED = { 'apps.tailor.dev/container-launch-priority': 'Ordered' };
const KRUISE_ORDERED = { 'apps.kruise.io/container-launch-priority': 'Ordered' };

describe('containerBatches orders the containers whose image changes', () => {
  it.each([
    ['without priorities the app containers are one batch', plain, undefined, ['nginx', 'redis'], [['nginx', 'redis']]],
    [
      'a higher KRUISE_CONTAINER_PRIORITY goes first',
      kruisePriorities,
      undefined,
      ['nginx', 'redis'],
      [['redis'], ['nginx']],
    ],
    [
      'equal priorities are one batch, as in Kruise',
      equalPriorities,
      undefined,
      ['nginx', 'redis'],
      [['nginx', 'redis']],
    ],
    [
      'equal priorities share a batch, levels go highest first',
      threeLevels,
      undefined,
      ['a', 'b', 'c', 'd'],
      [['c'], ['a', 'd'], ['b']],
    ],
    ['an unchanged container leaves its level out', threeLevels, undefined, ['a', 'b'], [['a'], ['b']]],
    ['Ordered goes in spec order', plain, ORDERED, ['redis', 'nginx'], [['nginx'], ['redis']]],
    ["Ordered under Kruise's group is honoured too", plain, KRUISE_ORDERED, ['nginx', 'redis'], [['nginx'], ['redis']]],
    ['Ordered wins over env priorities', kruisePriorities, ORDERED, ['nginx', 'redis'], [['nginx'], ['redis']]],
    [
      'native sidecars go before any app container',
      withSidecars,
      undefined,
      ['nginx', 'log', 'redis', 'mesh'],
      [['mesh', 'log'], ['redis'], ['nginx']],
    ],
    ['only sidecars changing: one batch', withSidecars, undefined, ['log'], [['log']]],
    ['a priority that is no integer counts as 0', badPriority, undefined, ['nginx', 'redis'], [['redis'], ['nginx']]],
    ['a name the spec does not hold is left out', plain, undefined, ['ghost', 'redis'], [['redis']]],
    ['nothing changing: no batch', kruisePriorities, undefined, [], []],
  ])('%s', (_name, spec, annotations, names, batches) => {
    expect(containerBatches(spec, annotations, names)).toEqual(batches);
  });
});
