// Tables for the `kubectl tailor status` view model: the verdict (complete / blocked /
// progressing) and its message from CloneSet status and pods, the per-pod lines, and the text.
import { describe, expect, it } from '@jest/globals';
import type { CloneSet, CloneSetCondition, CloneSetStatus } from '../../../../src/api/types.js';
import {
  progressBar,
  renderProgress,
  renderStatus,
  renderSummaryLine,
} from '../../../../src/cli/pure/status-render.js';
import {
  buildStatusView,
  formatAge,
  type PodLine,
  type StatusView,
  type Verdict,
} from '../../../../src/cli/pure/status-view.js';
import type { Pod, Wire } from '../../../../src/api/wire.js';
import { buildPod, runningStatus, type PodCondition } from '../../../support/fixtures/pods.js';

const NOW = Date.parse('2025-06-01T10:10:00Z');
const NEW = 'web-7c9d5fbb8x';
const OLD = 'web-6d8f9c7b5q';

interface PodOptions {
  revision?: string;
  ready?: boolean;
  /** InPlaceUpdateReady condition status; undefined: no condition. */
  gate?: 'True' | 'False';
  /** Write an inplace-update-state annotation for this revision. */
  updatedInPlace?: boolean;
  /** PodResizePending reason (Deferred / Infeasible) or 'InProgress' for PodResizeInProgress. */
  resize?: 'Deferred' | 'Infeasible' | 'InProgress';
  /** The node runs other resources than the spec (a resize not actuated). */
  notActuated?: boolean;
  waiting?: string;
  unschedulable?: boolean;
  terminating?: boolean;
}

function pod(name: string, o: PodOptions = {}): Pod {
  const revision = o.revision ?? NEW;
  const conditions: Record<string, unknown>[] = [
    { type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: '2025-06-01T10:00:00Z' },
    {
      type: 'PodScheduled',
      status: o.unschedulable ? 'False' : 'True',
      ...(o.unschedulable ? { reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient cpu.' } : {}),
    },
  ];
  if (o.gate)
    conditions.push({
      type: 'apps.tailor.dev/InPlaceUpdateReady',
      status: o.gate,
      lastTransitionTime: '2025-06-01T10:01:00Z',
    });
  if (o.resize === 'InProgress')
    conditions.push({
      type: 'PodResizeInProgress',
      status: 'True',
      lastTransitionTime: '2025-06-01T10:07:00Z',
      observedGeneration: 2,
    });
  else if (o.resize) {
    conditions.push({
      type: 'PodResizePending',
      status: 'True',
      reason: o.resize,
      message:
        o.resize === 'Infeasible'
          ? "Node didn't have enough capacity: cpu, requested: 500000, capacity: 4000"
          : "Node didn't have enough resource: cpu",
      lastTransitionTime: '2025-06-01T10:05:00Z',
      observedGeneration: 2,
    });
  }
  const spec = { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } };
  const actual =
    o.notActuated || o.resize
      ? { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } }
      : spec;
  return buildPod({
    name,
    namespace: 'shop',
    labels: { app: 'web', 'controller-revision-hash': revision },
    ...(o.updatedInPlace
      ? {
          annotations: {
            'apps.tailor.dev/inplace-update-state': JSON.stringify({
              revision,
              updateTimestamp: '2025-06-01T10:01:00Z',
            }),
          },
        }
      : {}),
    metadata: { generation: 2, ...(o.terminating ? { deletionTimestamp: '2025-06-01T10:09:00Z' } : {}) },
    containers: [{ name: 'main', image: 'busybox:v2', resources: spec }],
    phase: o.unschedulable ? 'Pending' : 'Running',
    conditions: conditions as PodCondition[],
    containerStatuses: o.unschedulable
      ? []
      : [
          runningStatus('main', {
            image: 'busybox:v2',
            imageID: 'sha256:1',
            ready: o.ready !== false,
            state: o.waiting
              ? { waiting: { reason: o.waiting, message: 'back-off 10s restarting failed container' } }
              : { running: { startedAt: '2025-06-01T10:00:00Z' } },
            resources: actual,
          }),
        ],
    status: { observedGeneration: 2 },
  });
}

