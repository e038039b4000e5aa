import { describe, expect, it } from '@jest/globals';
import type { CloneSetStatus } from '../../../src/api/types.js';
import { statusChangeIsUrgent } from '../../../src/cloneset/status.js';

const base: CloneSetStatus = {
  observedGeneration: 3,
  replicas: 10,
  readyReplicas: 9,
  updatedReplicas: 4,
  currentRevision: 'web-a',
  updateRevision: 'web-b',
  collisionCount: 0,
  labelSelector: 'app=web',
  resize: { resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 0 },
  conditions: [
    {
      type: 'Progressing',
      status: 'True',
      reason: 'CloneSetUpdated',
      message: 'CloneSet is progressing',
      lastUpdateTime: '2026-01-01T00:00:00Z',
    },
  ],
};
const progressing = (over: Record<string, string>) => [{ ...base.conditions![0]!, ...over }];

const rows: [string, Partial<CloneSetStatus>, boolean][] = [
  ['ready and updated counts moving can wait', { readyReplicas: 10, updatedReplicas: 5 }, false],
  ["Progressing's last-progress clock can wait", { conditions: progressing({ lastUpdateTime: '2026-01-01T00:00:05Z' }) }, false],
  ['status.resize counts can wait', { resize: { resizing: 3, proposed: 0, inProgress: 3, deferred: 0, infeasible: 0 } }, false],
  ['a newly observed generation goes out at once', { observedGeneration: 4 }, true],
  ['a new update revision goes out at once', { updateRevision: 'web-c' }, true],
  ['the rollout completing (currentRevision) goes out at once', { currentRevision: 'web-b' }, true],
  ['a collision goes out at once', { collisionCount: 1 }, true],
  [
    'Progressing turning to CloneSetAvailable goes out at once',
    { conditions: progressing({ reason: 'CloneSetAvailable', message: 'CloneSet is available' }) },
    true,
  ],
  [
    'a ProgressDeadlineExceeded goes out at once',
    { conditions: progressing({ status: 'False', reason: 'ProgressDeadlineExceeded' }) },
    true,
  ],
  [
    'a new failure condition goes out at once',
    { conditions: [...base.conditions!, { type: 'FailedScale', status: 'True', reason: 'ApiRefused', message: 'create pods: 403' }] },
    true,
  ],
];

describe('which status changes are written at once', () => {
  it.each(rows)('%s', (_name, change, urgent) => {
    expect(statusChangeIsUrgent(base, { ...base, ...change })).toBe(urgent);
  });

  it('treats a CloneSet without status as urgent', () => {
    expect(statusChangeIsUrgent(undefined, base)).toBe(true);
  });

  it('treats a changed message of a blocking condition as urgent', () => {
    const blocked = (message: string): CloneSetStatus => ({
      ...base,
      conditions: [...base.conditions!, { type: 'RolloutBlocked', status: 'True', reason: 'MaxUnavailable', message }],
    });
    expect(statusChangeIsUrgent(blocked('1 pod(s) out of service: a'), blocked('1 pod(s) out of service: b'))).toBe(true);
  });
});
