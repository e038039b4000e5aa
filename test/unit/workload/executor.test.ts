import { describe, expect, it } from '@jest/globals';
import type { InPlaceUpdater } from '../../../src/inplace/engine.js';
import { IN_PLACE_WRITES_AT_ONCE, PlanExecutor } from '../../../src/workload/executor.js';
import type { Plan } from '../../../src/workload/pure/round-plan.js';
import type { EventRecorder } from '../../../src/runtime/events.js';
import type { ScaleExpectations } from '../../../src/runtime/expectations.js';
import type { KubeClient } from '../../../src/runtime/kube-client.js';
import { OLD, cloneSet, pod } from '../../support/fixtures/planner-fixtures.js';

/** An in-place updater that records which pods it touched, at most `concurrent` at once observed. */
function recordingUpdater(): { updater: InPlaceUpdater; touched: string[]; maxInFlight: () => number } {
  const touched: string[] = [];
  let inFlight = 0;
  let max = 0;
  const write = async (name: string): Promise<void> => {
    inFlight++;
    max = Math.max(max, inFlight);
    await new Promise((r) => setTimeout(r, 5));
    touched.push(name);
    inFlight--;
  };
  const updater = {
    drain: (_cs: unknown, p: { metadata?: { name?: string } }) => write(p.metadata?.name ?? ''),
  } as unknown as InPlaceUpdater;
  return { updater, touched, maxInFlight: () => max };
}

const events = { event: () => undefined, batch: () => undefined } as unknown as EventRecorder;
const planOf = (n: number): Plan => ({
  intents: Array.from({ length: n }, (_, i) => ({
    kind: 'drain' as const,
    pod: pod({ name: `p${i}`, revision: OLD }),
    message: 'update',
  })),
  events: [],
  status: {},
  budget: { total: n, used: n },
  limits: { partition: 0, maxSurge: 0, maxUnavailable: n, scaleMaxUnavailable: n },
  resizeDurations: [],
  instanceIdsInUse: new Set(),
});

describe('PlanExecutor', () => {
  it('writes to many pods IN_PLACE_WRITES_AT_ONCE at a time and touches every one', async () => {
    const { updater, touched, maxInFlight } = recordingUpdater();
    const executor = new PlanExecutor({
      client: {} as KubeClient,
      plural: 'clonesets',
      events,
      scaleExpectations: {} as ScaleExpectations,
      inPlace: { updater },
    });
    const failures = await executor.execute(cloneSet({ replicas: 80 }), 'ns/web', planOf(80));
    expect(failures).toEqual([]);
    expect(touched).toHaveLength(80);
    expect(maxInFlight()).toBe(IN_PLACE_WRITES_AT_ONCE);
  });

  it('starts no write once its signal has aborted (leadership lost)', async () => {
    const { updater, touched } = recordingUpdater();
    const executor = new PlanExecutor({
      client: {} as KubeClient,
      plural: 'clonesets',
      events,
      scaleExpectations: {} as ScaleExpectations,
      inPlace: { updater },
    });
    const lost = new AbortController();
    lost.abort(new Error('lease lost'));
    await expect(executor.execute(cloneSet({ replicas: 3 }), 'ns/web', planOf(3), lost.signal)).rejects.toThrow(
      'lease lost',
    );
    expect(touched).toEqual([]);
  });
});
