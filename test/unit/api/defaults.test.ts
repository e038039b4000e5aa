// Tests for withDefaults: every default filled, strategy-dependent resize actions, user values
// kept, input never mutated.
import { describe, expect, it } from '@jest/globals';
import { defaultResizeAction, withDefaults } from '../../../src/api/defaults.js';
import type { CloneSet, CloneSetUpdateStrategy, ResizeAction, UpdateStrategyType } from '../../../src/api/types.js';

const minimal = (updateStrategy?: CloneSetUpdateStrategy): CloneSet => ({
  apiVersion: 'apps.tailor.dev/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'busybox:1' }] },
    },
    ...(updateStrategy === undefined ? {} : { updateStrategy }),
  },
});

describe('withDefaults', () => {
  it('fills every default of a minimal CloneSet', () => {
    const { spec } = withDefaults(minimal());
    expect(spec.replicas).toBe(1);
    expect(spec.revisionHistoryLimit).toBe(10);
    expect(spec.minReadySeconds).toBe(0);
    expect(spec.scaleStrategy).toEqual({});
    expect(spec.progressDeadlineSeconds).toBeUndefined();
    expect(spec.updateStrategy).toEqual({
      type: 'ReCreate',
      partition: 0,
      maxUnavailable: '20%',
      maxSurge: 0,
      paused: false,
      inPlaceUpdateStrategy: { gracePeriodSeconds: 0 },
      resizeStrategy: {
        deferredTimeoutSeconds: 300,
        inProgressTimeoutSeconds: 3600,
        onTimeout: 'Recreate',
        onInfeasible: 'Recreate',
      },
    });
  });

  it.each<[UpdateStrategyType, ResizeAction]>([
    ['ReCreate', 'Recreate'],
    ['InPlaceIfPossible', 'Recreate'],
    ['InPlaceOnly', 'Wait'],
  ])('defaults onTimeout and onInfeasible for %s to %s', (type, action) => {
    const { resizeStrategy } = withDefaults(minimal({ type })).spec.updateStrategy;
    expect(resizeStrategy.onTimeout).toBe(action);
    expect(resizeStrategy.onInfeasible).toBe(action);
    expect(defaultResizeAction(type)).toBe(action);
  });

  it('keeps every value the user set', () => {
    const cs = minimal({
      type: 'InPlaceIfPossible',
      partition: '50%',
      maxUnavailable: 2,
      maxSurge: '10%',
      paused: true,
      inPlaceUpdateStrategy: { gracePeriodSeconds: 5 },
      resizeStrategy: {
        deferredTimeoutSeconds: 0,
        inProgressTimeoutSeconds: 60,
        onTimeout: 'Wait',
        onInfeasible: 'Wait',
      },
    });
    cs.spec.replicas = 0;
    cs.spec.minReadySeconds = 3;
    cs.spec.revisionHistoryLimit = 0;
    cs.spec.progressDeadlineSeconds = 600;
    cs.spec.scaleStrategy = { podsToDelete: ['web-a'], maxUnavailable: 1 };
    const { spec } = withDefaults(cs);
    expect(spec.replicas).toBe(0);
    expect(spec.minReadySeconds).toBe(3);
    expect(spec.revisionHistoryLimit).toBe(0);
    expect(spec.progressDeadlineSeconds).toBe(600);
    expect(spec.scaleStrategy).toEqual({ podsToDelete: ['web-a'], maxUnavailable: 1 });
    expect(spec.updateStrategy).toEqual(cs.spec.updateStrategy);
  });

  it('fills only the missing fields of a partly written resizeStrategy', () => {
    const { resizeStrategy } = withDefaults(
      minimal({ type: 'InPlaceOnly', resizeStrategy: { inProgressTimeoutSeconds: 120 } }),
    ).spec.updateStrategy;
    expect(resizeStrategy).toEqual({
      deferredTimeoutSeconds: 300,
      inProgressTimeoutSeconds: 120,
      onTimeout: 'Wait',
      onInfeasible: 'Wait',
    });
  });

  it('does not mutate its input', () => {
    const cs = minimal({ type: 'InPlaceOnly' });
    const before = structuredClone(cs);
    withDefaults(cs);
    expect(cs).toEqual(before);
  });

  it('shares no mutable object with its input', () => {
    const cs = minimal({ type: 'InPlaceIfPossible', resizeStrategy: {} });
    const out = withDefaults(cs);
    out.spec.template.metadata!.labels!.app = 'changed';
    out.spec.selector.matchLabels!.app = 'changed';
    out.spec.updateStrategy.resizeStrategy.deferredTimeoutSeconds = 1;
    expect(cs.spec.template.metadata?.labels?.app).toBe('web');
    expect(cs.spec.selector.matchLabels?.app).toBe('web');
    expect(cs.spec.updateStrategy?.resizeStrategy).toEqual({});
  });

  it('keeps metadata and status as they were', () => {
    const cs = minimal();
    cs.status = { replicas: 3, observedGeneration: 2 };
    const out = withDefaults(cs);
    expect(out.metadata).toEqual(cs.metadata);
    expect(out.status).toEqual(cs.status);
  });

  it('is idempotent', () => {
    const once = withDefaults(minimal({ type: 'InPlaceOnly' }));
    expect(withDefaults(once)).toEqual(once);
  });
});
