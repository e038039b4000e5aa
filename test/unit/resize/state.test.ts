import { describe, expect, it } from '@jest/globals';
import { kubeletCanResize, podResizeView, resourcesEquivalent } from '../../../src/resize/state.js';
import type { ResizeView } from '../../../src/resize/view.js';
import type { Pod } from '../../../src/api/wire.js';
import { guaranteed, makePod, type Res } from '../../support/fixtures/kubelet-pods.js';

/** The expected fields that have a value; those given as undefined must be absent. */
const defined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

const T_IN_PROGRESS = '2025-06-01T10:05:00Z';
const T_PENDING = '2025-06-01T10:04:00Z';

// Each row: a pod as the kubelet reports it at one point of a resize, and the view we expect.
type Row = [string, Pod, Partial<ResizeView>];

// KEP-1287 e2e: Guaranteed pod, one container, increase CPU & memory (100m/128Mi → 200m/256Mi).
const guaranteedIncrease: Row[] = [
  [
    'Guaranteed increase, conditions form: the kubelet has not seen the new generation, so the resize is Proposed',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 1,
      qosClass: 'Guaranteed',
      containers: [{ name: 'app', spec: guaranteed('200m', '256Mi'), actual: guaranteed('100m', '128Mi') }],
    }),
    { state: 'Proposed', reason: 'NotObserved', done: false },
  ],
  [
    'Guaranteed increase, conditions form: accepted and not yet actuated is InProgress since the condition began',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      qosClass: 'Guaranteed',
      containers: [
        {
          name: 'app',
          spec: guaranteed('200m', '256Mi'),
          actual: guaranteed('100m', '128Mi'),
          allocated: { cpu: '200m', memory: '256Mi' },
        },
      ],
      resizeConditions: [{ type: 'PodResizeInProgress', lastTransitionTime: T_IN_PROGRESS }],
    }),
    { state: 'InProgress', since: T_IN_PROGRESS, done: false },
  ],
  [
    'Guaranteed increase, conditions form: actuated, conditions cleared and generation observed is done',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      qosClass: 'Guaranteed',
      containers: [{ name: 'app', spec: guaranteed('200m', '256Mi'), actual: guaranteed('200m', '256Mi') }],
    }),
    { state: undefined, done: true },
  ],
  [
    'Guaranteed increase, legacy form: status.resize Proposed set by the API server is Proposed',
    makePod({
      form: 'legacy',
      resize: 'Proposed',
      qosClass: 'Guaranteed',
      containers: [{ name: 'app', spec: guaranteed('200m', '256Mi'), actual: guaranteed('100m', '128Mi') }],
    }),
    { state: 'Proposed', since: undefined, done: false },
  ],
  [
    'Guaranteed increase, legacy form: status.resize InProgress is InProgress with no known start',
    makePod({
      form: 'legacy',
      resize: 'InProgress',
      qosClass: 'Guaranteed',
      containers: [
        {
          name: 'app',
          spec: guaranteed('200m', '256Mi'),
          actual: guaranteed('100m', '128Mi'),
          allocated: { cpu: '200m', memory: '256Mi' },
        },
      ],
    }),
    { state: 'InProgress', since: undefined, done: false },
  ],
  [
    'Guaranteed increase, legacy form: status.resize cleared and resources actuated is done',
    makePod({
      form: 'legacy',
      qosClass: 'Guaranteed',
      containers: [{ name: 'app', spec: guaranteed('200m', '256Mi'), actual: guaranteed('200m', '256Mi') }],
    }),
    { state: undefined, done: true },
  ],
];

