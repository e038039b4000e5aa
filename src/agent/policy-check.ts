// Whether the API server enforces the admission policies the node agent's safety rests on
// (config/policy; docs/architecture.md §5 Trust boundaries): without them any pod editor can forge the annotations the
// agent and the controller trust, and the agent's own token is not fenced to its node and its one
// annotation. The agent checks at start, and refuses to start when they are missing unless the
// operator allows it (--allow-missing-admission-policy); then, and afterwards every few minutes,
// it reports what it found as a gauge and a log line (docs/decisions/0050-agent-fenced-by-field.md).
// Owns: the names it looks for (those of config/policy), the verdict on what it read (pure:
// policyProblems) and the periodic report. Must not: change the policies, or stop the agent once
// it runs (a policy removed later is reported, not acted on: the process keeps what it applied).
import { createHash } from 'node:crypto';
import { Gauge, type Registry } from 'prom-client';
import { isForbidden, isNotFound, type KubeClient } from '../runtime/kube-client.js';
import type { Logger } from '../runtime/logger.js';
import { errorMessage } from '../api/errors.js';

/**
 * What a policy must still hold to protect what the agent relies on, as shipped in
 * config/policy/policy.yaml: the resources and operations it matches, and the first 16 hex digits
 * of the SHA-256 of each CEL expression (its validations, its variables by name, the only
 * matchConditions it may have). A unit test recomputes them from the YAML, so the two cannot drift.
 */
export interface ShippedPolicy {
  readonly resources: readonly string[];
  readonly operations: readonly string[];
  readonly validations: readonly string[];
  readonly variables: Readonly<Record<string, string>>;
  readonly matchConditions: readonly string[];
}

export interface RequiredPolicy {
  readonly policy: string;
  readonly binding: string;
  readonly shipped: ShippedPolicy;
}

const ADMIN_ONLY_EXEMPT = 'bfb995977884813d';

/** The policies of config/policy/policy.yaml and the bindings of config/policy/binding.yaml that enforce them. */
export const REQUIRED_POLICIES: readonly RequiredPolicy[] = [
  {
    policy: 'tailor-pod-annotations',
    binding: 'tailor-pod-annotations',
    shipped: {
      resources: ['pods', 'pods/status'],
      operations: ['CREATE', 'UPDATE'],
      matchConditions: [ADMIN_ONLY_EXEMPT],
      variables: {
        controller: '1c16970d995eebb8',
        agent: 'eef44363c1af52b1',
        new: '8f9dbb977bc9a273',
        old: '0f0fec9da177222d',
        keys: '7111f16bbe7294d4',
        changed: 'c9e8b0b7627861e5',
        user: 'c7a4f16bb9240ecd',
        resizeStatus: 'ff700268510e2927',
        othersUnchanged: '26e7153357c09ddb',
        nodeClaim: '6a2381be8b1dd9d6',
      },
      validations: [
        'd09486e7bb20c9e1',
        'cbe0cc2cd3d55e87',
        'ccdd901a88c7b77d',
        '8926a2bdeaeaca82',
        'f38d5c4529b4c0b7',
        '2c055f589cab5f3f',
      ],
    },
  },
  {
    policy: 'tailor-pod-bindings',
    binding: 'tailor-pod-bindings',
    shipped: {
      resources: ['bindings', 'pods/binding'],
      operations: ['CREATE'],
      matchConditions: [ADMIN_ONLY_EXEMPT],
      variables: { agent: 'eef44363c1af52b1', tailorKeys: '6aa65ea9cc9cb08b' },
      validations: ['36a48fba6e0a1ab8', 'db399a8fff833463'],
    },
  },
  {
    policy: 'tailor-node-annotations',
    binding: 'tailor-node-annotations',
    shipped: {
      resources: ['nodes', 'nodes/status'],
      operations: ['CREATE', 'UPDATE'],
      matchConditions: [ADMIN_ONLY_EXEMPT],
      variables: {
        agent: 'eef44363c1af52b1',
        controller: '1c16970d995eebb8',
        key: '2c701f54318b2a61',
        controllerKey: '22abd4259cca3d5f',
        new: '8f9dbb977bc9a273',
        old: '0f0fec9da177222d',
        keyChanged: 'b85c51952ab93dbf',
        controllerKeyChanged: '3e091782ebfa0f59',
        nodeClaim: '6a2381be8b1dd9d6',
        othersUnchanged: 'dd3389d88e895360',
      },
      validations: ['a5edd16cabf39f25', 'd1f879a22f06e997', '2502d4d77b71aca1', '7812a15c4d7dcad3'],
    },
  },
];