const cond = (type: string, status: 'True' | 'False' | 'Unknown', reason: string, message = ''): CloneSetCondition => ({
  type,
  status,
  reason,
  message,
});

function cloneSet(
  o: {
    replicas?: number;
    generation?: number;
    status?: Partial<CloneSetStatus> | null;
    strategy?: Record<string, unknown>;
  } = {},
): Wire<CloneSet> {
  const replicas = o.replicas ?? 3;
  const status: CloneSetStatus = {
    observedGeneration: o.generation ?? 2,
    replicas,
    readyReplicas: replicas,
    availableReplicas: replicas,
    updatedReplicas: replicas,
    updatedReadyReplicas: replicas,
    updatedAvailableReplicas: replicas,
    expectedUpdatedReplicas: replicas,
    updateRevision: NEW,
    currentRevision: NEW,
    labelSelector: 'app=web',
    resize: { resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 0 },
    conditions: [cond('Progressing', 'True', 'CloneSetAvailable', 'CloneSet is available')],
    ...o.status,
  };
  return {
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'web', namespace: 'shop', generation: o.generation ?? 2, uid: 'cs-1' },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } },
      updateStrategy: { type: 'InPlaceIfPossible', ...o.strategy },
    },
    ...(o.status === null ? {} : { status }),
  };
}

const three = (o: PodOptions = {}): Pod[] =>
  ['web-a', 'web-b', 'web-c'].map((n) => pod(n, { gate: 'True', updatedInPlace: true, ...o }));

type Row = [string, Wire<CloneSet>, Pod[], Verdict, RegExp];