// KEP-1287 e2e: Burstable pod, cpu & memory requests + limits, decrease memory request only.
const burstableSpec: Res = { requests: { cpu: '100m', memory: '100Mi' }, limits: { cpu: '200m', memory: '400Mi' } };
const burstableBefore: Res = { requests: { cpu: '100m', memory: '200Mi' }, limits: { cpu: '200m', memory: '400Mi' } };
const burstableDecrease: Row[] = [
  [
    'Burstable memory request decrease, conditions form: in progress until the status reports the new request',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [
        { name: 'app', spec: burstableSpec, actual: burstableBefore, allocated: { cpu: '100m', memory: '100Mi' } },
      ],
      resizeConditions: [{ type: 'PodResizeInProgress', lastTransitionTime: T_IN_PROGRESS }],
    }),
    { state: 'InProgress', done: false },
  ],
  [
    'Burstable memory request decrease, conditions form: done when the status reports the request in bytes',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [
        {
          name: 'app',
          spec: burstableSpec,
          actual: { requests: { cpu: '100m', memory: '104857600' }, limits: { cpu: '200m', memory: '400Mi' } },
        },
      ],
    }),
    { done: true },
  ],
  [
    'Burstable memory request decrease, legacy form: done when status.resize is clear and the request matches',
    makePod({
      form: 'legacy',
      containers: [{ name: 'app', spec: burstableSpec, actual: burstableSpec }],
    }),
    { done: true },
  ],
  [
    'Burstable memory request decrease, legacy form: InProgress while status.resize says so',
    makePod({
      form: 'legacy',
      resize: 'InProgress',
      containers: [{ name: 'app', spec: burstableSpec, actual: burstableBefore }],
    }),
    { state: 'InProgress', done: false },
  ],
];

// KEP-1287 e2e: resize with equivalents, cpu request 2m → 1m and cpu limit 10m → 5m.
const equivalentsSpec: Res = { requests: { cpu: '1m', memory: '64Mi' }, limits: { cpu: '5m', memory: '64Mi' } };
const equivalents: Row[] = [
  [
    'resize with equivalents, conditions form: status still at the kernel minimums 2m/10m counts as done',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [
        {
          name: 'app',
          spec: equivalentsSpec,
          actual: { requests: { cpu: '2m', memory: '64Mi' }, limits: { cpu: '10m', memory: '64Mi' } },
        },
      ],
    }),
    { done: true },
  ],
  [
    'resize with equivalents, conditions form: status preserving the allocated 1m/5m counts as done',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [{ name: 'app', spec: equivalentsSpec, actual: equivalentsSpec }],
    }),
    { done: true },
  ],
  [
    'resize with equivalents, legacy form: 2m/10m reported for 1m/5m asked counts as done',
    makePod({
      form: 'legacy',
      containers: [
        {
          name: 'app',
          spec: equivalentsSpec,
          actual: { requests: { cpu: '2m', memory: '64Mi' }, limits: { cpu: '10m', memory: '64Mi' } },
        },
      ],
    }),
    { done: true },
  ],
  [
    'a cpu limit of 11m reported for 5m asked is not an equivalent and reads as Proposed (not actuated)',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [
        {
          name: 'app',
          spec: equivalentsSpec,
          actual: { requests: { cpu: '2m', memory: '64Mi' }, limits: { cpu: '11m', memory: '64Mi' } },
        },
      ],
    }),
    { state: 'Proposed', reason: 'NotActuated', message: 'container app: cpu limit 5m, node reports 11m', done: false },
  ],
];

