// Whether the API server enforces the admission policies the node agent's safety rests on
// (config/policy; docs/architecture.md §5 Trust boundaries): without them any pod editor can forge the annotations the
// agent and the controller trust, and the agent's own token is not fenced to its node and its one
// annotation. The agent checks at start, and refuses to start when they are missing unless the
// operator allows it (--allow-missing-admission-policy); then, and afterwards every few minutes,
// it reports what it found as a gauge and a log line (docs/decisions/0050-agent-fenced-by-field.md).
// Owns: the names it looks for (those of config/policy), the verdict on what it read (pure:
// policyProblems) and the periodic report. Must not: change the policies, or stop the agent once
// it runs (a policy removed later is reported, not acted on: the process keeps what it applied).
import { Gauge, type Registry } from 'prom-client';
import { isNotFound, KubeApiError, type KubeClient } from '../runtime/kube-client.js';
import type { Logger } from '../runtime/logger.js';

/** The policies of config/policy/policy.yaml and the bindings of config/policy/binding.yaml that enforce them. */
export const REQUIRED_POLICIES: readonly { readonly policy: string; readonly binding: string }[] = [
  { policy: 'tailor-pod-annotations', binding: 'tailor-pod-annotations' },
  { policy: 'tailor-pod-bindings', binding: 'tailor-pod-bindings' },
  { policy: 'tailor-node-annotations', binding: 'tailor-node-annotations' },
];

const API = '/apis/admissionregistration.k8s.io/v1';

interface Selector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly unknown[];
}

/** The parts of a ValidatingAdmissionPolicy the check reads. */
export interface PolicyObject {
  readonly spec?: { readonly failurePolicy?: string };
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
    };
  };
}

/** What was read for one required policy: the object, 'missing', or why it could not be read. */
export type Found<T> = T | 'missing' | { readonly unreadable: string };

export interface PolicyReading {
  readonly policy: string;
  readonly binding: string;
  readonly policyObject: Found<PolicyObject>;
  readonly bindingObject: Found<BindingObject>;
}

const narrows = (s: Selector | undefined): boolean =>
  Object.keys(s?.matchLabels ?? {}).length > 0 || (s?.matchExpressions ?? []).length > 0;

/** What keeps each policy from being enforced everywhere, one sentence each; empty when all are. Pure. */
export function policyProblems(readings: readonly PolicyReading[]): string[] {
  const problems: string[] = [];
  for (const r of readings) {
    const p = r.policyObject;
    if (p === 'missing') problems.push(`ValidatingAdmissionPolicy ${r.policy} does not exist`);
    else if ('unreadable' in p) problems.push(`ValidatingAdmissionPolicy ${r.policy} could not be read: ${p.unreadable}`);
    else if (p.spec?.failurePolicy === 'Ignore') problems.push(`ValidatingAdmissionPolicy ${r.policy} has failurePolicy Ignore`);

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
      problems.push(`ValidatingAdmissionPolicyBinding ${r.binding} enforces ${spec.policyName ?? '(no policy)'}, not ${r.policy}`);
    }
    if (!(spec.validationActions ?? []).includes('Deny')) {
      problems.push(
        `ValidatingAdmissionPolicyBinding ${r.binding} does not deny (validationActions: ${(spec.validationActions ?? []).join(', ') || 'none'})`,
      );
    }
    const match = spec.matchResources;
    if (narrows(match?.namespaceSelector) || narrows(match?.objectSelector) || (match?.excludeResourceRules ?? []).length > 0) {
      problems.push(`ValidatingAdmissionPolicyBinding ${r.binding} applies to some namespaces or pods only (matchResources)`);
    }
  }
  return problems;
}

async function read<T>(client: Pick<KubeClient, 'get'>, path: string): Promise<Found<T>> {
  try {
    return await client.get<T>(path);
  } catch (err) {
    if (isNotFound(err)) return 'missing';
    if (err instanceof KubeApiError && err.statusCode === 403) {
      return { unreadable: 'forbidden (the agent needs get on it: config/agent/rbac.yaml)' };
    }
    return { unreadable: err instanceof Error ? err.message : String(err) };
  }
}

export type RequiredPolicies = typeof REQUIRED_POLICIES;

/** Reads every required policy and binding by name. Never throws: what could not be read is a problem. */
export async function readPolicies(
  client: Pick<KubeClient, 'get'>,
  required: RequiredPolicies = REQUIRED_POLICIES,
): Promise<PolicyReading[]> {
  return Promise.all(
    required.map(async ({ policy, binding }) => ({
      policy,
      binding,
      policyObject: await read<PolicyObject>(client, `${API}/validatingadmissionpolicies/${encodeURIComponent(policy)}`),
      bindingObject: await read<BindingObject>(client, `${API}/validatingadmissionpolicybindings/${encodeURIComponent(binding)}`),
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
      if (problems.length === 0) this.o.logger.info({ policies: REQUIRED_POLICIES }, "Tailor's admission policies are enforced");
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
