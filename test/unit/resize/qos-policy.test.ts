import { describe, expect, it } from '@jest/globals';
import { restartRequired, type PolicyContainer, type ResizableResource } from '../../../src/resize/policy.js';
import type { QosClass } from '../../../src/api/pod.js';
import { qosClass, resizeChangesQos, type QosContainer } from '../../../src/resize/qos.js';
import { guaranteed, type Res } from '../../support/fixtures/kubelet-pods.js';

const c = (resources?: Res): QosContainer => (resources === undefined ? {} : { resources });

const classes: [string, QosContainer[], QosClass][] = [
  ['requests equal to limits for cpu and memory is Guaranteed', [c(guaranteed('100m', '128Mi'))], 'Guaranteed'],
  [
    'limits only is Guaranteed, because the API server defaults requests to limits',
    [c({ limits: { cpu: '100m', memory: '128Mi' } })],
    'Guaranteed',
  ],
  [
    '"1" and "1000m", "1Gi" and "1073741824" compare by value',
    [c({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1073741824' } })],
    'Guaranteed',
  ],
  [
    'two Guaranteed containers make a Guaranteed pod',
    [c(guaranteed('100m', '64Mi')), c(guaranteed('2', '1Gi'))],
    'Guaranteed',
  ],
  [
    'requests below limits is Burstable',
    [c({ requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } })],
    'Burstable',
  ],
  ['a cpu-only container is Burstable', [c({ requests: { cpu: '100m' }, limits: { cpu: '100m' } })], 'Burstable'],
  [
    'one Guaranteed container beside one without resources is Burstable',
    [c(guaranteed('100m', '64Mi')), c()],
    'Burstable',
  ],
  [
    'an explicit zero cpu request under a cpu limit is Burstable',
    [c({ requests: { cpu: '0', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } })],
    'Burstable',
  ],
  ['no resources at all is BestEffort', [c(), c({})], 'BestEffort'],
  ['only zero quantities is BestEffort', [c({ requests: { cpu: '0', memory: '0' } })], 'BestEffort'],
  [
    'resources other than cpu and memory do not count',
    [c({ requests: { 'ephemeral-storage': '1Gi' }, limits: { 'ephemeral-storage': '2Gi' } })],
    'BestEffort',
  ],
  ['no containers is BestEffort', [], 'BestEffort'],
];

describe('qosClass follows the Kubernetes rule for cpu and memory', () => {
  it.each(classes)('%s', (_name, containers, expected) => {
    expect(qosClass(containers)).toBe(expected);
  });
});

const changes: [string, QosContainer[], QosContainer[], boolean][] = [
  [
    'scaling a Guaranteed container up keeps it Guaranteed',
    [c(guaranteed('100m', '128Mi'))],
    [c(guaranteed('200m', '256Mi'))],
    false,
  ],
  [
    'changing only the cpu limit of a Guaranteed container makes it Burstable',
    [c(guaranteed('100m', '128Mi'))],
    [c({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '200m', memory: '128Mi' } })],
    true,
  ],
  [
    'changing only the memory limit of a Guaranteed container makes it Burstable',
    [c(guaranteed('100m', '128Mi'))],
    [c({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '100m', memory: '256Mi' } })],
    true,
  ],
  [
    'removing the cpu limit of a Guaranteed container makes it Burstable',
    [c(guaranteed('100m', '128Mi'))],
    [c({ requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '128Mi' } })],
    true,
  ],
  [
    'removing all resources of a Burstable container makes it BestEffort',
    [c({ requests: { cpu: '100m' } })],
    [c()],
    true,
  ],
  [
    "removing a Burstable container's memory limit keeps it Burstable",
    [c({ requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } })],
    [c({ requests: { cpu: '100m', memory: '64Mi' } })],
    false,
  ],
  [
    "raising a Burstable container's requests to its limits makes it Guaranteed",
    [c({ requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } })],
    [c(guaranteed('200m', '128Mi'))],
    true,
  ],
  ['adding requests to a BestEffort container makes it Burstable', [c()], [c({ requests: { cpu: '100m' } })], true],
  [
    'decreasing a Burstable memory request keeps it Burstable',
    [c({ requests: { cpu: '100m', memory: '200Mi' }, limits: { cpu: '200m', memory: '400Mi' } })],
    [c({ requests: { cpu: '100m', memory: '100Mi' }, limits: { cpu: '200m', memory: '400Mi' } })],
    false,
  ],
  [
    'three Guaranteed containers with a net increase stay Guaranteed',
    [c(guaranteed('100m', '100Mi')), c(guaranteed('200m', '200Mi')), c(guaranteed('300m', '300Mi'))],
    [c(guaranteed('140m', '140Mi')), c(guaranteed('150m', '150Mi')), c(guaranteed('340m', '340Mi'))],
    false,
  ],
];

describe('resizeChangesQos detects a resize the API server would reject', () => {
  it.each(changes)('%s', (_name, before, after, expected) => {
    expect(resizeChangesQos(before, after)).toBe(expected);
  });
});

const policy = (cpu?: string, memory?: string): PolicyContainer => ({
  resizePolicy: [
    ...(cpu ? [{ resourceName: 'cpu', restartPolicy: cpu }] : []),
    ...(memory ? [{ resourceName: 'memory', restartPolicy: memory }] : []),
  ],
});
const policies: [string, PolicyContainer, ResizableResource[], boolean][] = [
  ['no resizePolicy resizes cpu without a restart', {}, ['cpu'], false],
  ['no resizePolicy resizes memory without a restart', {}, ['memory'], false],
  [
    'NotRequired for both resizes cpu and memory without a restart',
    policy('NotRequired', 'NotRequired'),
    ['cpu', 'memory'],
    false,
  ],
  [
    'RestartContainer for memory leaves a cpu-only resize without a restart',
    policy('NotRequired', 'RestartContainer'),
    ['cpu'],
    false,
  ],
  [
    'RestartContainer for memory restarts on a memory resize',
    policy('NotRequired', 'RestartContainer'),
    ['memory'],
    true,
  ],
  [
    'RestartContainer for memory wins when cpu and memory change together',
    policy('NotRequired', 'RestartContainer'),
    ['cpu', 'memory'],
    true,
  ],
  ['RestartContainer for cpu restarts on a cpu resize', policy('RestartContainer'), ['cpu'], true],
  ['a resource without an entry defaults to NotRequired', policy('RestartContainer'), ['memory'], false],
  [
    'PreferNoRestart (a KEP draft name) does not restart',
    policy('PreferNoRestart', 'PreferNoRestart'),
    ['cpu', 'memory'],
    false,
  ],
  ['nothing changed restarts nothing', policy('RestartContainer', 'RestartContainer'), [], false],
];

describe('restartRequired reads the container resizePolicy', () => {
  it.each(policies)('%s', (_name, container, changed, expected) => {
    expect(restartRequired(container, changed)).toBe(expected);
  });
});