/** The digest ShippedPolicy keeps of a CEL expression. */
export const expressionDigest = (expression: string): string =>
  createHash('sha256').update(expression).digest('hex').slice(0, 16);

const API = '/apis/admissionregistration.k8s.io/v1';

interface Selector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly unknown[];
}

interface ResourceRule {
  readonly apiGroups?: readonly string[];
  readonly operations?: readonly string[];
  readonly resources?: readonly string[];
}
interface NamedExpression {
  readonly name?: string;
  readonly expression?: string;
}

/** The parts of a ValidatingAdmissionPolicy the check reads. */
export interface PolicyObject {
  readonly spec?: {
    readonly failurePolicy?: string;
    readonly matchConstraints?: { readonly resourceRules?: readonly ResourceRule[] };
    readonly matchConditions?: readonly NamedExpression[];
    readonly variables?: readonly NamedExpression[];
    readonly validations?: readonly NamedExpression[];
  };
}

/** The parts of a ValidatingAdmissionPolicyBinding the check reads. */
export interface BindingObject {
  readonly spec?: {
    readonly policyName?: string;
    readonly validationActions?: readonly string[];
    readonly paramRef?: unknown;
    readonly matchResources?: {
      readonly namespaceSelector?: Selector;
      readonly objectSelector?: Selector;
      readonly excludeResourceRules?: readonly unknown[];
      readonly resourceRules?: readonly unknown[];
    };
  };
}

/** What was read for one required policy: the object, 'missing', or why it could not be read. */
export type Found<T> = T | 'missing' | { readonly unreadable: string };

export interface PolicyReading {
  readonly policy: string;
  readonly binding: string;
  readonly shipped: ShippedPolicy;
  readonly policyObject: Found<PolicyObject>;
  readonly bindingObject: Found<BindingObject>;
}

const narrows = (s: Selector | undefined): boolean =>
  Object.keys(s?.matchLabels ?? {}).length > 0 || (s?.matchExpressions ?? []).length > 0;

const covers = (rules: readonly ResourceRule[], resource: string, operation: string): boolean =>
  rules.some(
    (r) =>
      (r.apiGroups ?? []).some((g) => g === '' || g === '*') &&
      (r.resources ?? []).some((x) => x === resource || x === '*' || x === '*/*') &&
      (r.operations ?? []).some((o) => o === operation || o === '*'),
  );

/** How a policy no longer holds what was shipped (resources matched, conditions, variables, validations). */
function contentProblems(name: string, spec: NonNullable<PolicyObject['spec']>, shipped: ShippedPolicy): string[] {
  const problems: string[] = [];
  const rules = spec.matchConstraints?.resourceRules ?? [];
  const uncovered = shipped.resources.flatMap((r) =>
    shipped.operations.filter((o) => !covers(rules, r, o)).map((o) => `${o} ${r}`),
  );
  if (uncovered.length > 0)
    problems.push(`ValidatingAdmissionPolicy ${name} no longer matches ${uncovered.join(', ')}`);
  const extraConditions = (spec.matchConditions ?? []).filter(
    (c) => !shipped.matchConditions.includes(expressionDigest(c.expression ?? '')),
  );
  if (extraConditions.length > 0) {
    problems.push(
      `ValidatingAdmissionPolicy ${name} has matchConditions that narrow it: ${extraConditions.map((c) => c.name).join(', ')}`,
    );
  }
  const variables = new Map((spec.variables ?? []).map((v) => [v.name ?? '', expressionDigest(v.expression ?? '')]));
  const changed = Object.entries(shipped.variables).filter(([v, digest]) => variables.get(v) !== digest);
  if (changed.length > 0)
    problems.push(`ValidatingAdmissionPolicy ${name} has changed variables: ${changed.map(([v]) => v).join(', ')}`);
  const validations = new Set((spec.validations ?? []).map((v) => expressionDigest(v.expression ?? '')));
  const missing = shipped.validations.filter((v) => !validations.has(v)).length;
  if (missing > 0)
    problems.push(
      `ValidatingAdmissionPolicy ${name} lacks ${missing} of its ${shipped.validations.length} validations`,
    );
  return problems;
}

