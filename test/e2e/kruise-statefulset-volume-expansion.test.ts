// OpenKruise's Advanced StatefulSet "VolumeExpansion" end-to-end cases (test/e2e/apps/v1beta1/
// statefulset.go, v1.9.1) run against Tailor's InPlaceStatefulSet with
// volumeClaimUpdateStrategy InPlace (KEP-4650's name for Kruise's OnPodRollingUpdate; decision 98),
// on a real kubelet, with the bed's StorageClasses of Kruise's names: allow-volume-expansion and
// disallow-volume-expansion (hack/csi-hostdir: a CSI driver, external-provisioner and
// external-resizer). Kruise's expectations, translated for the API group, kind and image:
//   Resize PVC: inplace_expand_vct_with_sc_can_expand (image + 1Gi→2Gi, in place: the pods keep
//     their UIDs and their data)
//   Resize PVC only: inplace_with_2sc_can_expand (no image change);
//     inplace_expand_only_cannot_expand_with_mixed_sc: Kruise's webhook refuses the set update;
//     Tailor has no webhook (the API server cannot read a StorageClass in CEL), so the API server
//     refuses the claim's resize instead and the set says so: FailedUpdate at once, Stalled a
//     minute later (decision 75), with the claim's name, and no pod is touched (decision 98)
//   Resize PVC with rollback (ReCreate, as Kruise's): partition 2, rollback only image;
//     partition 2, rollback image and pvc size
// Owns: the sets, pods and claims of its namespace. Must not: touch another namespace's objects.
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Pod } from '../../src/api/wire.js';
import { startExpandableStorage } from '../support/cluster/components.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { eventually } from '../support/cluster/testbed.js';
import {
  newStatefulSet,
  patchSet,
  readSet,
  revisionOf,
  setPods,
  setsPath,
  STATEFUL_SET_TIMEOUT,
  waitForRollingUpdate,
  waitForRunningAndReady,
  type TestStatefulSet,
} from '../support/fixtures/stateful.js';
import { statefulTester } from '../support/fixtures/stateful-tester.js';

const { client, ns } = controllerTestBed('kruise-sts-volumes');
const NAME = 'ss';
const EXPANDABLE = 'allow-volume-expansion';
const FIXED = 'disallow-volume-expansion';
const tester = statefulTester(client, ns);
// The classes' parts build here on a cold cache (about 9 minutes at the build's low priority).
beforeAll(() => startExpandableStorage(), 1_500_000);
afterEach(() => tester.cleanUp(), 300_000);

interface ClaimView {
  metadata: { name: string; uid: string };
  spec: { resources: { requests: { storage: string } } };
  status?: { capacity?: { storage?: string } };
}

