// Table tests for the claims of spec.volumeClaimTemplates (src/workload/pure/claims.ts). The rows of
// claimsForPod, planClaims' deleteWithPod and reuseIds carry over the facts of OpenKruise
// v1.9.1's TestCreatePods, TestDeletePods and TestGetOrGenAvailableIDs (inputs and expected
// claims), restated in our notation; the disablePVCReuse rows those of its cleanup of claims.
import { describe, expect, it } from '@jest/globals';

import {
  ANNOTATION_VOLUME_CLAIM_TEMPLATES_HASH,
  LABEL_INSTANCE_ID,
  type VolumeClaimTemplate,
} from '../../../../src/api/types.js';
import type { Pod, WireCloneSet } from '../../../../src/api/wire.js';
import {
  claimName,
  claimsForPod,
  claimTemplatesChanged,
  claimTemplatesHash,
  planClaims,
  trimClaim,
  withClaimVolumes,
  type Claim,
  type ClaimPlan,
} from '../../../../src/workload/pure/claims.js';

const datadir: VolumeClaimTemplate = {
  metadata: { name: 'datadir' },
  spec: { resources: { requests: { storage: '10' } } },
};

function cloneSet(templates: VolumeClaimTemplate[] = [datadir], disablePVCReuse?: boolean): WireCloneSet {
  return {
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'foo', namespace: 'default', uid: 'test' },
    spec: {
      selector: { matchLabels: { foo: 'bar' } },
      template: { metadata: { labels: { foo: 'bar' } }, spec: { containers: [] } },
      volumeClaimTemplates: templates,
      ...(disablePVCReuse === undefined ? {} : { scaleStrategy: { disablePVCReuse } }),
    },
  };
}

