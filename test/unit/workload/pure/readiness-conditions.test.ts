// Reconciling and Stalled, as kstatus reads them (decision 22): a table of the states issue 32
// walks one CloneSet through (created, rolling out, done, held by a partition, paused, an
// unpullable image past progressDeadlineSeconds) and the others that move or block (scale up and
// down, resizes, an Infeasible resize under InPlaceOnly, refused creates), plus properties: never
// both True, both always present, deciding twice changes nothing, Kruise's conditions untouched.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { CloneSetCondition, CloneSetStatus } from '../../../../src/api/types.js';
import {
  refusalStallsAt,
  decideReadiness,
  readinessFacts,
  withReadiness,
  type ReadinessFacts,
} from '../../../../src/workload/pure/readiness-conditions.js';
import { withDefaults } from '../../../../src/api/defaults.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const facts = (over: Partial<ReadinessFacts> = {}): ReadinessFacts => ({
  replicas: 3,
  paused: false,
  onDelete: false,
  resizeWaitsOnInfeasible: false,
  ...over,
});
const cond = (type: string, status: 'True' | 'False', reason: string, message = ''): CloneSetCondition => ({
  type,
  status,
  reason,
  message,
});
const noResize = { resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 0 };

/** A status of 3 desired pods: `updated` at r2 (of them `updatedAvailable` available), the rest at r1 and available. */
function status(o: {
  replicas?: number;
  updated?: number;
  updatedAvailable?: number;
  available?: number;
  expected?: number;
  conditions?: CloneSetCondition[];
  resize?: CloneSetStatus['resize'];
}): CloneSetStatus {
  const replicas = o.replicas ?? 3;
  const updated = o.updated ?? 3;
  const updatedAvailable = o.updatedAvailable ?? updated;
  return {
    observedGeneration: 2,
    replicas,
    readyReplicas: o.available ?? replicas - updated + updatedAvailable,
    availableReplicas: o.available ?? replicas - updated + updatedAvailable,
    updatedReplicas: updated,
    updatedReadyReplicas: updatedAvailable,
    updatedAvailableReplicas: updatedAvailable,
    expectedUpdatedReplicas: o.expected ?? 3,
    currentRevision: updated === replicas ? 'web-r2' : 'web-r1',
    updateRevision: 'web-r2',
    collisionCount: 0,
    labelSelector: 'app=web',
    resize: o.resize ?? noResize,
    conditions: o.conditions ?? [],
  };
}

const progressingUpdated = cond('Progressing', 'True', 'CloneSetUpdated', 'CloneSet is progressing');
const deadlineExceeded = cond(
  'Progressing',
  'False',
  'ProgressDeadlineExceeded',
  'CloneSet revision web-r2 has timed out progressing',
);
const reconcilingWas = (reason: string): CloneSetCondition => cond('Reconciling', 'True', reason, 'before');

type Row = [string, CloneSetStatus, ReadinessFacts, [string, string], [string, string]];

// [step, status, facts, [Reconciling status, reason], [Stalled status, reason]]
const issueSteps: Row[] = [
  ['1. created, all ready', status({}), facts(), ['False', 'Complete'], ['False', 'NotStalled']],
  [
    '2. image rollout in progress',
    status({ updated: 1, updatedAvailable: 0, conditions: [progressingUpdated] }),
    facts(),
    ['True', 'RolloutInProgress'],
    ['False', 'NotStalled'],
  ],
  [
    '3. rollout done (after any edit)',
    status({ conditions: [reconcilingWas('RolloutInProgress')] }),
    facts(),
    ['False', 'Complete'],
    ['False', 'NotStalled'],
  ],
  [
    '4. partition holding pods back',
    status({ updated: 1, expected: 1 }),
    facts(),
    ['False', 'PartitionHeld'],
    ['False', 'NotStalled'],
  ],
  ['5. paused', status({ updated: 1 }), facts({ paused: true }), ['False', 'Paused'], ['False', 'NotStalled']],
  [
    '6. unpullable image, past progressDeadlineSeconds',
    status({ updated: 1, updatedAvailable: 0, conditions: [deadlineExceeded] }),
    facts(),
    ['False', 'Stalled'],
    ['True', 'ProgressDeadlineExceeded'],
  ],
];