const claimsPath = `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
const claimsOf = async (template: string): Promise<ClaimView[]> =>
  (await client.list<ClaimView>(claimsPath)).items.filter((c) => c.metadata.name.startsWith(`${template}-${NAME}-`));
const nameOf = (pod: Pod): string => pod.metadata?.name ?? '';
const uids = (pods: Pod[]): string[] => pods.map((p) => p.metadata?.uid ?? '');

/** Kruise's NewStatefulSet with one claim template per class, each mounted at /<template>, InPlace. */
function setWithClaims(classes: Record<string, string>, spec: Record<string, unknown> = {}): TestStatefulSet {
  const set = newStatefulSet(NAME, 3, { volumeClaimUpdateStrategy: { type: 'InPlace' }, ...spec });
  set.spec['volumeClaimTemplates'] = Object.entries(classes).map(([name, storageClassName]) => ({
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: '1Gi' } } },
  }));
  set.spec.template.spec.containers[0]!['volumeMounts'] = Object.keys(classes).map((name) => ({
    name,
    mountPath: `/${name}`,
  }));
  return set;
}

/** The templates' storage set to `storage` (all, or those named), with the image too when given. */
async function resize(names: string[], storage: string, image?: string): Promise<void> {
  const set = await readSet(client, ns, NAME);
  const templates = (
    set.spec['volumeClaimTemplates'] as { metadata: { name: string }; spec: Record<string, unknown> }[]
  ).map((t) =>
    names.includes(t.metadata.name) ? { ...t, spec: { ...t.spec, resources: { requests: { storage } } } } : t,
  );
  const containers = set.spec.template.spec.containers.map((c) => (image ? { ...c, image } : c));
  await patchSet(client, ns, NAME, {
    spec: { volumeClaimTemplates: templates, template: { spec: { containers } } },
  });
}

/** Kruise's wait: every claim of the template at `storage` in spec and capacity, and status.volumeClaims saying so for `ready` pods. */
async function waitForClaims(template: string, storage: string, ready = 3): Promise<void> {
  await eventually(
    `${ready} claims of ${template} at ${storage}`,
    async () => {
      const grown = (await claimsOf(template)).filter(
        (c) => c.spec.resources.requests.storage === storage && c.status?.capacity?.storage === storage,
      );
      const status = (await readSet(client, ns, NAME)).status?.volumeClaims?.find(
        (v) => v.volumeClaimName === template,
      );
      return grown.length === ready && status?.compatibleReadyReplicas === ready ? true : undefined;
    },
    STATEFUL_SET_TIMEOUT,
  );
}

async function createAndWait(set: TestStatefulSet): Promise<Pod[]> {
  await client.create(setsPath(ns), set);
  return waitForRunningAndReady(client, ns, 3);
}

describe('StatefulSet v1beta1 (Kruise) on InPlaceStatefulSet: VolumeExpansion', () => {
  it(
    'Resize PVC: inplace_expand_vct_with_sc_can_expand (the image and the claims change; the pods keep their UIDs and data)',
    async () => {
      const before = await createAndWait(setWithClaims({ data: EXPANDABLE }));
      await tester.execInPods('echo warm > /data/state');
      await resize(['data'], '2Gi', 'tailor.local/busybox:v2');
      await waitForClaims('data', '2Gi');
      await waitForRollingUpdate(client, ns, NAME);
      const after = await setPods(client, ns);
      expect(uids(after)).toEqual(uids(before));
      for (const pod of after) {
        expect(pod.spec?.containers[0]?.image).toBe('tailor.local/busybox:v2');
        expect(tester.exec(nameOf(pod), 'cat /data/state').trim()).toBe('warm');
      }
      expect((await readSet(client, ns, NAME)).status?.volumeClaims).toEqual([
        { volumeClaimName: 'data', compatibleReplicas: 3, compatibleReadyReplicas: 3 },
      ]);
    },
    STATEFUL_SET_TIMEOUT,
  );

  it(
    'Resize PVC only: inplace_with_2sc_can_expand (no image change: the claims follow, no pod restarts)',
    async () => {
      const before = await createAndWait(setWithClaims({ data: EXPANDABLE, logs: EXPANDABLE }));
      await resize(['data', 'logs'], '2Gi');
      await waitForClaims('data', '2Gi');
      await waitForClaims('logs', '2Gi');
      const after = await setPods(client, ns);
      expect(uids(after)).toEqual(uids(before));
      for (const pod of after) expect(pod.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    },
    STATEFUL_SET_TIMEOUT,
  );

  it(
    'Resize PVC only: inplace_expand_only_cannot_expand_with_mixed_sc (the API server refuses the resize; the set is Stalled and no pod moves)',
    async () => {
      const before = await createAndWait(setWithClaims({ data: EXPANDABLE, logs: FIXED }));
      await resize(['logs'], '2Gi');
      const stalled = await eventually(
        'Stalled for the refused resize',
        async () => {
          const set = await readSet(client, ns, NAME);
          const c = set.status?.conditions?.find((x) => x.type === 'Stalled');
          return c?.status === 'True' ? c : undefined;
        },
        180_000,
      );
      expect(stalled.message).toMatch(/expand claim logs-ss-\d/);
      const failed = (await readSet(client, ns, NAME)).status?.conditions?.find((x) => x.type === 'FailedUpdate');
      expect(failed?.status).toBe('True');
      for (const claim of await claimsOf('logs')) expect(claim.spec.resources.requests.storage).toBe('1Gi');
      expect((await readSet(client, ns, NAME)).status?.volumeClaims).toEqual([
        { volumeClaimName: 'data', compatibleReplicas: 3, compatibleReadyReplicas: 3 },
        { volumeClaimName: 'logs', compatibleReplicas: 0, compatibleReadyReplicas: 0 },
      ]);
      expect(uids(await setPods(client, ns))).toEqual(uids(before));
    },
    STATEFUL_SET_TIMEOUT,
  );

  describe('Resize PVC with rollback (ReCreate, partition 2)', () => {
    /** Kruise's shared flow: image and 2Gi with partition 2; only pod 2 updates and only its claim grows. */
    async function updateWithPartition(): Promise<string> {
      const set = setWithClaims(
        { data: EXPANDABLE },
        { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate', partition: 2 } } },
      );
      await createAndWait(set);
      const currentRevision = (await readSet(client, ns, NAME)).status?.currentRevision ?? '';
      await resize(['data'], '2Gi', 'tailor.local/busybox:v2');
      await waitForClaims('data', '2Gi', 1);
      const pods = await waitForRunningAndReady(client, ns, 3);
      const updateRevision = (await readSet(client, ns, NAME)).status?.updateRevision ?? '';
      for (const pod of pods) {
        const updated = Number(nameOf(pod).split('-').pop()) >= 2;
        expect(pod.spec?.containers[0]?.image).toBe(updated ? 'tailor.local/busybox:v2' : 'tailor.local/busybox:v1');
        expect(revisionOf(pod)).toBe(updated ? updateRevision : currentRevision);
      }
      return currentRevision;
    }

    it(
      'partition 2, rollback only image: every claim reaches 2Gi, then follows to 3Gi',
      async () => {
        await updateWithPartition();
        await resize([], '2Gi', 'tailor.local/busybox:v1');
        await patchSet(client, ns, NAME, { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
        await waitForClaims('data', '2Gi');
        await resize(['data'], '3Gi');
        await waitForClaims('data', '3Gi');
      },
      STATEFUL_SET_TIMEOUT,
    );

    it(
      'partition 2, rollback image and pvc size: a larger claim is compatible and is never shrunk',
      async () => {
        await updateWithPartition();
        await resize(['data'], '1Gi', 'tailor.local/busybox:v1');
        await patchSet(client, ns, NAME, { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
        await waitForRollingUpdate(client, ns, NAME);
        await eventually(
          'every claim compatible and ready',
          async () => {
            const status = (await readSet(client, ns, NAME)).status?.volumeClaims?.[0];
            return status?.compatibleReplicas === 3 && status.compatibleReadyReplicas === 3 ? true : undefined;
          },
          STATEFUL_SET_TIMEOUT,
        );
        const sizes = (await claimsOf('data')).map((c) => c.spec.resources.requests.storage).sort();
        expect(sizes).toEqual(['1Gi', '1Gi', '2Gi']);
      },
      STATEFUL_SET_TIMEOUT,
    );
  });
});
