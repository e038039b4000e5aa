// CloneSet volumeClaimTemplates on a real kubelet: OpenKruise v1.9.1's two CloneSet e2e cases
// for them, with Kruise's expectations and windows: "CloneSet Update with DisablePVCReuse=true"
// (pods deleted by someone get their claims back; with disablePVCReuse, new ones) and "CloneSet
// Update with VolumeClaimTemplate changes" (a change of the claim templates recreates pods and
// claims at the next template change, except under InPlaceOnly), polled as often as Kruise polls. Translated only for the API group
// (apps.kruise.io → apps.tailor.dev), the test images (tailor.local/busybox:v1 and :v2 for nginx,
// the new nginx, redis and httpd, alternating), the one small node (tiny cpu requests) and the
// storage: the claim templates name this file's StorageClass (local-storage.ts: hostPath volumes
// bound when the pod is scheduled), since the test bed has no default class.
//
// Owns: the CloneSets, pods and claims of its namespace, and the StorageClass and volumes it makes.
// Must not: touch another namespace's objects or any other StorageClass or volume.
import { afterEach, describe, expect, it } from '@jest/globals';
import type * as k8s from '@kubernetes/client-node';
import { LABEL_INSTANCE_ID, type CloneSetUpdateStrategy } from '../../src/api/types.js';
import type { Pod, Wire } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { createLocalStorage, type LocalStorage } from '../support/cluster/local-storage.js';
import { eventuallyEqual } from '../support/fixtures/gomega.js';
import { eventually } from '../support/cluster/testbed.js';
import {
  activePods,
  cloneSetPath,
  deleteCloneSetsAndPods,
  readCloneSet,
  type TestCloneSet,
} from '../support/fixtures/cloneset.js';
import {
  progressingAvailable as available,
  newKruiseCloneSet,
  progressingUpdated as updating,
  progressingWithoutTime,
  updateCloneSet,
  type Progressing,
} from '../support/fixtures/kruise-tester.js';

type Claim = Wire<k8s.V1PersistentVolumeClaim>;

const { client, ns } = controllerTestBed('volume-claims');

const SECOND = 1000;
const TEN_MINUTES = 600;
const CASE_TIMEOUT = 600_000;

let storage: LocalStorage | undefined;

// Each case's pods, claims and storage go with it.
afterEach(async () => {
  await deleteCloneSetsAndPods(client, ns);
  await client.delete(`/api/v1/namespaces/${ns}/persistentvolumeclaims`);
  await eventually(
    'the claims of the previous case to be gone',
    async () =>
      (await client.list<Claim>(`/api/v1/namespaces/${ns}/persistentvolumeclaims`)).items.length === 0
        ? true
        : undefined,
    60 * SECOND,
  );
  await storage?.remove();
  storage = undefined;
}, 240_000);

/** Kruise's NewCloneSet with its env, two 1Gi claim templates (of this file's class), minReadySeconds 10 and a 10-minute deadline. */
function newCloneSet(
  name: string,
  replicas: number,
  updateStrategy: CloneSetUpdateStrategy,
  className: string,
): TestCloneSet {
  const cs = newKruiseCloneSet(name, replicas, { ...updateStrategy });
  cs.spec.template.spec!.containers[0]!.env = [{ name: 'test', value: 'foo' }];
  cs.spec.minReadySeconds = 10;
  cs.spec.progressDeadlineSeconds = TEN_MINUTES;
  cs.spec.volumeClaimTemplates = ['data-vol1', 'data-vol2'].map((vol) => ({
    metadata: { name: vol },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: className },
  }));
  return cs;
}

const idOf = (obj: { metadata?: { labels?: Record<string, string> } }): string =>
  obj.metadata?.labels?.[LABEL_INSTANCE_ID] ?? '';
const status = async (name: string): Promise<NonNullable<TestCloneSet['status']>> =>
  (await readCloneSet(client, ns, name)).status ?? {};
const progressing = (name: string): Promise<Progressing | undefined> => progressingWithoutTime(client, ns, name);
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** Kruise's ListPVCForCloneSet: the namespace's claims not being deleted. */
async function listClaims(): Promise<Claim[]> {
  return (await client.list<Claim>(`/api/v1/namespaces/${ns}/persistentvolumeclaims`)).items.filter(
    (c) => !c.metadata?.deletionTimestamp,
  );
}