// KEP-1287 e2e: Guaranteed pod, three containers, increase c1 & c3, decrease c2: net increase.
const three = (c1: Res, c2: Res, c3: Res, a1: Res, a2: Res, a3: Res) => [
  { name: 'c1', spec: c1, actual: a1 },
  { name: 'c2', spec: c2, actual: a2 },
  { name: 'c3', spec: c3, actual: a3 },
];
const threeBefore = [guaranteed('100m', '100Mi'), guaranteed('200m', '200Mi'), guaranteed('300m', '300Mi')] as const;
const threeAfter = [guaranteed('140m', '140Mi'), guaranteed('150m', '150Mi'), guaranteed('340m', '340Mi')] as const;
const threeContainers: Row[] = [
  [
    'three containers with a net increase, conditions form: decreases applied first, increases pending, is InProgress',
    makePod({
      form: 'conditions',
      generation: 4,
      observedGeneration: 4,
      qosClass: 'Guaranteed',
      containers: three(...threeAfter, threeBefore[0], threeAfter[1], threeBefore[2]),
      resizeConditions: [{ type: 'PodResizeInProgress', lastTransitionTime: T_IN_PROGRESS, observedGeneration: 4 }],
    }),
    { state: 'InProgress', since: T_IN_PROGRESS, done: false },
  ],
  [
    'three containers with a net increase, conditions form: all three actuated is done',
    makePod({
      form: 'conditions',
      generation: 4,
      observedGeneration: 4,
      qosClass: 'Guaranteed',
      containers: three(...threeAfter, ...threeAfter),
    }),
    { done: true },
  ],
  [
    'three containers with a net increase, conditions form: one container still behind with no condition is Proposed naming it',
    makePod({
      form: 'conditions',
      generation: 4,
      observedGeneration: 4,
      qosClass: 'Guaranteed',
      containers: three(...threeAfter, threeAfter[0], threeAfter[1], threeBefore[2]),
    }),
    {
      state: 'Proposed',
      reason: 'NotActuated',
      message: 'container c3: cpu request 340m, node reports 300m',
      done: false,
    },
  ],
  [
    'three containers with a net increase, legacy form: InProgress until status.resize clears',
    makePod({
      form: 'legacy',
      resize: 'InProgress',
      qosClass: 'Guaranteed',
      containers: three(...threeAfter, threeBefore[0], threeAfter[1], threeBefore[2]),
    }),
    { state: 'InProgress', done: false },
  ],
  [
    'three containers with a net increase, legacy form: all three actuated is done',
    makePod({
      form: 'legacy',
      qosClass: 'Guaranteed',
      containers: three(...threeAfter, ...threeAfter),
    }),
    { done: true },
  ],
];