const others: Row[] = [
  [
    'scale up: pods still to create',
    status({ replicas: 1, updated: 1 }),
    facts(),
    ['True', 'Scaling'],
    ['False', 'NotStalled'],
  ],
  [
    'scale up: every pod created, the new ones not yet available',
    status({ updated: 3, updatedAvailable: 1, conditions: [reconcilingWas('Scaling')] }),
    facts(),
    ['True', 'Scaling'],
    ['False', 'NotStalled'],
  ],
  [
    'a ReCreate rollout whose replacement is not yet created',
    status({ replicas: 2, updated: 1, conditions: [reconcilingWas('RolloutInProgress')] }),
    facts(),
    ['True', 'RolloutInProgress'],
    ['False', 'NotStalled'],
  ],
  [
    'scale down: pods still to delete',
    status({ replicas: 5, updated: 5 }),
    facts(),
    ['True', 'Scaling'],
    ['False', 'NotStalled'],
  ],
  [
    'scale up while paused: scaling is not held',
    status({ replicas: 2, updated: 0 }),
    facts({ paused: true }),
    ['True', 'Scaling'],
    ['False', 'NotStalled'],
  ],
  [
    'the last pod of a rollout becoming available keeps RolloutInProgress',
    status({ updated: 3, updatedAvailable: 2, conditions: [reconcilingWas('RolloutInProgress')] }),
    facts(),
    ['True', 'RolloutInProgress'],
    ['False', 'NotStalled'],
  ],
  [
    'a pod that went unavailable by itself',
    status({ updated: 3, updatedAvailable: 2 }),
    facts(),
    ['True', 'PodsUnavailable'],
    ['False', 'NotStalled'],
  ],
  [
    'resizes underway',
    status({ resize: { resizing: 2, proposed: 0, inProgress: 2, deferred: 0, infeasible: 0 } }),
    facts(),
    ['True', 'Resizing'],
    ['False', 'NotStalled'],
  ],
  [
    'an Infeasible resize under InPlaceOnly (nothing will finish it)',
    status({
      resize: { resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 1 },
      conditions: [
        cond('ResizeBlocked', 'True', 'Infeasible', 'web-a: Infeasible (resize is infeasible on this node)'),
      ],
    }),
    facts({ resizeWaitsOnInfeasible: true }),
    ['False', 'Stalled'],
    ['True', 'ResizeInfeasible'],
  ],
  [
    'an Infeasible resize the strategy recreates (InPlaceIfPossible)',
    status({
      updated: 3,
      updatedAvailable: 2,
      resize: { resizing: 0, proposed: 0, inProgress: 0, deferred: 0, infeasible: 1 },
    }),
    facts({ resizeWaitsOnInfeasible: false }),
    ['True', 'PodsUnavailable'],
    ['False', 'NotStalled'],
  ],
  [
    'creates refused by a quota (retrying may succeed)',
    status({
      replicas: 1,
      updated: 1,
      conditions: [cond('FailedScale', 'True', 'ApiRefused', 'create pods: 403 Forbidden: exceeded quota')],
    }),
    facts(),
    ['True', 'Scaling'],
    ['False', 'NotStalled'],
  ],
  [
    'creates refused for good (422: the template is invalid)',
    status({
      replicas: 1,
      updated: 1,
      conditions: [cond('FailedScale', 'True', 'ApiRejected', 'create pods: 422 Invalid: spec.containers')],
    }),
    facts(),
    ['False', 'Stalled'],
    ['True', 'FailedScale'],
  ],
  [
    'InPlaceOnly cannot apply the change',
    status({
      updated: 0,
      conditions: [cond('FailedUpdate', 'True', 'NotInPlaceUpdatable', 'updateStrategy.type InPlaceOnly cannot …')],
    }),
    facts(),
    ['False', 'Stalled'],
    ['True', 'FailedUpdate'],
  ],
  [
    'a stored spec that cannot be planned',
    status({ conditions: [cond('FailedUpdate', 'True', 'InvalidSpec', 'the spec cannot be planned')] }),
    facts(),
    ['False', 'Stalled'],
    ['True', 'FailedUpdate'],
  ],
  [
    'OnDelete with pods left at the old revision',
    status({ updated: 1 }),
    facts({ onDelete: true }),
    ['False', 'OnDelete'],
    ['False', 'NotStalled'],
  ],
  [
    'paused after the deadline passed: Kruise says paused, so nothing stalls',
    status({ updated: 1, conditions: [cond('Progressing', 'True', 'CloneSetPaused', 'CloneSet is paused')] }),
    facts({ paused: true }),
    ['False', 'Paused'],
    ['False', 'NotStalled'],
  ],
  [
    'no pods wanted',
    status({ replicas: 0, updated: 0 }),
    facts({ replicas: 0 }),
    ['False', 'Complete'],
    ['False', 'NotStalled'],
  ],
];