const controllerKindOf = (claim: Claim): string | undefined =>
  claim.metadata?.ownerReferences?.find((r) => r.controller)?.kind;
const storageOf = (claim: Claim): string | undefined => claim.spec?.resources?.requests?.storage;

/** Kruise's "delete pod": the pods deleted as a user would, then, after 3 s, every pod updated and available again within 120 s. */
async function deletePodsAndWait(name: string, pods: readonly Pod[]): Promise<void> {
  for (const pod of pods) await client.delete(`/api/v1/namespaces/${ns}/pods/${pod.metadata?.name}`);
  await sleep(3 * SECOND);
  const updatedAvailable = async (): Promise<number> => (await status(name)).updatedAvailableReplicas ?? 0;
  await eventuallyEqual('status.updatedAvailableReplicas', updatedAvailable, 4, 120 * SECOND, 3 * SECOND);
}

/** Kruise's checks of the claims: 8, each of a pod of `ids`, named as `names` (or none of them), controlled by the CloneSet. */
async function expectClaims(
  ids: ReadonlySet<string>,
  names: ReadonlySet<string | undefined>,
  sameNames: boolean,
): Promise<void> {
  const claims = await listClaims();
  expect(claims).toHaveLength(8);
  for (const claim of claims) {
    expect(ids.has(idOf(claim))).toBe(true);
    expect(names.has(claim.metadata?.name)).toBe(sameNames);
    expect(controllerKindOf(claim)).toBe('CloneSet');
  }
}