const verdicts: Row[] = [
  [
    'every pod updated, ready, resized: complete',
    cloneSet(),
    three(),
    'complete',
    /successfully rolled out: 3 of 3 pods run revision 7c9d5fbb8x and are ready/,
  ],
  [
    'no status yet: progressing',
    cloneSet({ status: null }),
    [],
    'progressing',
    /waiting for the controller to report status/,
  ],
  [
    'status for an older generation is not judged, even with FailedUpdate True',
    cloneSet({
      generation: 3,
      status: {
        observedGeneration: 2,
        conditions: [cond('FailedUpdate', 'True', 'NotInPlaceUpdatable', 'cannot change volumes')],
      },
    }),
    three(),
    'progressing',
    /waiting for the controller to observe generation 3 \(status is for 2\)/,
  ],
  [
    'one of three pods updated: progressing, counting updated pods',
    cloneSet({ status: { updatedReplicas: 1, updatedReadyReplicas: 1, updatedAvailableReplicas: 1 } }),
    [pod('web-a'), pod('web-b', { revision: OLD }), pod('web-c', { revision: OLD })],
    'progressing',
    /waiting for rollout to finish: 1 of 3 pods updated/,
  ],
  [
    'all updated, one not ready yet: progressing, counting ready updated pods',
    cloneSet({ status: { updatedReadyReplicas: 2, readyReplicas: 2 } }),
    [pod('web-a'), pod('web-b'), pod('web-c', { ready: false, gate: 'False' })],
    'progressing',
    /2 of 3 updated pods are ready/,
  ],
  [
    'a partition holds 2 of 4 back and the 2 others are updated and ready: complete',
    cloneSet({
      replicas: 4,
      strategy: { partition: 2 },
      status: { expectedUpdatedReplicas: 2, updatedReplicas: 2, updatedReadyReplicas: 2, updatedAvailableReplicas: 2 },
    }),
    [pod('web-a'), pod('web-b'), pod('web-c', { revision: OLD }), pod('web-d', { revision: OLD })],
    'complete',
    /partitioned roll out complete: 2 of 4 pods .* partition holds 2 back/,
  ],
  [
    'a partition holds 2 of 4 back and only 1 is updated: progressing toward 2',
    cloneSet({
      replicas: 4,
      strategy: { partition: 2 },
      status: { expectedUpdatedReplicas: 2, updatedReplicas: 1, updatedReadyReplicas: 1, updatedAvailableReplicas: 1 },
    }),
    [pod('web-a'), pod('web-b', { revision: OLD }), pod('web-c', { revision: OLD }), pod('web-d', { revision: OLD })],
    'progressing',
    /1 of 2 pods updated/,
  ],
  [
    'FailedUpdate NotInPlaceUpdatable (InPlaceOnly): blocked',
    cloneSet({
      strategy: { type: 'InPlaceOnly' },
      status: {
        updatedReplicas: 0,
        updatedReadyReplicas: 0,
        conditions: [
          cond(
            'FailedUpdate',
            'True',
            'NotInPlaceUpdatable',
            'updateStrategy.type InPlaceOnly cannot apply these changes to running pods: spec.volumes',
          ),
        ],
      },
    }),
    three({ revision: OLD }),
    'blocked',
    /FailedUpdate \(NotInPlaceUpdatable\): updateStrategy.type InPlaceOnly cannot apply these changes to running pods: spec.volumes/,
  ],
  [
    'ResizeBlocked True: blocked with the condition message',
    cloneSet({
      strategy: { resizeStrategy: { onInfeasible: 'Wait' } },
      status: {
        resize: { resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 1 },
        conditions: [
          cond('ResizeBlocked', 'True', 'Infeasible', 'web-a: Infeasible (resize is infeasible on this node)'),
        ],
      },
    }),
    [pod('web-a', { resize: 'Infeasible' }), pod('web-b'), pod('web-c')],
    'blocked',
    /ResizeBlocked \(Infeasible\): web-a: Infeasible/,
  ],
  [
    'RolloutBlocked True: blocked, naming the pods out of service',
    cloneSet({
      status: {
        updatedReplicas: 1,
        updatedReadyReplicas: 0,
        conditions: [
          cond(
            'RolloutBlocked',
            'True',
            'MaxUnavailable',
            '1 pod(s) out of service (maxUnavailable 1): web-a; the rollout waits for them',
          ),
        ],
      },
    }),
    [pod('web-a', { ready: false }), ...three({ revision: OLD }).slice(1)],
    'blocked',
    /RolloutBlocked \(MaxUnavailable\): 1 pod\(s\) out of service \(maxUnavailable 1\): web-a/,
  ],
  [
    'a pod reports Infeasible and the strategy waits, before the controller raised ResizeBlocked: blocked',
    cloneSet({ strategy: { resizeStrategy: { onInfeasible: 'Wait' } } }),
    [pod('web-a', { resize: 'Infeasible' }), pod('web-b'), pod('web-c')],
    'blocked',
    /pod web-a \(Infeasible\): resize Infeasible: Node didn't have enough capacity/,
  ],
  [
    'InPlaceOnly always waits on Infeasible: blocked',
    cloneSet({ strategy: { type: 'InPlaceOnly' } }),
    [pod('web-a', { resize: 'Infeasible' }), pod('web-b'), pod('web-c')],
    'blocked',
    /pod web-a \(Infeasible\)/,
  ],
  [
    'Infeasible with onInfeasible Recreate (the default): the controller replaces the pod, progressing',
    cloneSet(),
    [pod('web-a', { resize: 'Infeasible' }), pod('web-b'), pod('web-c')],
    'progressing',
    /waiting for 1 resize\(s\) to finish \(1 Infeasible\)/,
  ],
  [
    'Progressing False ProgressDeadlineExceeded: blocked',
    cloneSet({
      status: {
        updatedReplicas: 1,
        updatedReadyReplicas: 0,
        conditions: [
          cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'CloneSet revision web-b has timed out progressing'),
        ],
      },
    }),
    [
      pod('web-a', { waiting: 'CrashLoopBackOff', ready: false }),
      pod('web-b', { revision: OLD }),
      pod('web-c', { revision: OLD }),
    ],
    'blocked',
    /Progressing \(ProgressDeadlineExceeded\): CloneSet revision web-b has timed out progressing/,
  ],
  [
    'counts complete but a resize is InProgress on a pod: progressing',
    cloneSet(),
    [pod('web-a', { resize: 'InProgress' }), pod('web-b'), pod('web-c')],
    'progressing',
    /waiting for 1 resize\(s\) to finish \(1 InProgress\)/,
  ],
  [
    'counts complete but a pod still runs the old resources with no verdict (Proposed): progressing',
    cloneSet(),
    [pod('web-a', { notActuated: true }), pod('web-b'), pod('web-c')],
    'progressing',
    /1 Proposed/,
  ],
  [
    'pods settled but status.resize still counts a Deferred resize: progressing until the controller catches up',
    cloneSet({ status: { resize: { resizing: 1, proposed: 0, inProgress: 0, deferred: 1, infeasible: 0 } } }),
    three(),
    'progressing',
    /1 Deferred/,
  ],
  [
    'paused with pods left to update: progressing, saying paused',
    cloneSet({
      strategy: { paused: true },
      status: {
        updatedReplicas: 1,
        updatedReadyReplicas: 1,
        conditions: [cond('Progressing', 'True', 'CloneSetPaused', 'CloneSet is paused')],
      },
    }),
    [pod('web-a'), pod('web-b', { revision: OLD }), pod('web-c', { revision: OLD })],
    'progressing',
    /rollout paused \(updateStrategy.paused\); waiting for rollout to finish: 1 of 3 pods updated/,
  ],
  [
    'scaled down, one old pod still counted: progressing',
    cloneSet({
      replicas: 2,
      status: {
        replicas: 3,
        readyReplicas: 3,
        updatedReplicas: 2,
        updatedReadyReplicas: 2,
        expectedUpdatedReplicas: 2,
      },
    }),
    [pod('web-a'), pod('web-b'), pod('web-c', { revision: OLD })],
    'progressing',
    /1 old pod\(s\) pending termination/,
  ],
  [
    'FailedScale is a warning, not a verdict',
    cloneSet({
      status: {
        replicas: 2,
        readyReplicas: 2,
        updatedReplicas: 2,
        updatedReadyReplicas: 2,
        conditions: [cond('FailedScale', 'True', 'ScaleFailed', 'pods "web-x" is forbidden: exceeded quota')],
      },
    }),
    [pod('web-a'), pod('web-b')],
    'progressing',
    /2 of 3 pods exist/,
  ],
];