const verdict = (s: CloneSetStatus, f: ReadinessFacts) => {
  const r = decideReadiness(s, f);
  return { reconciling: [r.reconciling.status, r.reconciling.reason], stalled: [r.stalled.status, r.stalled.reason] };
};

describe('Reconciling and Stalled', () => {
  it.each(issueSteps)('issue 32, step %s', (_name, s, f, reconciling, stalled) => {
    expect(verdict(s, f)).toEqual({ reconciling, stalled });
  });

  it.each(others)('%s', (_name, s, f, reconciling, stalled) => {
    expect(verdict(s, f)).toEqual({ reconciling, stalled });
  });

  it('says in the message what is left', () => {
    const r = decideReadiness(status({ updated: 1, updatedAvailable: 0 }), facts());
    expect(r.reconciling.message).toBe('rolling out revision web-r2: 1 of 3 pods updated, 0 available');
    expect(decideReadiness(status({ replicas: 1, updated: 1 }), facts()).reconciling.message).toBe(
      'scaling up: 1 of 3 pods exist',
    );
    expect(decideReadiness(status({ updated: 1, expected: 1 }), facts()).reconciling.message).toBe(
      'updateStrategy.partition holds 2 of 3 pods at older revisions',
    );
  });

  it('names the refusal a moving rollout retries, and the deadline a stalled one missed', () => {
    const quota = cond('FailedScale', 'True', 'ApiRefused', 'create pods: 403 Forbidden: exceeded quota');
    expect(decideReadiness(status({ replicas: 1, updated: 1, conditions: [quota] }), facts()).reconciling.message).toBe(
      'scaling up: 1 of 3 pods exist; retrying: create pods: 403 Forbidden: exceeded quota',
    );
    const stalled = decideReadiness(
      status({ updated: 1, updatedAvailable: 0, conditions: [deadlineExceeded] }),
      facts(),
    ).stalled;
    expect(stalled.message).toBe(
      'CloneSet revision web-r2 has timed out progressing (1 of 3 pods updated, 0 available)',
    );
  });

  // Issue 47: a refusal the API server keeps making is Stalled; a spec not yet acted on, or an
  // Infeasible resize still to be recreated, is never Complete.
  const refusedAt = (agoMs: number, reason = 'ApiRefused'): CloneSetCondition => ({
    ...cond(
      'FailedRevision',
      'True',
      reason,
      'create the ControllerRevision of the template: 403 Forbidden: cannot update',
    ),
    lastTransitionTime: new Date(NOW - agoMs).toISOString(),
  });
  const honesty: { name: string; s: CloneSetStatus; f: ReadinessFacts; reconciling: string[]; stalled: string[] }[] = [
    {
      name: 'a refused revision write 10 s old: still retrying, not Complete (observedGeneration behind)',
      s: { ...status({ conditions: [refusedAt(10_000)] }), observedGeneration: 2 },
      f: facts({ generation: 3 }),
      reconciling: ['True', 'SpecNotObserved'],
      stalled: ['False', 'NotStalled'],
    },
    {
      name: 'the same refusal kept up for 60 s: Stalled, named by its condition',
      s: { ...status({ conditions: [refusedAt(60_000)] }), observedGeneration: 2 },
      f: facts({ generation: 3 }),
      reconciling: ['False', 'Stalled'],
      stalled: ['True', 'FailedRevision'],
    },
    {
      name: 'a quota refusal of creates kept up for 2 minutes: Stalled',
      s: status({ replicas: 1, updated: 1, conditions: [{ ...refusedAt(120_000), type: 'FailedScale' }] }),
      f: facts(),
      reconciling: ['False', 'Stalled'],
      stalled: ['True', 'FailedScale'],
    },
    {
      name: 'observedGeneration behind with every pod done: not Complete',
      s: { ...status({}), observedGeneration: 1 },
      f: facts({ generation: 2 }),
      reconciling: ['True', 'SpecNotObserved'],
      stalled: ['False', 'NotStalled'],
    },
    {
      name: 'an Infeasible resize the strategy recreates (onInfeasible Recreate): Resizing, not Complete',
      s: status({ resize: { ...noResize, infeasible: 1 } }),
      f: facts({ resizeWaitsOnInfeasible: false }),
      reconciling: ['True', 'Resizing'],
      stalled: ['False', 'NotStalled'],
    },
    {
      name: 'an Infeasible resize to be recreated that the budget can never admit: Stalled, not Complete (decision 79)',
      s: status({ resize: { ...noResize, infeasible: 1 } }),
      f: facts({
        recreateNeverAdmitted:
          'maxUnavailable 0 resolves to 0 of 3 pods and maxSurge is 0; raise updateStrategy.maxUnavailable or maxSurge, or lower the resources the template asks for',
      }),
      reconciling: ['False', 'Stalled'],
      stalled: ['True', 'InfeasibleResizeNotAdmissible'],
    },
    {
      name: 'a spec that never admits a recreate, with no Infeasible resize: nothing stalls',
      s: status({}),
      f: facts({
        recreateNeverAdmitted:
          'maxUnavailable 0 resolves to 0 of 3 pods and maxSurge is 0; raise updateStrategy.maxUnavailable or maxSurge, or lower the resources the template asks for',
      }),
      reconciling: ['False', 'Complete'],
      stalled: ['False', 'NotStalled'],
    },
  ];
  it.each(honesty)('$name', ({ s, f, reconciling, stalled }) => {
    const r = decideReadiness(s, f, NOW);
    expect({
      reconciling: [r.reconciling.status, r.reconciling.reason],
      stalled: [r.stalled.status, r.stalled.reason],
    }).toEqual({ reconciling, stalled });
  });

  it("keeps a long refusal's Stalled message the same from one round to the next (one write, not one per retry)", () => {
    const s = { ...status({ conditions: [refusedAt(61_000)] }), observedGeneration: 2 };
    const once = withReadiness(s, facts({ generation: 3 }), NOW);
    expect(withReadiness(once, facts({ generation: 3 }), NOW + 30_000)).toEqual(once);
  });

  it('reads the facts from a defaulted spec: InPlaceOnly and onInfeasible Wait leave an Infeasible resize waiting', () => {
    const spec = (updateStrategy: object) =>
      withDefaults({ spec: { replicas: 4, selector: {}, template: {}, updateStrategy } }).spec;
    expect(readinessFacts(spec({}))).toEqual({
      replicas: 4,
      paused: false,
      onDelete: false,
      resizeWaitsOnInfeasible: false,
    });
    expect(readinessFacts(spec({ type: 'InPlaceOnly' })).resizeWaitsOnInfeasible).toBe(true);
    expect(
      readinessFacts(spec({ type: 'InPlaceIfPossible', resizeStrategy: { onInfeasible: 'Wait' } }))
        .resizeWaitsOnInfeasible,
    ).toBe(true);
    expect(readinessFacts(spec({ type: 'OnDelete', paused: true }))).toMatchObject({ onDelete: true, paused: true });
  });

  it.each([
    {
      name: "the issue's maxSurge 1 with maxUnavailable 10% of 4 (rounds to 0): the surge admits it",
      u: { maxUnavailable: '10%', maxSurge: 1 },
      never: undefined,
    },
    {
      name: 'maxUnavailable 0 with maxSurge 0',
      u: { maxUnavailable: 0, maxSurge: 0 },
      never:
        'maxUnavailable 0 resolves to 0 of 4 pods and maxSurge is 0; raise updateStrategy.maxUnavailable or maxSurge, or lower the resources the template asks for',
    },
    {
      name: 'maxUnavailable 0 with maxSurge 2 while paused',
      u: { maxUnavailable: 0, maxSurge: 2, paused: true },
      never:
        'maxUnavailable 0 resolves to 0 of 4 pods and updateStrategy.paused uses no surge; unpause it, raise updateStrategy.maxUnavailable or lower the resources the template asks for',
    },
    {
      name: 'maxUnavailable 10% with maxSurge 1 while paused: rounds up to 1 without surge',
      u: { maxUnavailable: '10%', maxSurge: 1, paused: true },
      never: undefined,
    },
    {
      name: 'maxUnavailable 0% under OnDelete',
      u: { type: 'OnDelete' as const, maxUnavailable: '0%', maxSurge: 1 },
      never:
        'maxUnavailable 0% resolves to 0 of 4 pods and updateStrategy.type OnDelete uses no surge; raise updateStrategy.maxUnavailable or lower the resources the template asks for',
    },
  ])('reads from the spec alone whether a recreate is ever admitted: $name', ({ u, never }) => {
    const spec = withDefaults({
      spec: { replicas: 4, selector: {}, template: {}, updateStrategy: { type: 'InPlaceIfPossible', ...u } },
    }).spec;
    expect(readinessFacts(spec).recreateNeverAdmitted).toBe(never);
  });

  it('leaves an unparseable maxUnavailable (stored before the CRD bounded it) to the round’s InvalidSpec, never throws', () => {
    const spec = withDefaults({
      spec: { replicas: 4, selector: {}, template: {}, updateStrategy: { type: 'InPlaceIfPossible' } },
    }).spec;
    const stored = { ...spec, updateStrategy: { ...spec.updateStrategy, maxUnavailable: 'lots' } };
    expect(readinessFacts(stored).recreateNeverAdmitted).toBeUndefined();
  });
});

