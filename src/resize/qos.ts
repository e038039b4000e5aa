// A pod's QoS class from its containers' cpu/memory, by Kubernetes' rule (ComputePodQOS in
// pkg/apis/core/helper/qos), so the controller can tell before sending a resize whether the API
// server would reject it: a resize must not change the QoS class (KEP-1287 "QOS Class").
// Owns: that rule and the comparison of two container sets. Must not: do I/O, look at any
// resource other than cpu and memory (the rule ignores them), or decide what a change leads to.
import type * as k8s from '@kubernetes/client-node';
import { parseQuantity } from '../api/quantity.js';
import type { QosClass } from '../api/pod.js';
import type { Wire } from '../api/wire.js';

/** What qosClass reads of a container; a client-node V1Container (wire form) fits. */
export type QosContainer = Pick<Wire<k8s.V1Container>, 'resources'>;

const QOS_RESOURCES = ['cpu', 'memory'] as const;
type QosResource = (typeof QOS_RESOURCES)[number];

/** Nano-units of a quantity; an unparsable one is a value equal to nothing ("invalid"). */
type Amount = bigint | 'invalid';

function amount(value: string): Amount {
  try {
    return parseQuantity(value).nanos;
  } catch {
    return 'invalid';
  }
}

const isPositive = (a: Amount): boolean => a === 'invalid' || a > 0n;
const add = (a: Amount | undefined, b: Amount): Amount =>
  a === undefined ? b : a === 'invalid' || b === 'invalid' ? 'invalid' : a + b;

/**
 * The rule: only cpu and memory quantities above zero count. BestEffort when no container has any
 * such request or limit. Guaranteed when every container has both a cpu and a memory limit and,
 * per resource, the sum of the requests equals the sum of the limits (the same resources on both
 * sides). Burstable otherwise.
 * Inputs are treated as the API server would store them in a pod: a missing request takes the
 * value of the container's limit (SetDefaults_Pod, which runs for pods but not for pod templates),
 * so a template with limits only classifies like the pod created from it. Init containers count in
 * Kubernetes; they are the caller's to include (`[...containers, ...initContainers]`). Pod-level
 * resources (spec.resources) are not considered.
 */
export function qosClass(containers: readonly QosContainer[]): QosClass {
  const requests = new Map<QosResource, Amount>();
  const limits = new Map<QosResource, Amount>();
  let everyContainerLimited = true;
  for (const container of containers) {
    const given = container.resources;
    const limitsFound = new Set<QosResource>();
    for (const name of QOS_RESOURCES) {
      const limitText = given?.limits?.[name];
      // SetDefaults_Pod: a request that is not set takes the limit's value.
      const requestText = given?.requests?.[name] ?? limitText;
      if (requestText !== undefined) {
        const value = amount(requestText);
        if (isPositive(value)) requests.set(name, add(requests.get(name), value));
      }
      if (limitText !== undefined) {
        const value = amount(limitText);
        if (isPositive(value)) {
          limitsFound.add(name);
          limits.set(name, add(limits.get(name), value));
        }
      }
    }
    if (limitsFound.size < QOS_RESOURCES.length) everyContainerLimited = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (!everyContainerLimited || requests.size !== limits.size) return 'Burstable';
  for (const [name, request] of requests) {
    const limit = limits.get(name);
    if (limit === undefined || limit === 'invalid' || request === 'invalid' || limit !== request) return 'Burstable';
  }
  return 'Guaranteed';
}

/**
 * Whether giving the containers `after`'s resources instead of `before`'s changes the QoS class.
 * With the same init containers left out of both sides it can only report a change the API server
 * would not see (never miss one), so leaving them out errs towards recreating.
 */
export function resizeChangesQos(before: readonly QosContainer[], after: readonly QosContainer[]): boolean {
  return qosClass(before) !== qosClass(after);
}
