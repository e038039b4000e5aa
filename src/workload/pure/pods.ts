// The pods a CloneSet makes: the CloneSet with its defaults, the instance ids that name its pods,
// and the pod created for a revision (labels, owner reference, the in-place readiness gate). How
// any kind's pod is summarised is workload/pure/pod-summary.ts's.
// Pure. Must not: call the API.
import type * as k8s from '@kubernetes/client-node';
import {
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_INSTANCE_ID,
  LABEL_LIFECYCLE_STATE,
  LifecycleStates,
  isTailorOwnedAnnotation,
  isTailorOwnedLabel,
} from '../../api/types.js';
import { withDefaults, type DefaultedCloneSet } from '../../api/defaults.js';
import type { Pod, Wire, WireCloneSet } from '../../api/wire.js';
import { withReadinessGate } from '../../inplace/pure/readiness-gate.js';

export type DefaultedWireCloneSet = Wire<DefaultedCloneSet>;

/** Defaults applied to a CloneSet as read from the API (defaulting touches only spec fields, none of them dates). */
export const defaulted = (cs: WireCloneSet): DefaultedWireCloneSet => withDefaults(cs);

/** The alphabet of instance ids: lowercase consonants and digits, so no id spells a word. */
const INSTANCE_ID_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** Kruise's length: 27^5 ≈ 14.3 million ids; at 100,000 pods a random draw is taken 0.7% of the time. */
const INSTANCE_ID_LENGTH = 5;

/**
 * `count` Kruise-style instance ids (also the pod name suffix), distinct from each other and from
 * `inUse`: a random id that is taken is drawn again, so ids never collide however many pods
 * exist (drawn blindly, 100,000 ids held ~380 duplicates). `random(n)` gives n random bytes.
 */
export function newInstanceIds(count: number, inUse: ReadonlySet<string>, random: (n: number) => Uint8Array): string[] {
  const taken = new Set(inUse);
  const ids: string[] = [];
  while (ids.length < count) {
    const id = Array.from(
      random(INSTANCE_ID_LENGTH),
      (b) => INSTANCE_ID_ALPHABET[b % INSTANCE_ID_ALPHABET.length],
    ).join('');
    if (taken.has(id)) continue;
    taken.add(id);
    ids.push(id);
  }
  return ids;
}

/**
 * The template's labels and annotations without Tailor's own: the CRD refuses them in a template,
 * but a CloneSet stored before a rule may still hold them, and a pod must not be born with a forged
 * resize request, update state or lifecycle state.
 */
const withoutKeys = (
  map: Record<string, string> | undefined,
  owned: (key: string) => boolean,
): Record<string, string> => Object.fromEntries(Object.entries(map ?? {}).filter(([key]) => !owned(key)));

export function newPod(
  cloneSet: WireCloneSet,
  revisionName: string,
  template: Wire<k8s.V1PodTemplateSpec>,
  instanceId: string,
): Pod {
  const name = `${cloneSet.metadata?.name}-${instanceId}`;
  const spec = withReadinessGate(structuredClone<NonNullable<Pod['spec']>>(template.spec ?? { containers: [] }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: cloneSet.metadata?.namespace,
      labels: {
        ...withoutKeys(template.metadata?.labels, isTailorOwnedLabel),
        [LABEL_CONTROLLER_REVISION_HASH]: revisionName,
        [LABEL_INSTANCE_ID]: instanceId,
        // Every new pod starts here, as in Kruise; the controller moves it to Normal (lifecycle.ts).
        [LABEL_LIFECYCLE_STATE]: LifecycleStates.PreparingNormal,
      },
      annotations: withoutKeys(template.metadata?.annotations, isTailorOwnedAnnotation),
      ownerReferences: [controllerRef(cloneSet)],
    },
    spec,
  };
}

/** The workload's kind, as its references and messages name it (a view keeps its stored object's kind). */
export const kindOf = (workload: WireCloneSet): string => workload.kind ?? 'CloneSet';

export function controllerRef(cloneSet: WireCloneSet): Wire<k8s.V1OwnerReference> {
  return {
    apiVersion: cloneSet.apiVersion ?? 'apps.tailor.dev/v1alpha1',
    kind: kindOf(cloneSet),
    name: cloneSet.metadata?.name ?? '',
    uid: cloneSet.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