describe('withReadiness', () => {
  const arbitraryStatus = fc
    .record({
      replicas: fc.nat(6),
      updated: fc.nat(6),
      updatedAvailable: fc.nat(6),
      available: fc.nat(6),
      expected: fc.nat(6),
      infeasible: fc.nat(2),
      resizing: fc.nat(2),
      failure: fc.constantFrom(undefined, 'ApiRefused', 'ApiRejected'),
      exceeded: fc.boolean(),
      before: fc.constantFrom(undefined, 'RolloutInProgress', 'Scaling', 'Complete'),
    })
    .map((o) => {
      const updated = Math.min(o.updated, o.replicas);
      const conditions: CloneSetCondition[] = [o.exceeded ? deadlineExceeded : progressingUpdated];
      if (o.failure) conditions.push(cond('FailedScale', 'True', o.failure, 'create pods: refused'));
      if (o.before) conditions.push(reconcilingWas(o.before));
      return status({
        replicas: o.replicas,
        updated,
        updatedAvailable: Math.min(o.updatedAvailable, updated),
        available: Math.min(o.available, o.replicas),
        expected: o.expected,
        resize: { resizing: o.resizing, proposed: 0, inProgress: o.resizing, deferred: 0, infeasible: o.infeasible },
        conditions,
      });
    });
  const arbitraryFacts = fc.record({
    replicas: fc.nat(6),
    paused: fc.boolean(),
    onDelete: fc.boolean(),
    resizeWaitsOnInfeasible: fc.boolean(),
  });

  it('writes both conditions, never both True, and Reconciling False whenever Stalled is True', () => {
    fc.assert(
      fc.property(arbitraryStatus, arbitraryFacts, (s, f) => {
        const out = withReadiness(s, f, NOW).conditions ?? [];
        const reconciling = out.filter((c) => c.type === 'Reconciling');
        const stalled = out.filter((c) => c.type === 'Stalled');
        expect(reconciling).toHaveLength(1);
        expect(stalled).toHaveLength(1);
        if (stalled[0]?.status === 'True') expect(reconciling[0]?.status).toBe('False');
      }),
    );
  });

  it('changes nothing when decided again (the reconciler decides once more after folding failures in)', () => {
    fc.assert(
      fc.property(arbitraryStatus, arbitraryFacts, (s, f) => {
        const once = withReadiness(s, f, NOW);
        expect(withReadiness(once, f, NOW + 5_000)).toEqual(once);
      }),
    );
  });

  it("leaves Kruise's conditions, their order and their messages as they are", () => {
    fc.assert(
      fc.property(arbitraryStatus, arbitraryFacts, (s, f) => {
        const others = (list: CloneSetCondition[] | undefined) =>
          (list ?? []).filter((c) => c.type !== 'Reconciling' && c.type !== 'Stalled');
        expect(others(withReadiness(s, f, NOW).conditions)).toEqual(others(s.conditions));
      }),
    );
  });

  it('keeps lastTransitionTime while the status stays, and moves it when it flips', () => {
    const moving = withReadiness(status({ updated: 1, updatedAvailable: 0 }), facts(), NOW);
    const still = withReadiness({ ...moving, updatedReplicas: 2 }, facts(), NOW + 3_000);
    const at = (s: CloneSetStatus) => s.conditions?.find((c) => c.type === 'Reconciling');
    expect(at(still)?.lastTransitionTime).toBe(at(moving)?.lastTransitionTime);
    expect(at(still)?.message).toBe('rolling out revision web-r2: 2 of 3 pods updated, 0 available');
    const done = withReadiness({ ...still, ...status({}), conditions: still.conditions ?? [] }, facts(), NOW + 9_000);
    expect(at(done)).toMatchObject({ status: 'False', reason: 'Complete', lastTransitionTime: '2026-01-01T00:10:09Z' });
  });
});