describe('buildStatusView verdicts', () => {
  it.each(verdicts)('%s', (_name, cs, pods, verdict, message) => {
    const view = buildStatusView(cs, pods, NOW);
    expect(view.verdict).toBe(verdict);
    expect(view.message).toMatch(message);
  });

  it('marks only FailedUpdate from a failed API call as transient', () => {
    const failed = buildStatusView(
      cloneSet({
        status: { conditions: [cond('FailedUpdate', 'True', 'UpdateFailed', 'PATCH pods/web-a: 409 Conflict')] },
      }),
      three(),
      NOW,
    );
    expect(failed.verdict).toBe('blocked');
    expect(failed.blockers).toEqual([
      { source: 'FailedUpdate', reason: 'UpdateFailed', message: 'PATCH pods/web-a: 409 Conflict', transient: true },
    ]);
    const notInPlace = buildStatusView(
      cloneSet({ status: { conditions: [cond('FailedUpdate', 'True', 'NotInPlaceUpdatable', 'x')] } }),
      three(),
      NOW,
    );
    expect(notInPlace.blockers[0]?.transient).toBe(false);
  });

  it('does not repeat a pod that ResizeBlocked already names', () => {
    const view = buildStatusView(
      cloneSet({
        strategy: { resizeStrategy: { onInfeasible: 'Wait' } },
        status: { conditions: [cond('ResizeBlocked', 'True', 'Infeasible', 'web-a: Infeasible (too big)')] },
      }),
      [pod('web-a', { resize: 'Infeasible' }), pod('web-ab', { resize: 'Infeasible' }), pod('web-c')],
      NOW,
    );
    expect(view.blockers.map((b) => b.source)).toEqual(['ResizeBlocked', 'pod web-ab']);
  });

  it('lists an Infeasible pod from status.resize when the pods were not seen', () => {
    const view = buildStatusView(
      cloneSet({
        strategy: { resizeStrategy: { onInfeasible: 'Wait' } },
        status: {
          resize: {
            resizing: 0,
            proposed: 0,
            inProgress: 0,
            deferred: 0,
            infeasible: 1,
            pods: [{ name: 'web-z', state: 'Infeasible', message: 'too big' }],
          },
        },
      }),
      three(),
      NOW,
    );
    expect(view.verdict).toBe('blocked');
    expect(view.blockers).toEqual([
      { source: 'pod web-z', reason: 'Infeasible', message: 'resize Infeasible: too big', transient: false },
    ]);
    expect(view.resize.Infeasible).toBe(1);
  });
});

