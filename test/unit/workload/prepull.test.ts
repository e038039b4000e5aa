import { describe, expect, it } from '@jest/globals';
import type { PulledImages } from '../../../src/api/prepull.js';
import { ANNOTATION_PULLED_IMAGES } from '../../../src/api/prepull.js';
import type { PrePullInput } from '../../../src/workload/pure/plan-input.js';
import { planReconcile } from '../../../src/workload/pure/planner.js';
import { trimNodeForPrePull, wakeOnPrePullReport } from '../../../src/workload/prepull-nodes.js';
import { cloneSet, intentsOf, NEW, NOW, OLD, pod, revisionTemplates } from '../../support/fixtures/planner-fixtures.js';
import { buildPod, cloneSetOwner } from '../../support/fixtures/pods.js';
import { CLONESET_OWNER } from '../../../src/api/owner.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const templates = revisionTemplates('image');
const pods = ['p0', 'p1', 'p2'].map((name) => pod({ name }, templates));

function planWith(report: PulledImages | undefined, now = NOW): ReturnType<typeof planReconcile> {
  const prePull: PrePullInput = {
    reports: new Map(report === undefined ? [] : [['node-1', report]]),
    revisionCreatedAt: new Map([[NEW, NOW - 60_000]]),
    timeoutMs: 120_000,
  };
  return planReconcile({
    cloneSet: cloneSet({ replicas: 3, maxUnavailable: 2, change: 'image' }),
    pods,
    revisions: { updateRevision: NEW, currentRevision: OLD, templates },
    now,
    resizeBackend: 'kubelet',
    nodeEvidence: new Map(),
    prePull,
  });
}

describe('the planner holds drains for new images while the node pulls them', () => {
  it.each<[string, PulledImages | undefined, number, number, string[]]>([
    ['no agent report on the node: drains the budget at once', undefined, NOW, 2, []],
    ['image Pulled: drains the budget', { 'busybox:v2': { state: 'Pulled', since: iso(NOW - 5_000) } }, NOW, 2, []],
    [
      'image Pulling: drains nothing yet, wakes at the timeout',
      { 'busybox:v2': { state: 'Pulling', since: iso(NOW - 5_000) } },
      NOW,
      0,
      [],
    ],
    [
      'image Pulling past the timeout: drains, a Warning per pod',
      { 'busybox:v2': { state: 'Pulling', since: iso(NOW - 200_000) } },
      NOW,
      2,
      ['ImagePrePullTimedOut', 'ImagePrePullTimedOut'],
    ],
    [
      'image Failed: drains, a Warning per pod with the message',
      { 'busybox:v2': { state: 'Failed', since: iso(NOW - 5_000), message: 'manifest unknown' } },
      NOW,
      2,
      ['ImagePrePullFailed', 'ImagePrePullFailed'],
    ],
  ])('%s', (_name, report, now, drains, warnings) => {
    const plan = planWith(report, now);
    expect(intentsOf(plan, 'drain')).toHaveLength(drains);
    expect(plan.events.filter((e) => e.type === 'Warning').map((e) => e.reason)).toEqual(warnings);
    if (drains === 0) expect(plan.wakeAt).toBe(NOW - 5_000 + 120_000);
  });
});

describe("the controller's Node cache and wakers", () => {
  it('keeps a Node as its name and report only', () => {
    const node = {
      metadata: {
        name: 'n',
        resourceVersion: '7',
        labels: { zone: 'a' },
        annotations: { [ANNOTATION_PULLED_IMAGES]: '{}', other: 'x' },
      },
      status: { capacity: { cpu: '4' } },
    };
    expect(trimNodeForPrePull(node)).toEqual({
      metadata: { name: 'n', resourceVersion: '7', annotations: { [ANNOTATION_PULLED_IMAGES]: '{}' } },
    });
  });

  it.each<[string, Record<string, string> | undefined, Record<string, string> | undefined, string[]]>([
    [
      'a report that changes wakes the CloneSets of the pods on the node',
      { [ANNOTATION_PULLED_IMAGES]: '{}' },
      { [ANNOTATION_PULLED_IMAGES]: '{"a":1}' },
      ['ns/web'],
    ],
    ['a report that goes wakes them too', { [ANNOTATION_PULLED_IMAGES]: '{}' }, undefined, ['ns/web']],
    [
      'any other change of the node wakes nothing',
      { [ANNOTATION_PULLED_IMAGES]: '{}', x: '1' },
      { [ANNOTATION_PULLED_IMAGES]: '{}', x: '2' },
      [],
    ],
  ])('%s', (_name, before, after, woken) => {
    const keys: string[] = [];
    const onNode = [
      buildPod({ name: 'a', ownerReferences: [cloneSetOwner()] }),
      buildPod({ name: 'b', ownerReferences: [] }),
    ];
    const handler = wakeOnPrePullReport(
      { add: (key: string) => keys.push(key) },
      (node) => (node === 'n' ? onNode : []),
      CLONESET_OWNER,
    );
    handler.onUpdate?.(
      { metadata: { name: 'n', annotations: before } },
      { metadata: { name: 'n', annotations: after } },
    );
    expect(keys).toEqual(woken);
  });
});
