// The agent's verdict on the admission policies it found: enforced only when every required policy
// exists without failurePolicy Ignore and a binding of the same name denies for every namespace.
import { describe, expect, test } from '@jest/globals';
import { loadAll } from 'js-yaml';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  expressionDigest,
  policyProblems,
  REQUIRED_POLICIES,
  type BindingObject,
  type PolicyObject,
  type PolicyReading,
} from '../../../src/agent/policy-check.js';

/** The policies as config/policy/policy.yaml ships them. */
const shippedPolicies = new Map(
  (
    loadAll(readFileSync(resolve(process.cwd(), 'config/policy/policy.yaml'), 'utf8')) as (PolicyObject & {
      metadata: { name: string };
    })[]
  ).map((p) => [p.metadata.name, p]),
);

const binding = (policy: string, spec: Partial<NonNullable<BindingObject['spec']>> = {}): BindingObject => ({
  spec: { policyName: policy, validationActions: ['Deny'], ...spec },
});
const shipped = (): PolicyReading[] =>
  REQUIRED_POLICIES.map(({ policy, binding: name, shipped: content }) => ({
    policy,
    binding: name,
    shipped: content,
    policyObject: structuredClone(shippedPolicies.get(policy)!),
    bindingObject: binding(policy),
  }));
/** The first shipped policy (tailor-pod-annotations) with its spec changed. */
const policyWith = (change: (spec: NonNullable<PolicyObject['spec']>) => void): Partial<PolicyReading> => {
  const p = structuredClone(shippedPolicies.get('tailor-pod-annotations')!) as {
    spec: NonNullable<PolicyObject['spec']>;
  };
  change(p.spec);
  return { policyObject: p };
};
type Mutable<T> = { -readonly [K in keyof T]: T[K] };
const withFirst = (change: Partial<PolicyReading>): PolicyReading[] => {
  const [first, ...rest] = shipped();
  return [{ ...first!, ...change }, ...rest];
};

describe('policyProblems', () => {
  test('the shipped policies and bindings are enforced', () => {
    expect(policyProblems(shipped())).toEqual([]);
  });

  // The digests the agent checks are those of the YAML it ships with.
  test.each(REQUIRED_POLICIES.map((r) => [r.policy, r] as const))(
    '%s: the agent knows the shipped content',
    (name, required) => {
      const spec = shippedPolicies.get(name)?.spec ?? {};
      const rules = spec.matchConstraints?.resourceRules ?? [];
      expect({
        resources: rules.flatMap((r) => r.resources ?? []),
        operations: [...new Set(rules.flatMap((r) => r.operations ?? []))],
        matchConditions: (spec.matchConditions ?? []).map((c) => expressionDigest(c.expression ?? '')),
        variables: Object.fromEntries(
          (spec.variables ?? []).map((v) => [v.name, expressionDigest(v.expression ?? '')]),
        ),
        validations: (spec.validations ?? []).map((v) => expressionDigest(v.expression ?? '')),
      }).toEqual(required.shipped);
    },
  );

  // Issue 31.8: a policy that exists but no longer covers what it shipped to cover is not enforced.
  test.each<[string, Partial<PolicyReading>, RegExp]>([
    [
      'a policy emptied of its validations',
      policyWith((s) => ((s as Mutable<typeof s>).validations = [])),
      /^ValidatingAdmissionPolicy tailor-pod-annotations lacks 6 of its 6 validations$/,
    ],
    [
      'a validation rewritten to always pass',
      policyWith(
        (s) => ((s as Mutable<typeof s>).validations = [{ expression: 'true' }, ...(s.validations ?? []).slice(1)]),
      ),
      /lacks 1 of its 6 validations/,
    ],
    [
      'a policy that no longer matches pods/status',
      policyWith(
        (s) =>
          ((s as Mutable<typeof s>).matchConstraints = {
            resourceRules: [{ apiGroups: [''], operations: ['CREATE', 'UPDATE'], resources: ['pods'] }],
          }),
      ),
      /^ValidatingAdmissionPolicy tailor-pod-annotations no longer matches CREATE pods\/status, UPDATE pods\/status$/,
    ],
    [
      'a policy with a matchCondition that exempts everyone',
      policyWith(
        (s) =>
          ((s as Mutable<typeof s>).matchConditions = [
            ...(s.matchConditions ?? []),
            { name: 'never', expression: 'false' },
          ]),
      ),
      /has matchConditions that narrow it: never/,
    ],
    [
      'a variable rewritten (the agent may then write anything)',
      policyWith(
        (s) =>
          ((s as Mutable<typeof s>).variables = (s.variables ?? []).map((v) =>
            v.name === 'agent' ? { ...v, expression: "''" } : v,
          )),
      ),
      /has changed variables: agent/,
    ],
    [
      'a binding narrowed to other resources',
      {
        bindingObject: binding('tailor-pod-annotations', {
          matchResources: { resourceRules: [{ resources: ['configmaps'] }] },
        }),
      },
      /applies to some namespaces or pods only/,
    ],
  ])('%s is a problem', (_name, change, message) => {
    const [first, ...rest] = shipped();
    const problems = policyProblems([{ ...first!, ...change }, ...rest]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  test.each<[string, Partial<PolicyReading>, RegExp]>([
    [
      'a missing policy',
      { policyObject: 'missing' },
      /^ValidatingAdmissionPolicy tailor-pod-annotations does not exist$/,
    ],
    [
      'a missing binding',
      { bindingObject: 'missing' },
      /^ValidatingAdmissionPolicyBinding tailor-pod-annotations does not exist, so tailor-pod-annotations is not enforced$/,
    ],
    [
      'a policy the agent may not read',
      { policyObject: { unreadable: 'forbidden' } },
      /^ValidatingAdmissionPolicy tailor-pod-annotations could not be read: forbidden$/,
    ],
    [
      'failurePolicy Ignore',
      policyWith((s) => ((s as Mutable<typeof s>).failurePolicy = 'Ignore')),
      /has failurePolicy Ignore/,
    ],
    [
      'a binding that only warns',
      { bindingObject: binding('tailor-pod-annotations', { validationActions: ['Warn', 'Audit'] }) },
      /does not deny \(validationActions: Warn, Audit\)/,
    ],
    [
      'a binding of another policy',
      { bindingObject: binding('something-else') },
      /enforces something-else, not tailor-pod-annotations/,
    ],
    [
      'a binding limited to some namespaces',
      {
        bindingObject: binding('tailor-pod-annotations', {
          matchResources: { namespaceSelector: { matchLabels: { team: 'a' } } },
        }),
      },
      /applies to some namespaces or pods only/,
    ],
    [
      'a binding that excludes resources',
      { bindingObject: binding('tailor-pod-annotations', { matchResources: { excludeResourceRules: [{}] } }) },
      /applies to some namespaces or pods only/,
    ],
  ])('%s is a problem, named in one sentence', (_, change, want) => {
    const problems = policyProblems(withFirst(change));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(want);
  });

  test('an empty namespace selector (every namespace) is no problem', () => {
    expect(
      policyProblems(
        withFirst({ bindingObject: binding('tailor-pod-annotations', { matchResources: { namespaceSelector: {} } }) }),
      ),
    ).toEqual([]);
  });

  test('every missing object is named', () => {
    const readings = shipped().map((r) => ({
      ...r,
      policyObject: 'missing' as const,
      bindingObject: 'missing' as const,
    }));
    expect(policyProblems(readings)).toHaveLength(2 * REQUIRED_POLICIES.length);
  });
});
