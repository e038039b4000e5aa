// An InPlaceStatefulSet as the engine reads it: each StatefulSet and Advanced StatefulSet field on
// its CloneSet namesake, with the kind's defaults and Advanced StatefulSet's rounding.
import { describe, expect, it } from '@jest/globals';
import { HIGHEST_ORDINAL_FIRST, statefulView } from '../../../../src/inplacestatefulset/pure/view.js';

const view = (spec: Record<string, unknown>): ReturnType<typeof statefulView> =>
  statefulView({
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'InPlaceStatefulSet',
    metadata: { name: 'db' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } } }, ...spec },
  });

describe("an InPlaceStatefulSet's view", () => {
  it('updates in place, one pod at a time, highest ordinal first, without surge, by default', () => {
    expect(view({ replicas: 3 }).spec.updateStrategy).toMatchObject({
      type: 'InPlaceIfPossible',
      partition: 0,
      maxUnavailable: 1,
      maxSurge: 0,
      paused: false,
      priorityStrategy: HIGHEST_ORDINAL_FIRST,
    });
  });

  it.each([
    [{ updateStrategy: { type: 'OnDelete' } }, { type: 'OnDelete' }],
    [{ updateStrategy: { rollingUpdate: { podUpdatePolicy: 'ReCreate' } } }, { type: 'ReCreate' }],
    [{ updateStrategy: { rollingUpdate: { paused: true, partition: 2 } } }, { paused: true, partition: 2 }],
    [
      { updateStrategy: { rollingUpdate: { inPlaceUpdateStrategy: { gracePeriodSeconds: 10 } } } },
      { inPlaceUpdateStrategy: { gracePeriodSeconds: 10 } },
    ],
    [
      { updateStrategy: { rollingUpdate: { unorderedUpdate: { priorityStrategy: { weightPriority: [] } } } } },
      { priorityStrategy: { weightPriority: [] } },
    ],
    [
      { updateStrategy: { resizeStrategy: { onInfeasible: 'Recreate' } } },
      { resizeStrategy: { onInfeasible: 'Recreate' } },
    ],
  ])('%j reads as %j', (spec, strategy) => {
    expect(view({ replicas: 3, ...spec }).spec.updateStrategy).toMatchObject(strategy);
  });

  it.each([
    ['50%', 3, 1],
    ['10%', 3, 1],
    ['100%', 3, 3],
    ['34%', 10, 3],
    [2, 10, 2],
  ])('maxUnavailable %j of %i replicas is %i pods (rounded down, at least 1)', (value, replicas, pods) => {
    const v = view({
      replicas,
      updateStrategy: { rollingUpdate: { maxUnavailable: value } },
      scaleStrategy: { maxUnavailable: value },
    });
    expect(v.spec.updateStrategy.maxUnavailable).toBe(pods);
    expect(v.spec.scaleStrategy?.maxUnavailable).toBe(pods);
  });

  it('takes rollingUpdate.minReadySeconds over the native field, and keeps the identity fields', () => {
    const v = view({
      minReadySeconds: 5,
      updateStrategy: { rollingUpdate: { minReadySeconds: 7 } },
      serviceName: 's',
      ordinals: { start: 2 },
    });
    expect(v.spec.minReadySeconds).toBe(7);
    expect(v.spec).toMatchObject({ serviceName: 's', ordinals: { start: 2 } });
    expect(view({ minReadySeconds: 5 }).spec.minReadySeconds).toBe(5);
  });
});