const deferredMessage = "Node didn't have enough resource: cpu, requested: 3000, used: 3350, capacity: 4000";
const infeasibleMessage = "Node didn't have enough capacity: cpu, requested: 64000, capacity: 4000";
const pendingAndErrors: Row[] = [
  [
    'Deferred, conditions form: PodResizePending reason Deferred with its message and start time',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [{ name: 'app', spec: guaranteed('3', '1Gi'), actual: guaranteed('500m', '1Gi') }],
      resizeConditions: [
        { type: 'PodResizePending', reason: 'Deferred', message: deferredMessage, lastTransitionTime: T_PENDING },
      ],
    }),
    { state: 'Deferred', reason: 'Deferred', message: deferredMessage, since: T_PENDING, done: false },
  ],
  [
    'Deferred, legacy form: status.resize Deferred',
    makePod({
      form: 'legacy',
      resize: 'Deferred',
      containers: [{ name: 'app', spec: guaranteed('3', '1Gi'), actual: guaranteed('500m', '1Gi') }],
    }),
    { state: 'Deferred', since: undefined, done: false },
  ],
  [
    'Infeasible, conditions form: PodResizePending reason Infeasible with its message',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [{ name: 'app', spec: guaranteed('64', '1Gi'), actual: guaranteed('500m', '1Gi') }],
      resizeConditions: [
        { type: 'PodResizePending', reason: 'Infeasible', message: infeasibleMessage, lastTransitionTime: T_PENDING },
      ],
    }),
    { state: 'Infeasible', reason: 'Infeasible', message: infeasibleMessage, since: T_PENDING, done: false },
  ],
  [
    'Infeasible, legacy form: status.resize Infeasible',
    makePod({
      form: 'legacy',
      resize: 'Infeasible',
      containers: [{ name: 'app', spec: guaranteed('64', '1Gi'), actual: guaranteed('500m', '1Gi') }],
    }),
    { state: 'Infeasible', done: false },
  ],
  [
    'a memory limit below current usage is InProgress with reason Error and the kubelet message',
    makePod({
      form: 'conditions',
      generation: 3,
      observedGeneration: 3,
      containers: [
        {
          name: 'app',
          spec: { requests: { memory: '10Ki' }, limits: { memory: '10Ki' } },
          actual: { requests: { memory: '20Mi' }, limits: { memory: '20Mi' } },
        },
      ],
      resizeConditions: [
        {
          type: 'PodResizeInProgress',
          reason: 'Error',
          message:
            'error setting memory limit: attempting to set pod memory limit (10240) below current usage (2490368)',
          lastTransitionTime: T_IN_PROGRESS,
        },
      ],
    }),
    {
      state: 'InProgress',
      reason: 'Error',
      message: 'error setting memory limit: attempting to set pod memory limit (10240) below current usage (2490368)',
      since: T_IN_PROGRESS,
      done: false,
    },
  ],
  [
    'an InProgress Error is never done, even when the status resources already match',
    makePod({
      form: 'conditions',
      generation: 3,
      observedGeneration: 3,
      containers: [{ name: 'app', spec: guaranteed('100m', '64Mi'), actual: guaranteed('100m', '64Mi') }],
      resizeConditions: [
        { type: 'PodResizeInProgress', reason: 'Error', message: 'memory limit (67108864) below current usage' },
      ],
    }),
    { state: 'InProgress', reason: 'Error', done: false },
  ],
  [
    'a pending verdict takes precedence over an in-progress resize (a new resize arrived mid-way)',
    makePod({
      form: 'conditions',
      generation: 3,
      observedGeneration: 3,
      containers: [{ name: 'app', spec: guaranteed('3', '1Gi'), actual: guaranteed('500m', '1Gi') }],
      resizeConditions: [
        { type: 'PodResizeInProgress', lastTransitionTime: T_IN_PROGRESS },
        { type: 'PodResizePending', reason: 'Deferred', message: deferredMessage, lastTransitionTime: T_PENDING },
      ],
    }),
    { state: 'Deferred', since: T_PENDING, done: false },
  ],
  [
    'an unknown pending reason reads as Deferred, as KEP-1287 asks consumers to',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [{ name: 'app', spec: guaranteed('3', '1Gi'), actual: guaranteed('500m', '1Gi') }],
      resizeConditions: [{ type: 'PodResizePending', reason: 'SomethingNew', message: 'future reason' }],
    }),
    { state: 'Deferred', reason: 'SomethingNew', done: false },
  ],
  [
    'an unknown legacy status.resize value reads as Deferred',
    makePod({
      form: 'legacy',
      resize: 'Error',
      containers: [{ name: 'app', spec: guaranteed('3', '1Gi'), actual: guaranteed('500m', '1Gi') }],
    }),
    { state: 'Deferred', reason: 'Error', done: false },
  ],
  [
    'conditions take precedence over a legacy status.resize on the same pod',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      resize: 'Deferred',
      containers: [{ name: 'app', spec: guaranteed('200m', '256Mi'), actual: guaranteed('100m', '128Mi') }],
      resizeConditions: [{ type: 'PodResizeInProgress', lastTransitionTime: T_IN_PROGRESS }],
    }),
    { state: 'InProgress', done: false },
  ],
];