describe('pod lines', () => {
  const cs = cloneSet({ status: { updatedReplicas: 2, updatedReadyReplicas: 1, readyReplicas: 2 } });
  const view = buildStatusView(
    cs,
    [
      pod('web-e', { gate: 'True', updatedInPlace: true }),
      pod('web-d', { revision: OLD }),
      pod('web-c', { gate: 'False', ready: false }),
      pod('web-b', { resize: 'Deferred', gate: 'True', updatedInPlace: true }),
      pod('web-a', { waiting: 'ImagePullBackOff', ready: false, revision: OLD }),
      pod('web-f', { unschedulable: true, ready: false }),
      pod('web-g', { terminating: true, revision: OLD, resize: 'InProgress' }),
    ],
    NOW,
  );
  const byName = (name: string) => view.pods.find((p) => p.name === name);

  it.each([
    [
      'an in-place updated pod is Done on the short update revision',
      'web-e',
      { revision: '7c9d5fbb8x', updated: true, ready: true, inPlace: 'Done', resize: '-' },
    ],
    [
      'a pod on the old revision has no in-place state',
      'web-d',
      { revision: '6d8f9c7b5q', updated: false, ready: true, inPlace: '-', resize: '-' },
    ],
    ['InPlaceUpdateReady False is Updating', 'web-c', { updated: true, ready: false, inPlace: 'Updating' }],
    [
      'a Deferred resize shows the kubelet message and how long',
      'web-b',
      { resize: 'Deferred', resizeDetail: "Node didn't have enough resource: cpu, for 5m" },
    ],
    [
      'a container that cannot start is a problem',
      'web-a',
      { problem: 'container main: ImagePullBackOff: back-off 10s restarting failed container' },
    ],
    [
      'an unschedulable pod says why',
      'web-f',
      { problem: 'Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.' },
    ],
    ['a terminating pod is marked', 'web-g', { terminating: true, problem: 'Terminating' }],
  ] as [string, string, Partial<PodLine>][])('%s', (_what, name, expected) => {
    expect(byName(name)).toMatchObject(expected);
  });

  it('orders pods needing attention first, then moving ones, then settled ones', () => {
    expect(view.pods.map((p) => p.name)).toEqual(['web-a', 'web-f', 'web-b', 'web-c', 'web-d', 'web-g', 'web-e']);
  });

  it('counts resizes of live pods only and warns about failing pods', () => {
    expect(view.resize).toEqual({ Proposed: 0, InProgress: 0, Deferred: 1, Infeasible: 0 });
    expect(view.warnings).toEqual([
      'pod web-a: container main: ImagePullBackOff: back-off 10s restarting failed container',
      'pod web-f: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.',
    ]);
  });
});