describe('OpenKruise v1.9.1 CloneSet volumeClaimTemplates cases', () => {
  it(
    'CloneSet Update with DisablePVCReuse=true',
    async () => {
      storage = await createLocalStorage(client, `${ns}-reuse`, 20);
      const name = 'clone-reuse';
      await client.create(cloneSetPath(ns), newCloneSet(name, 4, { type: 'ReCreate' }, storage.className));

      await eventuallyEqual('Progressing (updated)', () => progressing(name), updating, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('status.replicas', async () => (await status(name)).replicas ?? 0, 4, 3 * SECOND, SECOND);
      await eventuallyEqual(
        'status.readyReplicas',
        async () => (await status(name)).readyReplicas ?? 0,
        4,
        120 * SECOND,
        3 * SECOND,
      );

      const pods = await activePods(client, ns, name);
      expect(pods).toHaveLength(4);
      const instanceIds = new Set(pods.map(idOf));
      const claimNames = new Set((await listClaims()).map((c) => c.metadata?.name));
      await expectClaims(instanceIds, claimNames, true);

      await eventuallyEqual('Progressing (available)', () => progressing(name), available, 120 * SECOND, 3 * SECOND);
      const condition = await progressing(name);

      // delete pod, and reused pvc
      await deletePodsAndWait(name, pods);
      expect(await progressing(name)).toEqual(condition);
      await expectClaims(instanceIds, claimNames, true);

      // update cloneSet again, and DisablePVCReuse=true
      await updateCloneSet(client, ns, name, (cs) => {
        cs.spec.scaleStrategy = { ...cs.spec.scaleStrategy, disablePVCReuse: true };
      });
      await sleep(SECOND);
      expect(await progressing(name)).toEqual(condition);

      // delete pod, and pvcs are not reused (the replacements took the same names before)
      await deletePodsAndWait(name, pods);
      expect(await progressing(name)).toEqual(available);
      const newPods = await activePods(client, ns, name);
      expect(newPods).toHaveLength(4);
      await expectClaims(new Set(newPods.map(idOf)), claimNames, false);
    },
    CASE_TIMEOUT,
  );

  it(
    'CloneSet Update with VolumeClaimTemplate changes',
    async () => {
      storage = await createLocalStorage(client, `${ns}-vct`, 28);
      const name = 'clone-vct';
      const replicas = 4;
      await client.create(cloneSetPath(ns), newCloneSet(name, replicas, { type: 'ReCreate' }, storage.className));

      interface Seen {
        ids: Set<string>;
        claimNames: Set<string | undefined>;
        pods: Pod[];
        claims: Claim[];
      }
      /** Kruise's changeCloneSetAndWaitReady: change, wait until every pod is updated, ready and available. */
      async function changeAndWaitReady(change: (cs: TestCloneSet) => void): Promise<Seen> {
        await updateCloneSet(client, ns, name, change);
        await eventuallyEqual(
          'status.replicas',
          async () => (await status(name)).replicas ?? 0,
          replicas,
          3 * SECOND,
          SECOND,
        );
        await sleep(3 * SECOND);
        await eventuallyEqual(
          'status.updatedReadyReplicas at the observed generation',
          async () => {
            const cs = await readCloneSet(client, ns, name);
            return cs.status?.observedGeneration !== cs.metadata?.generation
              ? -1
              : (cs.status?.updatedReadyReplicas ?? 0);
          },
          replicas,
          120 * SECOND,
          3 * SECOND,
        );
        await eventuallyEqual('Progressing (available)', () => progressing(name), available, 120 * SECOND, 3 * SECOND);
        const pods = await activePods(client, ns, name);
        expect(pods).toHaveLength(replicas);
        const ids = new Set(pods.map(idOf));
        const claims = await listClaims();
        for (const claim of claims) expect(ids.has(idOf(claim))).toBe(true);
        return { ids, claimNames: new Set(claims.map((c) => c.metadata?.name)), pods, claims };
      }
      /** Kruise's checkPodsDoRecreate and checkPVCsDoRecreate. */
      function expectRecreated(before: Seen, after: Seen, recreated: boolean): void {
        expect(after.pods).toHaveLength(replicas);
        for (const pod of after.pods) expect(before.ids.has(idOf(pod))).toBe(!recreated);
        expect(after.claims).toHaveLength(replicas * 2);
        for (const claim of after.claims) {
          expect(after.ids.has(idOf(claim))).toBe(true);
          expect(before.ids.has(idOf(claim))).toBe(!recreated);
          expect(before.claimNames.has(claim.metadata?.name)).toBe(!recreated);
        }
      }
      /** Kruise's checkPVCSize1 (data-vol1 2Gi, data-vol2 1Gi) and checkPVCSize2 (both 2Gi). */
      function expectSizes(seen: Seen, vol1: string, vol2: string): void {
        expect(seen.claims).toHaveLength(replicas * 2);
        for (const claim of seen.claims)
          expect(storageOf(claim)).toBe(claim.metadata?.name?.includes('data-vol1') ? vol1 : vol2);
      }
      const image = (tag: string, type: CloneSetUpdateStrategy['type']) => (cs: TestCloneSet) => {
        cs.spec.template.spec!.containers[0]!.image = `tailor.local/busybox:${tag}`;
        cs.spec.updateStrategy = { type };
      };

      let seen = await changeAndWaitReady(() => undefined);

      // Update cloneSet image and volumeClaimTemplates
      let next = await changeAndWaitReady((cs) => {
        image('v2', 'InPlaceIfPossible')(cs);
        cs.spec.volumeClaimTemplates![0]!.spec.resources = { requests: { storage: '2Gi' } };
      });
      expectRecreated(seen, next, true);
      expectSizes(next, '2Gi', '1Gi');
      seen = next;

      // Update cloneSet only volumeClaimTemplates
      next = await changeAndWaitReady((cs) => {
        cs.spec.volumeClaimTemplates![1]!.spec.resources = { requests: { storage: '2Gi' } };
        cs.spec.updateStrategy = { type: 'InPlaceIfPossible' };
      });
      expectRecreated(seen, next, false);
      expectSizes(next, '2Gi', '1Gi');
      seen = next;

      // Update cloneSet image and vct size changed in previous step
      next = await changeAndWaitReady(image('v1', 'InPlaceIfPossible'));
      expectRecreated(seen, next, true);
      expectSizes(next, '2Gi', '2Gi');
      seen = next;

      // inplace-only update strategy with image change
      next = await changeAndWaitReady(image('v2', 'InPlaceOnly'));
      expectRecreated(seen, next, false);
      expectSizes(next, '2Gi', '2Gi');
      seen = next;

      // inplace-only update strategy with image and vct changes -> in-place update with pvc no changes
      next = await changeAndWaitReady((cs) => {
        image('v1', 'InPlaceOnly')(cs);
        for (const template of cs.spec.volumeClaimTemplates!)
          template.spec.resources = { requests: { storage: '3Gi' } };
      });
      expectRecreated(seen, next, false);
      expectSizes(next, '2Gi', '2Gi');
    },
    CASE_TIMEOUT,
  );
});