const generations: Row[] = [
  [
    'generation-based Proposed: generation 3 ahead of observedGeneration 2 with old resources reported',
    makePod({
      form: 'conditions',
      generation: 3,
      observedGeneration: 2,
      containers: [{ name: 'app', spec: guaranteed('300m', '256Mi'), actual: guaranteed('200m', '256Mi') }],
    }),
    {
      state: 'Proposed',
      reason: 'NotObserved',
      message: 'the kubelet has observed generation 2, the pod is at 3',
      since: undefined,
      done: false,
    },
  ],
  [
    'generation-based Proposed: generation ahead and no container reporting resources yet',
    makePod({
      form: 'conditions',
      generation: 3,
      observedGeneration: 2,
      containers: [{ name: 'app', spec: guaranteed('300m', '256Mi'), actual: undefined, running: false }],
    }),
    { state: 'Proposed', reason: 'NotObserved', done: false },
  ],
  [
    'an Infeasible verdict on an older generation reads as Proposed, not as a verdict on the new resize',
    makePod({
      form: 'conditions',
      generation: 3,
      observedGeneration: 3,
      containers: [{ name: 'app', spec: guaranteed('300m', '256Mi'), actual: guaranteed('200m', '256Mi') }],
      resizeConditions: [
        { type: 'PodResizePending', reason: 'Infeasible', message: infeasibleMessage, observedGeneration: 2 },
      ],
    }),
    { state: 'Proposed', reason: 'NotObserved', done: false },
  ],
  [
    'a generation bump whose resources already match is neither pending nor done until the kubelet catches up',
    makePod({
      form: 'conditions',
      generation: 3,
      observedGeneration: 2,
      containers: [{ name: 'app', spec: guaranteed('200m', '256Mi'), actual: guaranteed('200m', '256Mi') }],
    }),
    { state: undefined, done: false },
  ],
  [
    'spec differing from the status with the generation observed and no condition is Proposed (not actuated)',
    makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [{ name: 'app', spec: guaranteed('300m', '256Mi'), actual: guaranteed('200m', '256Mi') }],
    }),
    { state: 'Proposed', reason: 'NotActuated', done: false },
  ],
  [
    'a container that reports no resources does not hold up done',
    makePod({
      form: 'conditions',
      generation: 1,
      observedGeneration: 1,
      containers: [
        { name: 'app', spec: guaranteed('200m', '256Mi'), actual: guaranteed('200m', '256Mi') },
        { name: 'log', spec: {}, actual: undefined },
      ],
    }),
    { done: true },
  ],
  [
    'a resize condition with status False is ignored',
    (() => {
      const pod = makePod({
        form: 'conditions',
        generation: 2,
        observedGeneration: 2,
        containers: [{ name: 'app', spec: guaranteed('1', '1Gi'), actual: guaranteed('1000m', '1Gi') }],
      });
      pod.status!.conditions!.push({ type: 'PodResizeInProgress', status: 'False' });
      return pod;
    })(),
    { state: undefined, done: true },
  ],
];

describe('podResizeView maps what the kubelet reports to a resize state', () => {
  it.each([
    ...guaranteedIncrease,
    ...burstableDecrease,
    ...equivalents,
    ...threeContainers,
    ...pendingAndErrors,
    ...generations,
  ])('%s', (_name, pod, expected) => {
    const got = podResizeView(pod);
    expect(got).toMatchObject(defined(expected));
    for (const [key, value] of Object.entries(expected)) if (value === undefined) expect(got).not.toHaveProperty(key);
  });
});

describe('podResizeView covers sidecars', () => {
  it('a sidecar whose resources differ keeps the pod from being done', () => {
    const pod = makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [{ name: 'app', spec: guaranteed('1', '1Gi'), actual: guaranteed('1', '1Gi') }],
    });
    pod.spec!.initContainers = [
      { name: 'proxy', image: 'proxy:1', restartPolicy: 'Always', resources: guaranteed('200m', '64Mi') },
    ];
    pod.status!.initContainerStatuses = [
      {
        name: 'proxy',
        image: 'proxy:1',
        imageID: 'x',
        ready: true,
        restartCount: 0,
        state: { running: {} },
        resources: guaranteed('100m', '64Mi'),
      },
    ];
    expect(podResizeView(pod)).toMatchObject({
      state: 'Proposed',
      message: 'container proxy: cpu request 200m, node reports 100m',
      done: false,
    });
  });
  it('a plain init container is not compared', () => {
    const pod = makePod({
      form: 'conditions',
      generation: 2,
      observedGeneration: 2,
      containers: [{ name: 'app', spec: guaranteed('1', '1Gi'), actual: guaranteed('1', '1Gi') }],
    });
    pod.spec!.initContainers = [{ name: 'migrate', image: 'migrate:1', resources: guaranteed('200m', '64Mi') }];
    pod.status!.initContainerStatuses = [
      {
        name: 'migrate',
        image: 'migrate:1',
        imageID: 'x',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode: 0 } },
        resources: guaranteed('100m', '64Mi'),
      },
    ];
    expect(podResizeView(pod)).toEqual({ done: true });
  });
});

