// Issue 20.16: a CloneSet refused by a quota or limit range is woken when that changes, and only then.
import { describe, expect, it } from '@jest/globals';
import {
  trimAdmissionLimit,
  wakeRefusedOnLimitChange,
  writesRefused,
  type AdmissionLimit,
} from '../../../../src/workload/pure/refusal-handlers.js';
import type { WireCloneSet } from '../../../../src/api/wire.js';

const quota = (rv: string, hard: Record<string, string>, used: Record<string, string> = {}): AdmissionLimit =>
  trimAdmissionLimit({
    metadata: { name: 'q', namespace: 'team-a', resourceVersion: rv },
    spec: { hard },
    status: { used },
  } as AdmissionLimit);

function woken(change: (h: ReturnType<typeof wakeRefusedOnLimitChange>) => void): string[] {
  const keys: string[] = [];
  const handler = wakeRefusedOnLimitChange({ add: (k) => void keys.push(k) }, (ns) =>
    ns === 'team-a' ? ['team-a/web'] : [],
  );
  change(handler);
  return keys;
}

describe('a change of admission limits wakes the refused CloneSets of its namespace', () => {
  it.each([
    [
      'a new quota',
      (h: ReturnType<typeof wakeRefusedOnLimitChange>) => h.onAdd?.(quota('1', { pods: '2' })),
      ['team-a/web'],
    ],
    [
      'a deleted quota',
      (h: ReturnType<typeof wakeRefusedOnLimitChange>) => h.onDelete?.(quota('1', { pods: '2' })),
      ['team-a/web'],
    ],
    [
      'a raised quota',
      (h: ReturnType<typeof wakeRefusedOnLimitChange>) =>
        h.onUpdate?.(quota('1', { pods: '2' }), quota('2', { pods: '10' })),
      ['team-a/web'],
    ],
    [
      'a quota whose usage alone moved',
      (h: ReturnType<typeof wakeRefusedOnLimitChange>) =>
        h.onUpdate?.(quota('1', { pods: '2' }, { pods: '1' }), quota('2', { pods: '2' }, { pods: '2' })),
      [],
    ],
    [
      'a quota of another namespace',
      (h: ReturnType<typeof wakeRefusedOnLimitChange>) =>
        h.onDelete?.({ metadata: { name: 'q', namespace: 'team-b' }, spec: {} }),
      [],
    ],
  ])('%s', (_, change, expected) => {
    expect(woken(change)).toEqual(expected);
  });

  it('the cached quota keeps its spec and drops its status', () => {
    expect(quota('1', { pods: '2' }, { pods: '1' })).toEqual({
      metadata: { name: 'q', namespace: 'team-a', resourceVersion: '1' },
      spec: { hard: { pods: '2' } },
    });
  });
});

describe('writesRefused', () => {
  const cs = (type: string, status: string, reason: string): WireCloneSet =>
    ({ status: { conditions: [{ type, status, reason, message: 'm' }] } }) as unknown as WireCloneSet;
  it.each([
    ['FailedScale', 'True', 'ApiRefused', true],
    ['FailedUpdate', 'True', 'ApiRejected', true],
    ['FailedScale', 'False', 'ApiRefused', false],
    ['ResizeBlocked', 'True', 'Infeasible', false],
    ['FailedUpdate', 'True', 'NotInPlaceUpdatable', false],
  ])('%s=%s (%s) is a refusal: %s', (type, status, reason, expected) => {
    expect(writesRefused(cs(type, status, reason))).toBe(expected);
  });
});
