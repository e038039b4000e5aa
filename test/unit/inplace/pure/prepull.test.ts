import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { PulledImages } from '../../../../src/api/prepull.js';
import { ACK_GRACE_MS, prePullVerdict, type PrePullTarget } from '../../../../src/inplace/pure/prepull.js';
import { planInPlaceUpdate, type UpdateTarget } from '../../../../src/inplace/pure/plan.js';
import type { PodTemplate } from '../../../../src/api/wire.js';
import { CONDITION_INPLACE_UPDATE_READY, LABEL_CONTROLLER_REVISION_HASH } from '../../../../src/api/types.js';
import { buildPod, runningStatus } from '../../../support/fixtures/pods.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (seconds: number): number => T0 + seconds * 1000;
const iso = (seconds: number): string => new Date(at(seconds)).toISOString().replace(/\.\d+Z$/, 'Z');
const TIMEOUT = 120_000;
const target = (report: PulledImages | undefined, revisionCreatedAt: number | 'unknown' = at(0)): PrePullTarget => ({
  report,
  revisionCreatedAt: revisionCreatedAt === 'unknown' ? undefined : revisionCreatedAt,
  timeoutMs: TIMEOUT,
});

describe('prePullVerdict: a drain for new images waits for the node to have them, within bounds', () => {
  it.each<[string, PulledImages | undefined, number | 'unknown', number, string]>([
    ['no report: no agent pre-pulls on the node, drain at once', undefined, at(0), at(1), 'drain'],
    ['Pulled: drain at once', { 'img:v2': { state: 'Pulled', since: iso(0) } }, at(0), at(1), 'drain'],
    [
      'Pulling: wait until the pull ends or times out',
      { 'img:v2': { state: 'Pulling', since: iso(0) } },
      at(0),
      at(1),
      `wait ${at(120)}`,
    ],
    [
      'Pulling since a time the controller has not reached (clock skew): counts from now',
      { 'img:v2': { state: 'Pulling', since: iso(3600) } },
      at(0),
      at(1),
      `wait ${at(121)}`,
    ],
    [
      'Pulling past the timeout: drain, reported',
      { 'img:v2': { state: 'Pulling', since: iso(0) } },
      at(0),
      at(121),
      'drain ImagePrePullTimedOut',
    ],
    [
      'Failed: drain, reported with the runtime message',
      { 'img:v2': { state: 'Failed', since: iso(0), message: 'not found' } },
      at(0),
      at(1),
      'drain ImagePrePullFailed',
    ],
    ['not listed yet, revision new: wait for the agent to list it', {}, at(0), at(1), `wait ${at(0) + ACK_GRACE_MS}`],
    [
      'not listed yet, revision not in the cache yet: wait from now',
      {},
      'unknown',
      at(1),
      `wait ${at(1) + ACK_GRACE_MS}`,
    ],
    [
      'not listed past the grace: the agent is not pulling it, drain, reported',
      {},
      at(0),
      at(6),
      'drain ImagePrePullTimedOut',
    ],
  ])('%s', (_name, report, createdAt, now, expected) => {
    const verdict = prePullVerdict(['img:v2'], target(report, createdAt), now);
    const shown = verdict.wait
      ? `wait ${verdict.untilMs}`
      : ['drain', ...verdict.notPrePulled.map((n) => n.reason)].join(' ');
    expect(shown).toBe(expected);
  });

  it('waits for the earliest deadline of several images still pulling', () => {
    const report: PulledImages = {
      a: { state: 'Pulling', since: iso(10) },
      b: { state: 'Pulling', since: iso(0) },
      c: { state: 'Pulled', since: iso(0) },
    };
    expect(prePullVerdict(['a', 'b', 'c'], target(report), at(5))).toEqual({ wait: true, untilMs: at(120) });
  });

  it('never waits past the timeout of the last pull, whatever the report says (property)', () => {
    const state = fc.constantFrom<'Pulling' | 'Pulled' | 'Failed'>('Pulling', 'Pulled', 'Failed');
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.record({ state, since: fc.integer({ min: 0, max: 600 }) })),
        fc.integer({ min: 0, max: 1000 }),
        (entries, nowSeconds) => {
          const report: PulledImages = Object.fromEntries(
            Object.entries(entries).map(([k, v]) => [k, { state: v.state, since: iso(v.since) }]),
          );
          const verdict = prePullVerdict(['a', 'b', 'c'], target(report), at(nowSeconds));
          if (!verdict.wait) return;
          expect(verdict.untilMs).toBeGreaterThan(at(nowSeconds));
          expect(verdict.untilMs).toBeLessThanOrEqual(Math.max(at(0) + ACK_GRACE_MS, at(600) + TIMEOUT));
        },
      ),
    );
  });
});

describe('planInPlaceUpdate with a pre-pull', () => {
  const v1: PodTemplate = { spec: { containers: [{ name: 'c', image: 'img:v1' }] } };
  const v2: PodTemplate = { spec: { containers: [{ name: 'c', image: 'img:v2' }] } };
  const ready = (): ReturnType<typeof buildPod> =>
    buildPod({
      labels: { [LABEL_CONTROLLER_REVISION_HASH]: 'r1' },
      containers: [{ name: 'c', image: 'img:v1' }],
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: CONDITION_INPLACE_UPDATE_READY, status: 'True' },
      ],
      containerStatuses: [runningStatus('c', { image: 'img:v1' })],
    });
  const update = (
    report: PulledImages | undefined,
    now: number,
    podTemplate = v1,
    targetTemplate = v2,
  ): UpdateTarget => ({
    strategy: 'InPlaceIfPossible',
    gracePeriodSeconds: 0,
    podTemplate,
    targetRevision: 'r2',
    targetTemplate,
    resize: { supported: true },
    prePull: target(report),
    now,
  });

  it('keeps a pod in service while its node pulls the new image', () => {
    expect(planInPlaceUpdate(ready(), update({ 'img:v2': { state: 'Pulling', since: iso(0) } }, at(3)))).toEqual({
      kind: 'wait',
      untilMs: at(120),
    });
  });

  it('drains once the node has the image', () => {
    expect(planInPlaceUpdate(ready(), update({ 'img:v2': { state: 'Pulled', since: iso(0) } }, at(3))).kind).toBe(
      'drain',
    );
  });

  it('drains after the timeout and names the image it did not wait for', () => {
    const step = planInPlaceUpdate(ready(), update({ 'img:v2': { state: 'Pulling', since: iso(0) } }, at(200)));
    expect(step).toMatchObject({ kind: 'drain', notPrePulled: [{ image: 'img:v2', reason: 'ImagePrePullTimedOut' }] });
  });

  it('does not hold a change without new images (a restart) for the pre-pull', () => {
    const restart: PodTemplate = {
      metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': 'now' } },
      spec: v1.spec,
    };
    const step = planInPlaceUpdate(ready(), update({}, at(1), v1, restart));
    expect(step.kind).not.toBe('wait');
  });
});