const equivalence: [string, Res | undefined, Res | undefined, boolean][] = [
  ['"1000m" and "1" are the same cpu', { requests: { cpu: '1000m' } }, { requests: { cpu: '1' } }, true],
  [
    '"128Mi" and "134217728" are the same memory',
    { limits: { memory: '128Mi' } },
    { limits: { memory: '134217728' } },
    true,
  ],
  [
    '"0.5Gi" and "512Mi" are the same memory',
    { requests: { memory: '0.5Gi' } },
    { requests: { memory: '512Mi' } },
    true,
  ],
  ['a cpu request of 1m equals the 2m minimum', { requests: { cpu: '1m' } }, { requests: { cpu: '2m' } }, true],
  ['an absent cpu request equals the 2m minimum', {}, { requests: { cpu: '2m' } }, true],
  ['a cpu request of 3m is not 2m', { requests: { cpu: '3m' } }, { requests: { cpu: '2m' } }, false],
  ['a cpu limit of 5m equals the 10m minimum', { limits: { cpu: '5m' } }, { limits: { cpu: '10m' } }, true],
  ['a cpu limit of 10m is not 11m', { limits: { cpu: '10m' } }, { limits: { cpu: '11m' } }, false],
  ['an absent cpu limit is not a 5m limit', {}, { limits: { cpu: '5m' } }, false],
  ['an absent memory limit equals only an absent one', { limits: {} }, {}, true],
  ['an absent memory limit is not a set one', {}, { limits: { memory: '1Gi' } }, false],
  ['different memory requests differ', { requests: { memory: '64Mi' } }, { requests: { memory: '128Mi' } }, false],
  [
    'resources other than cpu and memory are ignored',
    { requests: { cpu: '1', 'ephemeral-storage': '1Gi' } },
    { requests: { cpu: '1' } },
    true,
  ],
  ['no resources on either side are equivalent (status {} for a BestEffort container)', undefined, {}, true],
];

describe('resourcesEquivalent compares like the kubelet', () => {
  it.each(equivalence)('%s', (_name, spec, actual, expected) => {
    expect(resourcesEquivalent(spec, actual)).toBe(expected);
  });
});

describe('kubeletCanResize tells whether the node resizes in place', () => {
  const base = () =>
    makePod({
      form: 'conditions',
      containers: [{ name: 'app', spec: guaranteed('1', '1Gi'), actual: guaranteed('1', '1Gi') }],
    });
  const cases: [string, Pod, boolean][] = [
    ['a running container reporting resources means yes', base(), true],
    [
      'running containers without status resources mean no',
      makePod({ form: 'legacy', containers: [{ name: 'app', spec: guaranteed('1', '1Gi') }] }),
      false,
    ],
    [
      'a running container reporting empty resources (no requests) means yes',
      makePod({ form: 'conditions', containers: [{ name: 'app', spec: {}, actual: {} }] }),
      true,
    ],
    [
      'a waiting container reporting resources is no evidence',
      makePod({
        form: 'conditions',
        containers: [{ name: 'app', spec: guaranteed('1', '1Gi'), actual: guaranteed('1', '1Gi'), running: false }],
      }),
      false,
    ],
    [
      'a running sidecar reporting resources means yes',
      (() => {
        const pod = makePod({ form: 'conditions', containers: [{ name: 'app', spec: {}, running: false }] });
        pod.status!.initContainerStatuses = [
          {
            name: 'proxy',
            image: 'proxy:1',
            imageID: 'x',
            ready: true,
            restartCount: 0,
            state: { running: {} },
            resources: {},
          },
        ];
        return pod;
      })(),
      true,
    ],
    ['a pod without status means no', { metadata: { name: 'p' }, spec: { containers: [{ name: 'app' }] } }, false],
  ];
  it.each(cases)('%s', (_name, pod, expected) => {
    expect(kubeletCanResize(pod)).toBe(expected);
  });
});