describe('rendering', () => {
  it.each([
    [5, 10, 10, '[#####-----]'],
    [0, 10, 10, '[----------]'],
    [10, 10, 10, '[##########]'],
    [1, 100, 10, '[#---------]'],
    [99, 100, 10, '[#########-]'],
    [0, 0, 10, '[##########]'],
    [2, 3, 20, '[#############-------]'],
  ])('progressBar(%d, %d, %d) = %s', (done, total, width, bar) => {
    expect(progressBar(done, total, width)).toBe(bar);
  });

  it.each([
    [45_000, '45s'],
    [150_000, '2m'],
    [3 * 3600_000, '3h'],
    [3 * 86400_000, '3d'],
  ])('formatAge(%d) = %s', (ms, text) => expect(formatAge(ms)).toBe(text));

  const tenPods = Array.from({ length: 10 }, (_, i) => pod(`web-${i}`, i < 5 ? {} : { revision: OLD, ready: i !== 9 }));
  const view: StatusView = buildStatusView(
    cloneSet({ replicas: 10, status: { updatedReplicas: 5, updatedReadyReplicas: 5, readyReplicas: 9 } }),
    tenPods,
    NOW,
  );

  it('renders the progress as updated and ready counts', () => {
    expect(renderProgress(view, 10)).toBe('[#####-----] 5/10 updated, 9/10 ready');
  });

  it('renders one summary line for logs', () => {
    expect(renderSummaryLine(view)).toBe(
      'web: [#####-----] 5/10 updated, 9/10 ready; progressing: waiting for rollout to finish: 5 of 10 pods updated',
    );
  });

  it('renders the full view with a pod table, capped at maxPods', () => {
    const text = renderStatus(view, { barWidth: 10, maxPods: 3 });
    expect(text[0]).toBe(
      'CloneSet shop/web  strategy InPlaceIfPossible  generation 2 (observed 2)  update revision 7c9d5fbb8x',
    );
    expect(text[1]).toBe('Progress  [#####-----] 5/10 updated, 9/10 ready');
    // Pods still to update come first; settled ones are the first dropped.
    expect(text.slice(3, 7)).toEqual([
      'POD    REVISION    UPDATED  READY  IN-PLACE  RESIZE  NOTE',
      'web-5  6d8f9c7b5q  no       yes    -         -',
      'web-6  6d8f9c7b5q  no       yes    -         -',
      'web-7  6d8f9c7b5q  no       yes    -         -',
    ]);
    expect(text).toContain('... and 7 more pod(s)');
    expect(text.at(-1)).toBe('Status: progressing: waiting for rollout to finish: 5 of 10 pods updated');
  });

  it('renders what blocks and the resize counts', () => {
    const blocked = buildStatusView(
      cloneSet({
        strategy: { resizeStrategy: { onInfeasible: 'Wait' } },
        status: { conditions: [cond('ResizeBlocked', 'True', 'Infeasible', 'web-a: Infeasible (too big)')] },
      }),
      [pod('web-a', { resize: 'Infeasible' }), pod('web-b'), pod('web-c')],
      NOW,
    );
    const text = renderStatus(blocked);
    expect(text).toContain('Resize    1 Infeasible');
    expect(text).toContain('Blocked:');
    expect(text).toContain('  ResizeBlocked (Infeasible): web-a: Infeasible (too big)');
    expect(text.find((l) => l.startsWith('web-a'))).toMatch(
      /Infeasible\s+Node didn't have enough capacity: cpu, requested: 500000, capacity: 4000, for 5m$/,
    );
    expect(text.at(-1)).toBe('Status: blocked: ResizeBlocked (Infeasible): web-a: Infeasible (too big)');
  });
});