/** What keeps each policy from being enforced everywhere, one sentence each; empty when all are. Pure. */
export function policyProblems(readings: readonly PolicyReading[]): string[] {
  const problems: string[] = [];
  for (const r of readings) {
    const p = r.policyObject;
    if (p === 'missing') problems.push(`ValidatingAdmissionPolicy ${r.policy} does not exist`);
    else if ('unreadable' in p)
      problems.push(`ValidatingAdmissionPolicy ${r.policy} could not be read: ${p.unreadable}`);
    else {
      if (p.spec?.failurePolicy === 'Ignore')
        problems.push(`ValidatingAdmissionPolicy ${r.policy} has failurePolicy Ignore`);
      problems.push(...contentProblems(r.policy, p.spec ?? {}, r.shipped));
    }

    const b = r.bindingObject;
    if (b === 'missing') {
      problems.push(`ValidatingAdmissionPolicyBinding ${r.binding} does not exist, so ${r.policy} is not enforced`);
      continue;
    }
    if ('unreadable' in b) {
      problems.push(`ValidatingAdmissionPolicyBinding ${r.binding} could not be read: ${b.unreadable}`);
      continue;
    }
    const spec = b.spec ?? {};
    if (spec.policyName !== r.policy) {
      problems.push(
        `ValidatingAdmissionPolicyBinding ${r.binding} enforces ${spec.policyName ?? '(no policy)'}, not ${r.policy}`,
      );
    }
    if (!(spec.validationActions ?? []).includes('Deny')) {
      problems.push(
        `ValidatingAdmissionPolicyBinding ${r.binding} does not deny (validationActions: ${(spec.validationActions ?? []).join(', ') || 'none'})`,
      );
    }
    const match = spec.matchResources;
    if (
      narrows(match?.namespaceSelector) ||
      narrows(match?.objectSelector) ||
      (match?.excludeResourceRules ?? []).length > 0 ||
      (match?.resourceRules ?? []).length > 0
    ) {
      problems.push(
        `ValidatingAdmissionPolicyBinding ${r.binding} applies to some namespaces or pods only (matchResources)`,
      );
    }
  }
  return problems;
}

async function read<T>(client: Pick<KubeClient, 'get'>, path: string): Promise<Found<T>> {
  try {
    return await client.get<T>(path);
  } catch (err) {
    if (isNotFound(err)) return 'missing';
    if (isForbidden(err)) {
      return { unreadable: 'forbidden (the agent needs get on it: config/agent/rbac.yaml)' };
    }
    return { unreadable: errorMessage(err) };
  }
}

export type RequiredPolicies = readonly RequiredPolicy[];

/** Reads every required policy and binding by name. Never throws: what could not be read is a problem. */
export async function readPolicies(
  client: Pick<KubeClient, 'get'>,
  required: RequiredPolicies = REQUIRED_POLICIES,
): Promise<PolicyReading[]> {
  return Promise.all(
    required.map(async ({ policy, binding, shipped }) => ({
      policy,
      binding,
      shipped,
      policyObject: await read<PolicyObject>(
        client,
        `${API}/validatingadmissionpolicies/${encodeURIComponent(policy)}`,
      ),
      bindingObject: await read<BindingObject>(
        client,
        `${API}/validatingadmissionpolicybindings/${encodeURIComponent(binding)}`,
      ),
    })),
  );
}

export interface PolicyMonitorOptions {
  readonly client: Pick<KubeClient, 'get'>;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Check again this often once running; default 5 minutes. */
  readonly intervalMs?: number;
}

/** Checks the policies, keeps tailor_agent_admission_policy_enforced current and logs each change. */
export class AdmissionPolicyMonitor {
  private readonly enforced: Gauge;
  private timer: NodeJS.Timeout | undefined;
  private last: string | undefined;
  private inFlight: Promise<string[]> | undefined;

  constructor(private readonly o: PolicyMonitorOptions) {
    this.enforced = new Gauge({
      name: 'tailor_agent_admission_policy_enforced',
      help: "1 when the API server enforces Tailor's admission policies (config/policy) for every namespace, 0 when one is missing or weakened",
      registers: [o.registry],
    });
  }

  /** Reads the policies now; returns the problems (empty: enforced) after reporting them. */
  async check(): Promise<string[]> {
    const problems = policyProblems(await readPolicies(this.o.client));
    this.enforced.set(problems.length === 0 ? 1 : 0);
    const summary = problems.join('; ');
    if (summary !== this.last) {
      if (problems.length === 0)
        this.o.logger.info({ policies: REQUIRED_POLICIES }, "Tailor's admission policies are enforced");
      else
        this.o.logger.error(
          { problems },
          "Tailor's admission policies are not enforced: pod editors can forge Tailor's annotations and the agent's token is not fenced",
        );
      this.last = summary;
    }
    return problems;
  }

  /** Checks again every interval until stop(). */
  start(): void {
    this.timer = setInterval(
      () => {
        if (this.inFlight) return;
        this.inFlight = this.check()
          .catch((err: unknown) => {
            this.o.logger.warn({ err }, 'checking the admission policies failed');
            return [];
          })
          .finally(() => (this.inFlight = undefined));
      },
      this.o.intervalMs ?? 5 * 60_000,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }
}