const podOf = (id: string, extra: { terminating?: boolean; phase?: string } = {}): Pod => ({
  metadata: {
    name: `foo-${id}`,
    labels: { [LABEL_INSTANCE_ID]: id },
    ...(extra.terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  ...(extra.phase ? { status: { phase: extra.phase } } : {}),
});

const claimOf = (id: string, options: { deleting?: boolean; template?: string } = {}): Claim => ({
  metadata: {
    name: claimName(options.template ?? 'datadir', 'foo', id),
    labels: { [LABEL_INSTANCE_ID]: id, foo: 'bar' },
    ...(options.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
});

describe('claimsForPod', () => {
  it("makes one claim per template named <template>-<cloneset>-<id>, labelled with the selector and the id, owned by the CloneSet (Kruise's TestCreatePods)", () => {
    expect(claimsForPod(cloneSet(), 'id1')).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: 'datadir-foo-id1',
          namespace: 'default',
          labels: { [LABEL_INSTANCE_ID]: 'id1', foo: 'bar' },
          ownerReferences: [
            {
              apiVersion: 'apps.tailor.dev/v1alpha1',
              kind: 'CloneSet',
              name: 'foo',
              uid: 'test',
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: { resources: { requests: { storage: '10' } } },
      },
    ]);
  });

  it("keeps the template's own labels and annotations, the id label winning", () => {
    const tpl: VolumeClaimTemplate = {
      metadata: { name: 'logs', labels: { tier: 'db', [LABEL_INSTANCE_ID]: 'forged' }, annotations: { note: 'x' } },
      spec: {},
    };
    const [claim] = claimsForPod(cloneSet([tpl]), 'id2');
    expect(claim?.metadata?.labels).toEqual({ tier: 'db', foo: 'bar', [LABEL_INSTANCE_ID]: 'id2' });
    expect(claim?.metadata?.annotations).toEqual({ note: 'x' });
  });

  it('makes none without templates', () => {
    expect(claimsForPod(cloneSet([]), 'id1')).toEqual([]);
  });
});

describe('withClaimVolumes', () => {
  const pod: Pod = {
    metadata: { name: 'foo-id1', labels: { [LABEL_INSTANCE_ID]: 'id1' } },
    spec: {
      containers: [],
      volumes: [
        { name: 'datadir', emptyDir: {} },
        { name: 'home', hostPath: { path: '/home' } },
      ],
    },
  };

  it("mounts each template's claim as the volume of its name, replacing a template volume of that name, and records the templates' hash", () => {
    const got = withClaimVolumes(pod, cloneSet());
    expect(got.spec?.volumes).toEqual([
      { name: 'datadir', persistentVolumeClaim: { claimName: 'datadir-foo-id1' } },
      { name: 'home', hostPath: { path: '/home' } },
    ]);
    expect(got.metadata?.annotations?.[ANNOTATION_VOLUME_CLAIM_TEMPLATES_HASH]).toBe(claimTemplatesHash([datadir]));
  });

  it('leaves a pod alone without templates', () => {
    expect(withClaimVolumes(pod, cloneSet([]))).toBe(pod);
  });
});

describe('claimTemplatesHash and claimTemplatesChanged', () => {
  const bigger: VolumeClaimTemplate = {
    metadata: { name: 'datadir' },
    spec: { resources: { requests: { storage: '20' } } },
  };
  const other: VolumeClaimTemplate = { metadata: { name: 'logs' }, spec: {} };
  const born = (templates: VolumeClaimTemplate[]): Pod => withClaimVolumes(podOf('id1'), cloneSet(templates));

  it.each([
    { name: 'the same templates', podFrom: [datadir], now: [datadir], changed: false },
    { name: 'the same templates in another order', podFrom: [datadir, other], now: [other, datadir], changed: false },
    {
      name: 'only a template label changed',
      podFrom: [datadir],
      now: [{ ...datadir, metadata: { name: 'datadir', labels: { a: 'b' } } }],
      changed: false,
    },
    { name: 'a larger storage request', podFrom: [datadir], now: [bigger], changed: true },
    { name: 'a template added', podFrom: [datadir], now: [datadir, other], changed: true },
    { name: 'every template removed', podFrom: [datadir], now: [], changed: true },
    { name: 'no templates before or now', podFrom: [], now: [], changed: false },
    { name: 'templates added to a CloneSet that had none', podFrom: [], now: [datadir], changed: true },
  ])('$name: changed $changed', ({ podFrom, now, changed }) => {
    expect(claimTemplatesChanged(born(podFrom), cloneSet(now))).toBe(changed);
  });
});

describe('planClaims', () => {
  const plan = (input: { pods: Pod[]; claims: Claim[]; deleted?: Pod[]; disablePVCReuse?: boolean }): ClaimPlan =>
    planClaims({
      cloneSet: cloneSet([datadir], input.disablePVCReuse),
      pods: input.pods,
      claims: input.claims,
      deletedPods: input.deleted ?? [],
    });

  it("deletes the claims of the pods the CloneSet deletes and keeps the others (Kruise's TestDeletePods)", () => {
    const got = plan({
      pods: [podOf('id1'), podOf('id3')],
      claims: [claimOf('id1'), claimOf('id2'), claimOf('id3')],
      deleted: [podOf('id1'), podOf('id3')],
    });
    expect(Object.fromEntries(got.deleteWithPod)).toEqual({
      'foo-id1': ['datadir-foo-id1'],
      'foo-id3': ['datadir-foo-id3'],
    });
    expect(got.deleteNow).toEqual([]);
  });

  it("gives new pods the ids whose claims no pod has (Kruise's TestGetOrGenAvailableIDs)", () => {
    const got = plan({ pods: [podOf('a'), podOf('b')], claims: [claimOf('b'), claimOf('c')] });
    expect(got).toMatchObject({ reuseIds: ['c'], heldCreates: 0, deleteNow: [] });
    expect([...got.claimIds].sort()).toEqual(['b', 'c']);
  });

  it.each([
    {
      name: 'a pod deleted by someone and gone: its id is reused',
      pods: [],
      claims: [claimOf('x'), claimOf('x', { template: 'logs' })],
      want: { reuseIds: ['x'], heldCreates: 0, deleteNow: [] },
    },
    {
      name: 'a pod deleted by someone and still terminating: its replacement waits for the name',
      pods: [podOf('x', { terminating: true })],
      claims: [claimOf('x')],
      want: { reuseIds: [], heldCreates: 1, deleteNow: [] },
    },
    {
      name: 'a failed pod not being deleted: its replacement takes a new id, the claims wait for the pod to go',
      pods: [podOf('x', { phase: 'Failed' })],
      claims: [claimOf('x')],
      want: { reuseIds: [], heldCreates: 0, deleteNow: [] },
    },
    {
      name: 'a claim being deleted is never reused',
      pods: [],
      claims: [claimOf('x', { deleting: true })],
      want: { reuseIds: [], heldCreates: 0, deleteNow: [] },
    },
    {
      name: 'claims of live pods are neither reused nor deleted',
      pods: [podOf('x')],
      claims: [claimOf('x')],
      want: { reuseIds: [], heldCreates: 0, deleteNow: [] },
    },
    {
      name: 'disablePVCReuse: the claims of a gone pod are deleted, not reused',
      pods: [],
      claims: [claimOf('x')],
      disablePVCReuse: true,
      want: { reuseIds: [], heldCreates: 0, deleteNow: ['datadir-foo-x'] },
    },
    {
      name: 'disablePVCReuse: the claims of a terminating pod are deleted and nothing waits',
      pods: [podOf('x', { terminating: true }), podOf('y')],
      claims: [claimOf('x'), claimOf('y')],
      disablePVCReuse: true,
      want: { reuseIds: [], heldCreates: 0, deleteNow: ['datadir-foo-x'] },
    },
  ])('$name', ({ pods, claims, disablePVCReuse, want }) => {
    expect(plan({ pods, claims, ...(disablePVCReuse === undefined ? {} : { disablePVCReuse }) })).toMatchObject(want);
  });

  it('keeps every claim id, deleting ones too, out of fresh ids', () => {
    expect([...plan({ pods: [], claims: [claimOf('x', { deleting: true }), claimOf('y')] }).claimIds].sort()).toEqual([
      'x',
      'y',
    ]);
  });
});

describe('trimClaim', () => {
  it('keeps the name, the id label, the owners and the deletion mark, and drops the spec, status and other labels', () => {
    const claim: Claim = {
      ...claimsForPod(cloneSet(), 'id1')[0],
      status: { phase: 'Bound' },
    };
    claim.metadata = {
      ...claim.metadata,
      uid: 'u1',
      resourceVersion: '7',
      deletionTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [{}],
    };
    expect(trimClaim(claim)).toEqual({
      metadata: {
        name: 'datadir-foo-id1',
        namespace: 'default',
        uid: 'u1',
        resourceVersion: '7',
        labels: { [LABEL_INSTANCE_ID]: 'id1' },
        ownerReferences: claim.metadata.ownerReferences,
        deletionTimestamp: '2026-01-01T00:00:00Z',
      },
    });
  });

  it('keeps, for a kind with identities, its label and the storage requested and had, nothing else of spec or status', () => {
    const claim: Claim = {
      metadata: { name: 'data-web-0', labels: { [LABEL_INSTANCE_ID]: '0', 'set-label': 'web', other: 'x' } },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } }, storageClassName: 'fast' },
      status: { phase: 'Bound', capacity: { storage: '1Gi' }, conditions: [{ type: 'Resizing', status: 'True' }] },
    };
    expect(trimClaim(claim, 'set-label')).toEqual({
      metadata: { name: 'data-web-0', labels: { [LABEL_INSTANCE_ID]: '0', 'set-label': 'web' } },
      spec: { resources: { requests: { storage: '2Gi' } } },
      status: { capacity: { storage: '1Gi' } },
    });
    expect(trimClaim({ metadata: { name: 'pending' }, spec: {}, status: { phase: 'Pending' } }, 'set-label')).toEqual({
      metadata: { name: 'pending' },
    });
  });
});
