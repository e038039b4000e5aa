// Which stops for a restart in place may start now on this node (agent/restart.ts, docs/decisions/
// 0078-restart-slots-per-pod-and-namespace.md): the node's slots shared per pod and per namespace,
// so one pod's, or one tenant's, hanging preStop hooks never hold every other tenant's restarts.
// Owns: the bounds (the node's, a pod's), a namespace's share and the grant of one pod.
// Pure. Must not: read the caches or the clock, start or abort a stop, or fail a request (a pod
// past its share waits, and is granted slots as other stops end).

/** Stops (hook included) running at once on this node, all pods together. */
export const MAX_IN_FLIGHT = 64;
/**
 * Stops of one pod running at once: a pod of up to 4 containers (an app and its sidecars, most
 * pods) restarts in one wave as the kubelet would; a larger one in waves, each bounded by its
 * grace period, while its hooks hold 4 of the node's slots at most.
 */
export const MAX_IN_FLIGHT_PER_POD = 4;

export interface SlotLimits {
  /** Stops at once on the node; MAX_IN_FLIGHT. */
  readonly node: number;
  /** Stops at once of one pod; MAX_IN_FLIGHT_PER_POD. */
  readonly pod: number;
}

export const DEFAULT_SLOT_LIMITS: SlotLimits = { node: MAX_IN_FLIGHT, pod: MAX_IN_FLIGHT_PER_POD };

/** One pod's stops on the node: under way (held) and asked for but not started (waiting). */
export interface PodStops {
  /** The pod's key, `namespace/name`. */
  readonly pod: string;
  readonly namespace: string;
  readonly held: number;
  readonly waiting: number;
}

/** What bounded a grant below what the pod waits for. */
export type SlotLimit = 'pod' | 'namespace' | 'node';

export interface SlotGrant {
  /** How many of the pod's waiting stops may start now (its first ones, in the request's order). */
  readonly granted: number;
  /** Set when some of the pod's stops must wait: the bound they wait on. */
  readonly waitsOn?: SlotLimit;
}

/**
 * The stops a namespace may hold when `namespaces` namespaces hold or want stops: the node's slots
 * split between them and one more that has not asked yet, at least a pod's bound. Alone, a
 * namespace holds half the node, so a second one arriving finds half of it free even when the first
 * one's hooks all hang; past 16 namespaces at once the shares add up to more than the node, and
 * the node's bound is the one that holds.
 */
export function namespaceShare(namespaces: number, limits: SlotLimits = DEFAULT_SLOT_LIMITS): number {
  return Math.max(limits.pod, Math.floor(limits.node / (namespaces + 1)));
}

const sum = (stops: readonly PodStops[]): number => stops.reduce((n, s) => n + s.held, 0);

/**
 * How many of `pod`'s waiting stops may start now, given every pod of the node that holds or waits
 * for stops (`node`, the pod itself included): no more than its pod's bound, its namespace's share
 * (namespaceShare over the namespaces in `node`) and the node's bound leave. Stops under way are
 * never taken back: a namespace over its share (others arrived after it started) starts no more
 * until it is under again. A function of its input alone, so asking twice gives the same answer.
 */
export function grantSlots(
  pod: string,
  node: readonly PodStops[],
  limits: SlotLimits = DEFAULT_SLOT_LIMITS,
): SlotGrant {
  const own = node.find((s) => s.pod === pod);
  if (own === undefined || own.waiting <= 0) return { granted: 0 };
  const active = node.filter((s) => s.held > 0 || s.waiting > 0);
  const namespaces = new Set(active.map((s) => s.namespace)).size;
  const room: ReadonlyArray<readonly [SlotLimit, number]> = [
    ['pod', limits.pod - own.held],
    ['namespace', namespaceShare(namespaces, limits) - sum(active.filter((s) => s.namespace === own.namespace))],
    ['node', limits.node - sum(active)],
  ];
  const [limit, left] = room.reduce((a, b) => (b[1] < a[1] ? b : a));
  if (left >= own.waiting) return { granted: own.waiting };
  return { granted: Math.max(0, left), waitsOn: limit };
}
