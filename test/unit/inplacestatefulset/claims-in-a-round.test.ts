// An InPlaceStatefulSet's claims in a whole planning round (decision 98): changed claim templates
// never recreate its pods (they keep their claims by name; a CloneSet's pods are recreated), the
// claims of pods on the update revision are raised to the template's storage under InPlace, and
// none while the rollout is paused.
import { describe, expect, it } from '@jest/globals';
import { ANNOTATION_VOLUME_CLAIM_TEMPLATES_HASH, LABEL_INSTANCE_ID } from '../../../src/api/types.js';
import { INPLACESTATEFULSET } from '../../../src/inplacestatefulset/kind.js';
import type { Claim } from '../../../src/workload/pure/claims.js';
import { planReconcile } from '../../../src/workload/pure/planner.js';
import type { DefaultedWireCloneSet } from '../../../src/workload/pure/pods.js';
import type { Plan } from '../../../src/workload/pure/round-plan.js';
import { NEW, NOW, OLD, cloneSet, pod, revisionTemplates } from '../../support/fixtures/planner-fixtures.js';

const templates = revisionTemplates('image');

function set(paused = false): DefaultedWireCloneSet {
  const cs = cloneSet({ replicas: 3, maxUnavailable: 3, paused });
  cs.spec.volumeClaimTemplates = [
    { metadata: { name: 'data' }, spec: { resources: { requests: { storage: '2Gi' } } } },
  ];
  (cs.spec as unknown as Record<string, unknown>)['volumeClaimUpdateStrategy'] = { type: 'InPlace' };
  return cs;
}

/** web-0 on the old revision, web-1 and web-2 on the new one; made from claim templates of 1Gi. */
const pods = (): ReturnType<typeof pod>[] =>
  [OLD, NEW, NEW].map((revision, i) =>
    pod(
      {
        name: `web-${i}`,
        revision,
        labels: { [LABEL_INSTANCE_ID]: String(i) },
        annotations: { [ANNOTATION_VOLUME_CLAIM_TEMPLATES_HASH]: 'made-from-1Gi' },
      },
      templates,
    ),
  );

const claims: Claim[] = [0, 1, 2].map((i) => ({
  metadata: { name: `data-web-${i}`, uid: `u${i}` },
  spec: { resources: { requests: { storage: '1Gi' } } },
}));

function round(withIdentity: boolean, paused = false): Plan {
  return planReconcile({
    cloneSet: set(paused),
    pods: pods(),
    revisions: { updateRevision: NEW, currentRevision: OLD, templates },
    now: NOW,
    resizeBackend: 'kubelet',
    nodeEvidence: new Map(),
    ...(withIdentity ? { identity: INPLACESTATEFULSET.identity!, setClaims: claims } : {}),
  });
}

const deleted = (plan: Plan): string[] =>
  plan.intents.flatMap((i) => (i.kind === 'delete' ? [i.pod.metadata?.name ?? ''] : []));

describe("an InPlaceStatefulSet's claims in a round", () => {
  it('changed claim templates recreate a CloneSet pod at its update, and never an InPlaceStatefulSet pod', () => {
    expect(deleted(round(false))).toEqual(['web-0']);
    expect(deleted(round(true))).toEqual([]);
    expect(round(true).intents.some((i) => i.kind !== 'create' && i.pod.metadata?.name === 'web-0')).toBe(true);
  });

  it('raises the claims of the pods on the update revision to the template, none while paused', () => {
    expect(round(true).claimResizes?.map((r) => `${r.claim.metadata?.name}=${r.storage}`)).toEqual([
      'data-web-1=2Gi',
      'data-web-2=2Gi',
    ]);
    expect(round(true, true).claimResizes).toBeUndefined();
  });

  it('counts the claims in status.volumeClaims', () => {
    const status = INPLACESTATEFULSET.status!(round(true).status, [], claims, set());
    expect(status.volumeClaims).toEqual([
      { volumeClaimName: 'data', compatibleReplicas: 0, compatibleReadyReplicas: 0 },
    ]);
  });
});
