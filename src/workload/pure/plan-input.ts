// What the CloneSet planner reads (docs/architecture.md §3.1, step 2): the input of one round, as
// the reconciler observed it, and the views of it that every part of the plan shares (the
// backend that resizes a pod, its node's image pre-pull report, whether the strategy moves
// running pods at all).
// Pure. Must not: decide anything about a pod, perform I/O, or read anything but its input.
import type { Pod, PodTemplate } from '../../api/wire.js';
import type { PulledImages } from '../../api/prepull.js';
import type { PrePullTarget } from '../../inplace/pure/prepull.js';
import { backendForPod, type Backend, type NodeResizeEvidence } from '../../resize/backend.js';
import type { Claim } from './claims.js';
import type { DefaultedWireCloneSet } from './pods.js';
import type { ResizeBackend } from './resizes.js';
import type { KindStatus, PodIdentity } from './kind.js';

export interface PlanInput {
  cloneSet: DefaultedWireCloneSet;
  /** Every pod the CloneSet controls, terminating ones included. */
  pods: readonly Pod[];
  revisions: {
    updateRevision: string;
    currentRevision: string;
    templates: ReadonlyMap<string, PodTemplate>;
    /** Revisions live pods run whose templates this round does not hold (decision 81): their pods wait, never recreated for it. */
    deferred?: ReadonlySet<string>;
    /** Distinct revisions live pods run besides the current and update revisions (the RevisionsInUse condition). */
    inUse?: number;
  };
  now: number;
  resizeBackend: ResizeBackend;
  /** What is known about each node's kubelet (resize/backend.ts), by node name. */
  nodeEvidence: { get(node: string): NodeResizeEvidence | undefined };
  /** The nodes' image pre-pull reports (inplace/pure/prepull.ts); absent: nothing waits for pulls. */
  prePull?: PrePullInput;
  /** Every claim of spec.volumeClaimTemplates the CloneSet owns (claims.ts); absent: none. */
  claims?: readonly Claim[];
  /** The kind's pod identities (kind.ts); absent: random instance ids and the CloneSet's scale arithmetic. */
  identity?: PodIdentity;
  /** The claims labelled with the workload's name (a kind with identities: claim-owners.ts); absent: none. */
  setClaims?: readonly Claim[];
  /** Pods of the namespace no controller owns (the cache's, trimmed: pod-cache.ts); absent: none. */
  orphans?: readonly Pod[];
  /** The kind's own status fields (kind.ts); absent: none. */
  kindStatus?: KindStatus;
}

export interface PrePullInput {
  /** Each node's report, by node name; a node without one has no agent pre-pulling. */
  readonly reports: ReadonlyMap<string, PulledImages>;
  /** When each of the CloneSet's revisions was created (ms), by name. */
  readonly revisionCreatedAt: ReadonlyMap<string, number>;
  readonly timeoutMs: number;
}

/** The pre-pull view of one pod's node for an update to `revision`. */
export function prePullFor(input: PlanInput, pod: Pod, revision: string): PrePullTarget | undefined {
  const report = input.prePull?.reports.get(pod.spec?.nodeName ?? '');
  if (input.prePull === undefined || report === undefined) return undefined;
  return {
    report,
    revisionCreatedAt: input.prePull.revisionCreatedAt.get(revision),
    timeoutMs: input.prePull.timeoutMs,
  };
}

const NO_EVIDENCE: NodeResizeEvidence = { kubeletResizes: undefined, why: 'no pod on the node tells' };

/** The backend that resizes `pod`, by the one rule the agent follows too. */
export const backendOf = (input: PlanInput, pod: Pod): Backend =>
  backendForPod(input.resizeBackend, input.nodeEvidence.get(pod.spec?.nodeName ?? '') ?? NO_EVIDENCE, pod);

export const nameOf = (pod: Pod): string => pod.metadata?.name ?? '';

/** No running pod moves to the update revision: paused, or OnDelete. */
export const movesNoPod = (strategy: DefaultedWireCloneSet['spec']['updateStrategy']): boolean =>
  !!strategy.paused || strategy.type === 'OnDelete';

/** The earlier of two wake-up times, either of which may be absent. */
export function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
