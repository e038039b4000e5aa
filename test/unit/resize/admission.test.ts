// Issue 21: on Kubernetes ≥ 1.36 the API server refuses a resize the node can never fit (403 with
// a NodeCapacity cause). That is Infeasible, recorded on the pod with its update, and the pod's
// resize state reads it; a kubelet verdict stays current when the image patch raised the generation.
import { describe, expect, it } from '@jest/globals';
import { infeasibleAtAdmission } from '../../../src/resize/admission.js';
import { podResizeView } from '../../../src/resize/state.js';
import { withResizeOutcome } from '../../../src/inplace/pure/plan.js';
import type { Pod } from '../../../src/api/wire.js';
import { guaranteed, makePod } from '../../support/fixtures/kubelet-pods.js';

const NOW = Date.parse('2026-11-23T10:00:00Z');
const capacityMessage =
  'pods "web-abcde" is forbidden: node didn\'t have enough allocatable resources: cpu, requested: 64000, allocatable: 2000';

describe('infeasibleAtAdmission', () => {
  it.each([
    [
      '403 NodeCapacity',
      403,
      'NodeCapacity',
      { cause: 'NodeCapacity', message: capacityMessage, at: '2026-11-23T10:00:00Z' },
    ],
    [
      '403 UnsupportedPlatform',
      403,
      'UnsupportedPlatform',
      { cause: 'UnsupportedPlatform', message: capacityMessage, at: '2026-11-23T10:00:00Z' },
    ],
    ['403 without a cause (RBAC, "not yet ready")', 403, undefined, undefined],
    ['422 Invalid', 422, 'FieldValueInvalid', undefined],
    ['409 Conflict', 409, undefined, undefined],
    ['no answer', 0, undefined, undefined],
  ])('%s', (_, statusCode, cause, expected) => {
    const status = { message: capacityMessage, details: { causes: cause ? [{ reason: cause }] : [] } };
    expect(infeasibleAtAdmission({ statusCode, status }, NOW)).toEqual(expected);
  });
});

/** A pod updated in place to `revision` whose update state says `extra`. */
function updated(pod: Pod, revision: string, labelled: string, extra: Record<string, unknown>): Pod {
  const patch = withResizeOutcome(
    {
      metadata: {
        annotations: {
          'apps.tailor.dev/inplace-update-state': JSON.stringify({
            revision,
            updateTimestamp: '2026-11-23T09:59:59Z',
            changed: { app: ['resources'] },
          }),
        },
      },
    },
    extra,
  ) as { metadata: { annotations: Record<string, string> } };
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      labels: { 'controller-revision-hash': labelled },
      annotations: patch.metadata.annotations,
    },
  };
}

const refusal = { cause: 'NodeCapacity', message: capacityMessage, at: '2026-11-23T10:00:00Z' };
const unchanged = makePod({
  form: 'conditions',
  generation: 1,
  observedGeneration: 1,
  containers: [{ name: 'app', spec: guaranteed('100m', '128Mi'), actual: guaranteed('100m', '128Mi') }],
});

describe('podResizeView reads a refusal and the resize generation from the update state', () => {
  it('a resize refused at admission for the pod’s current revision is Infeasible since it was refused', () => {
    expect(podResizeView(updated(unchanged, 'web-new', 'web-new', { refusal }))).toEqual({
      state: 'Infeasible',
      reason: 'NodeCapacity',
      message: `refused by the API server: ${capacityMessage}`,
      since: '2026-11-23T10:00:00Z',
      done: false,
    });
  });

  it('a refusal recorded for an earlier revision says nothing about the current one', () => {
    expect(podResizeView(updated(unchanged, 'web-old', 'web-new', { refusal }))).toEqual({ done: true });
  });

  it('an Infeasible verdict on the generation the resize produced stays current after the image patch raised it', () => {
    const pod = makePod({
      form: 'conditions',
      generation: 3,
      observedGeneration: 3,
      containers: [{ name: 'app', spec: guaranteed('64', '128Mi'), actual: guaranteed('100m', '128Mi') }],
      resizeConditions: [
        {
          type: 'PodResizePending',
          reason: 'Infeasible',
          message: 'Node didn’t have enough capacity',
          observedGeneration: 2,
        },
      ],
    });
    expect(podResizeView(updated(pod, 'web-new', 'web-new', { generation: 2 }))).toMatchObject({
      state: 'Infeasible',
      done: false,
    });
    // Without the record, generation 3 > the verdict's 2 reads as not yet judged (the old behaviour, kept for older pods).
    expect(podResizeView(pod)).toMatchObject({ state: 'Proposed', reason: 'NotObserved' });
  });
});
