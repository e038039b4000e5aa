// Which Kruise Rollout drives a workload, and the line `kubectl tailor status` shows for it (issue 44).
import { describe, expect, it } from '@jest/globals';
import { driverLine, driverOf, type RolloutDriver } from '../../../../src/cli/pure/driver.js';

const rollout = (name: string, ref: Record<string, unknown>, status?: Record<string, unknown>): unknown => ({
  metadata: { name },
  spec: {
    workloadRef: ref,
    strategy: { canary: { steps: [{ replicas: 1, pause: {} }, { replicas: '50%' }, { replicas: '100%' }] } },
  },
  ...(status ? { status } : {}),
});
const IPSTS = { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'InPlaceStatefulSet', name: 'web' };
const paused = { phase: 'Progressing', canaryStatus: { currentStepIndex: 1, currentStepState: 'StepPaused' } };

describe('driverOf: the Rollout whose workloadRef names the workload', () => {
  it.each<[string, unknown[], RolloutDriver | undefined]>([
    ['none', [], undefined],
    [
      'one naming it, paused at its first batch',
      [rollout('r', IPSTS, paused)],
      { name: 'r', phase: 'Progressing', step: 1, steps: 3, stepReplicas: '1', state: 'StepPaused' },
    ],
    ['one naming another set', [rollout('r', { ...IPSTS, name: 'db' }, paused)], undefined],
    [
      'one naming a kind of another group',
      [rollout('r', { ...IPSTS, apiVersion: 'apps.kruise.io/v1beta1' })],
      undefined,
    ],
    [
      'a malformed one beside the right one',
      [{ spec: 7 }, rollout('r', IPSTS)],
      { name: 'r', phase: 'Initial', step: 0, steps: 3, stepReplicas: undefined, state: '' },
    ],
  ])('%s', (_name, rollouts, expected) => {
    expect(driverOf(rollouts, 'InPlaceStatefulSet', 'web')).toEqual(expected);
  });
});

describe('driverLine', () => {
  const base: RolloutDriver = {
    name: 'web',
    phase: 'Progressing',
    step: 1,
    steps: 3,
    stepReplicas: '1',
    state: 'StepPaused',
  };
  it.each<[string, RolloutDriver, string]>([
    [
      'paused at a batch of one pod',
      base,
      'Kruise Rollout web: Progressing, batch 1 of 3 (1 pod), StepPaused: approve it to go on',
    ],
    [
      'upgrading a percentage batch',
      { ...base, step: 2, stepReplicas: '50%', state: 'StepUpgrade' },
      'Kruise Rollout web: Progressing, batch 2 of 3 (50%), StepUpgrade',
    ],
    ['healthy', { ...base, phase: 'Healthy', step: 3, state: 'Completed' }, 'Kruise Rollout web: Healthy'],
  ])('%s', (_name, driver, line) => {
    expect(driverLine(driver)).toBe(line);
  });
});
