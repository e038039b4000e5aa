// The agent's verdict on the admission policies it found: enforced only when every required policy
// exists without failurePolicy Ignore and a binding of the same name denies for every namespace.
import { describe, expect, test } from '@jest/globals';
import { policyProblems, REQUIRED_POLICIES, type BindingObject, type PolicyReading } from '../../../src/agent/policy-check.js';

const binding = (policy: string, spec: Partial<NonNullable<BindingObject['spec']>> = {}): BindingObject => ({
  spec: { policyName: policy, validationActions: ['Deny'], ...spec },
});
const shipped = (): PolicyReading[] =>
  REQUIRED_POLICIES.map(({ policy, binding: name }) => ({
    policy,
    binding: name,
    policyObject: { spec: { failurePolicy: 'Fail' } },
    bindingObject: binding(policy),
  }));
const withFirst = (change: Partial<PolicyReading>): PolicyReading[] => {
  const [first, ...rest] = shipped();
  return [{ ...first!, ...change }, ...rest];
};

describe('policyProblems', () => {
  test('the shipped policies and bindings are enforced', () => {
    expect(policyProblems(shipped())).toEqual([]);
  });

  test.each<[string, Partial<PolicyReading>, RegExp]>([
    ['a missing policy', { policyObject: 'missing' }, /^ValidatingAdmissionPolicy tailor-pod-annotations does not exist$/],
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
    ['failurePolicy Ignore', { policyObject: { spec: { failurePolicy: 'Ignore' } } }, /has failurePolicy Ignore/],
    [
      'a binding that only warns',
      { bindingObject: binding('tailor-pod-annotations', { validationActions: ['Warn', 'Audit'] }) },
      /does not deny \(validationActions: Warn, Audit\)/,
    ],
    ['a binding of another policy', { bindingObject: binding('something-else') }, /enforces something-else, not tailor-pod-annotations/],
    [
      'a binding limited to some namespaces',
      { bindingObject: binding('tailor-pod-annotations', { matchResources: { namespaceSelector: { matchLabels: { team: 'a' } } } }) },
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
      policyProblems(withFirst({ bindingObject: binding('tailor-pod-annotations', { matchResources: { namespaceSelector: {} } }) })),
    ).toEqual([]);
  });

  test('every missing object is named', () => {
    const readings = shipped().map((r) => ({ ...r, policyObject: 'missing' as const, bindingObject: 'missing' as const }));
    expect(policyProblems(readings)).toHaveLength(2 * REQUIRED_POLICIES.length);
  });
});