describe('refusalStallsAt', () => {
  const at = (iso: string): number => Date.parse(iso);
  const failed = (type: string, reason: string, since: string): CloneSetCondition => ({
    type,
    status: 'True',
    reason,
    message: 'refused',
    lastTransitionTime: since,
  });
  it.each<[string, CloneSetCondition[], number | undefined]>([
    [
      'a retryable refusal: a minute after it began',
      [failed('FailedUpdate', 'ApiRefused', '2026-11-28T10:00:00Z')],
      at('2026-11-28T10:01:00Z'),
    ],
    [
      'the earliest of two',
      [
        failed('FailedScale', 'ApiRefused', '2026-11-28T10:00:30Z'),
        failed('FailedUpdate', 'ApiRefused', '2026-11-28T10:00:00Z'),
      ],
      at('2026-11-28T10:01:00Z'),
    ],
    [
      'a permanent refusal stalls at once, needing no wake',
      [failed('FailedUpdate', 'ApiRejected', '2026-11-28T10:00:00Z')],
      undefined,
    ],
    [
      'already Stalled',
      [
        failed('FailedUpdate', 'ApiRefused', '2026-11-28T10:00:00Z'),
        { type: 'Stalled', status: 'True', reason: 'FailedUpdate' },
      ],
      undefined,
    ],
    ['no refusal', [{ type: 'FailedUpdate', status: 'False', reason: 'ApiRefused' }], undefined],
  ])('%s', (...[, conditions, expected]) => {
    expect(refusalStallsAt({ conditions })).toBe(expected);
  });
});
