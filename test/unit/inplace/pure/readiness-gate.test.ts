// The in-place readiness gate: a template gets it once, a pod is held out of service only while
// its condition is False, a pod created with the gate waits for its first condition, and the
// engine's writes name the gate.
import { describe, expect, test } from '@jest/globals';
import { CONDITION_INPLACE_UPDATE_READY } from '../../../../src/api/types.js';
import type { Pod } from '../../../../src/api/wire.js';
import {
  heldByReadinessGate,
  needsReadinessGateCondition,
  readinessGateCondition,
  readinessGateWrite,
  withReadinessGate,
} from '../../../../src/inplace/pure/readiness-gate.js';
import { buildPod } from '../../../support/fixtures/pods.js';

const GATE = { conditionType: CONDITION_INPLACE_UPDATE_READY };
const OTHER_GATE = { conditionType: 'example.com/Warm' };
const gateCondition = (status: string): { type: string; status: string } => ({
  type: CONDITION_INPLACE_UPDATE_READY,
  status,
});

describe('withReadinessGate', () => {
  test.each<[string, { conditionType: string }[] | undefined, { conditionType: string }[]]>([
    ['a template without gates gets the gate', undefined, [GATE]],
    ["a template's own gates are kept, the gate after them", [OTHER_GATE], [OTHER_GATE, GATE]],
    ['a template that names the gate keeps it once', [GATE, OTHER_GATE], [GATE, OTHER_GATE]],
  ])('%s', (_, gates, want) => {
    const spec = { containers: [{ name: 'app' }], ...(gates ? { readinessGates: gates } : {}) };
    expect(withReadinessGate(spec)).toEqual({ containers: [{ name: 'app' }], readinessGates: want });
  });

  test('leaves the spec it was given as it was', () => {
    const spec = { containers: [{ name: 'app' }], readinessGates: [OTHER_GATE] };
    withReadinessGate(spec);
    expect(spec.readinessGates).toEqual([OTHER_GATE]);
  });
});

describe('the predicates on a pod', () => {
  const withGate = (conditions: { type: string; status: string }[]): Pod =>
    buildPod({ containers: [{ name: 'app' }], spec: { readinessGates: [GATE] }, conditions });
  test.each<[string, Pod, { held: boolean; needsCondition: boolean; status: string | undefined }]>([
    [
      'created with the gate, condition not written yet',
      withGate([]),
      { held: false, needsCondition: true, status: undefined },
    ],
    [
      'gate False: an in-place update holds it',
      withGate([gateCondition('False')]),
      { held: true, needsCondition: false, status: 'False' },
    ],
    [
      'gate True: in service',
      withGate([gateCondition('True')]),
      { held: false, needsCondition: false, status: 'True' },
    ],
    [
      'a pod without the gate (created before Tailor, or by hand)',
      buildPod({ containers: [{ name: 'app' }], conditions: [{ type: 'Ready', status: 'True' }] }),
      { held: false, needsCondition: false, status: undefined },
    ],
    [
      'another gate False does not hold it',
      buildPod({
        spec: { readinessGates: [OTHER_GATE, GATE] },
        conditions: [{ type: 'example.com/Warm', status: 'False' }],
      }),
      { held: false, needsCondition: true, status: undefined },
    ],
  ])('%s', (_, pod, want) => {
    expect({
      held: heldByReadinessGate(pod),
      needsCondition: needsReadinessGateCondition(pod),
      status: readinessGateCondition(pod)?.status,
    }).toEqual(want);
  });
});

describe('readinessGateWrite', () => {
  test.each<[string, Parameters<typeof readinessGateWrite>, Record<string, string>]>([
    [
      'the first True after creation carries no reason',
      ['True', '2026-01-01T00:00:00Z'],
      { type: CONDITION_INPLACE_UPDATE_READY, status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
    [
      'a drain says why',
      ['False', '2026-01-01T00:00:00Z', { reason: 'StartInPlaceUpdate', message: 'image of app' }],
      {
        type: CONDITION_INPLACE_UPDATE_READY,
        status: 'False',
        reason: 'StartInPlaceUpdate',
        message: 'image of app',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  ])('%s', (_, args, want) => {
    expect(readinessGateWrite(...args)).toEqual(want);
  });
});
