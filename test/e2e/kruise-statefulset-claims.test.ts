// OpenKruise's Advanced StatefulSet end-to-end cases about identity and claims
// (test/e2e/apps/v1beta1/statefulset.go, the "StatefulSet v1beta1" describe), run against Tailor's
// InPlaceStatefulSet on a real kubelet with Kruise's expectations. Translated only for the API
// group and kind (apps.kruise.io/StatefulSet → apps.tailor.dev/InPlaceStatefulSet) and the image
// (tailor.local/busybox for nginx); each pod has Kruise's `datadir` claim of the bed's default
// StorageClass (local-path), as Kruise's use the cluster's. The other cases of that describe are in
// kruise-statefulset.test.ts.
//   Basic StatefulSet functionality: should provide basic identity; should adopt matching orphans
//     and release non-matching pods; should not deadlock when a pod's predecessor fails (ordinal 1
//     is held back for 10 s, not Kruise's minute, as in the ordered-scaling case)
//   Non-retain StatefulSetPersistentVolumeClaimPolicy: should delete PVCs with a WhenDeleted
//     policy; with a OnScaledown policy; with a OnScaledown policy and range reserveOrdinals=[0,2-5];
//     after adopting pod (WhenDeleted); after adopting pod (WhenScaled) (the orphaned pod is waited
//     for until adopted again, which Kruise leaves to timing); and Tailor's own: a policy changed
//     after the claims exist applies to them (decision 93)
//   Automatically recreate PVC for pending pod when PVC is missing: PVC should be recreated when
//     pod is pending due to missing PVC (the pod is pinned by a node label of its own instead of
//     Kruise's cordon, so the other files' pods keep every node)
// Owns: the sets, pods and claims of its namespace. Must not: touch another namespace's objects.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { eventually } from '../support/cluster/testbed.js';
import {
  newStatefulSet,
  patchSet,
  readSet,
  setPods,
  setsPath,
  STATEFUL_SET_TIMEOUT,
  waitForRunningAndReady,
  type TestStatefulSet,
} from '../support/fixtures/stateful.js';
import { pauseNewPods, statefulTester, withDataDir } from '../support/fixtures/stateful-tester.js';

const { client, ns } = controllerTestBed('kruise-sts-claims');
const NAME = 'ss2';
const nameOf = (pod: Pod): string => pod.metadata?.name ?? '';
const tester = statefulTester(client, ns);
const { exec, confirmPodCount, podByName, execInPods, checkMount, saturate, resumeNextPod, waitForRunning } = tester;
afterEach(() => tester.cleanUp(), 300_000);

async function create(set: TestStatefulSet): Promise<void> {
  await client.create(setsPath(ns), set);
}

describe('StatefulSet v1beta1 (Kruise) on InPlaceStatefulSet: Basic StatefulSet functionality, identity and claims', () => {
  it(
    'should provide basic identity',
    async () => {
      const ss = pauseNewPods(withDataDir(newStatefulSet(NAME, 3)));
      await create(ss);
      await saturate(3);
      await checkMount('/data');
      for (const pod of await setPods(client, ns)) expect(exec(nameOf(pod), 'printf $(hostname)')).toBe(nameOf(pod));
      expect((await readSet(client, ns, NAME)).spec['serviceName']).toBe('test');
      await execInPods('echo $(hostname) | dd of=/data/hostname conv=fsync');

      // Kruise's Restart: scaled to 0, seen at 0 by the controller, scaled back.
      await patchSet(client, ns, NAME, { spec: { replicas: 0 } });
      await eventually('status.replicas 0', async () =>
        (await readSet(client, ns, NAME)).status?.replicas === 0 ? true : undefined,
      );
      await patchSet(client, ns, NAME, { spec: { replicas: 3 } });
      await waitForRunningAndReady(client, ns, 3);
      await checkMount('/data');
      await execInPods('if [ "$(cat /data/hostname)" = "$(hostname)" ]; then exit 0; else exit 1; fi');
    },
    STATEFUL_SET_TIMEOUT,
  );

  it(
    'should adopt matching orphans and release non-matching pods',
    async () => {
      await create(pauseNewPods(withDataDir(newStatefulSet(NAME, 1))));
      const set = await readSet(client, ns, NAME);
      await saturate(1);
      const [pod] = await setPods(client, ns);
      const path = `/api/v1/namespaces/${ns}/pods/${nameOf(pod!)}`;
      const controller = async (): Promise<{ kind?: string; name?: string; uid?: string } | null> =>
        (await client.get<Pod>(path)).metadata?.ownerReferences?.find((o) => o.controller === true) ?? null;
      const ownedBySet = { kind: 'InPlaceStatefulSet', name: NAME, uid: set.metadata.uid };
      expect(await controller()).toMatchObject(ownedBySet);

      // Orphaned, the pod is adopted again.
      await client.patch(path, { metadata: { ownerReferences: null } }, 'merge');
      await eventually('the pod readopted', async () =>
        (await controller())?.uid === set.metadata.uid ? true : undefined,
      );
      expect(await controller()).toMatchObject(ownedBySet);

      // Its labels removed, it is released.
      const labels = pod!.metadata?.labels;
      await client.patch(path, { metadata: { labels: null } }, 'merge');
      await eventually('the pod released', async () => ((await controller()) === null ? true : undefined));

      // Its labels back, it is adopted again.
      await client.patch(path, { metadata: { labels } }, 'merge');
      await eventually('the pod readopted', async () =>
        (await controller())?.uid === set.metadata.uid ? true : undefined,
      );
      expect(await controller()).toMatchObject(ownedBySet);
    },
    STATEFUL_SET_TIMEOUT,
  );

  it(
    "should not deadlock when a pod's predecessor fails",
    async () => {
      await create(pauseNewPods(withDataDir(newStatefulSet(NAME, 2))));
      // Kruise waits a minute; ordinal 1 must not appear while ordinal 0 is not Ready.
      await waitForRunning(1, 0);
      await confirmPodCount(1, 10_000);
      await resumeNextPod();
      await waitForRunning(2, 1);

      // One healthy and one unhealthy pod: the healthy one deleted comes back (its claim holds
      // the resume file, so it is Ready again) though its successor is not Ready.
      await client.delete(`/api/v1/namespaces/${ns}/pods/${NAME}-0`, { gracePeriodSeconds: 0 });
      await eventually('ss2-0 recreated', async () => {
        const pod = await podByName(`${NAME}-0`);
        return pod && pod.metadata?.uid !== undefined ? pod : undefined;
      });
      await waitForRunning(2, 1);
      await resumeNextPod();
      await waitForRunningAndReady(client, ns, 2);
    },
    STATEFUL_SET_TIMEOUT,
  );
});

describe('StatefulSet v1beta1 (Kruise) on InPlaceStatefulSet: Non-retain StatefulSetPersistentVolumeClaimPolicy', () => {
  const claimsPath = (): string => `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
  type ClaimLike = { metadata?: { name?: string; ownerReferences?: { kind?: string; uid?: string }[] } };
  const retained = (policy: Record<string, string>, extra: Record<string, unknown> = {}): TestStatefulSet =>
    withDataDir(newStatefulSet(NAME, 3, { persistentVolumeClaimRetentionPolicy: policy, ...extra }));

  /** Kruise's verifyStatefulSetPVCsExist(WithOwnerRefs): exactly the claims of these ordinals, owned by the set or not. */
  async function verifyClaims(ordinals: number[], owned?: boolean): Promise<void> {
    const uid = (await readSet(client, ns, NAME).catch(() => undefined))?.metadata.uid;
    await eventually(
      `the claims of ordinals [${ordinals.join(', ')}]${owned === undefined ? '' : owned ? ', owned by the set' : ', of no owner'}`,
      async () => {
        const claims = (await client.list<ClaimLike>(claimsPath())).items.filter((c) =>
          new RegExp(`^datadir-${NAME}-\\d+$`).test(c.metadata?.name ?? ''),
        );
        const found = claims.map((c) => Number(/-(\d+)$/.exec(c.metadata?.name ?? '')?.[1])).sort((a, b) => a - b);
        if (JSON.stringify(found) !== JSON.stringify([...ordinals].sort((a, b) => a - b))) return undefined;
        const ownedBySet = (c: ClaimLike): boolean =>
          c.metadata?.ownerReferences?.some((o) => o.kind === 'InPlaceStatefulSet' && o.uid === uid) === true;
        return owned === undefined || claims.every((c) => ownedBySet(c) === owned) ? true : undefined;
      },
      STATEFUL_SET_TIMEOUT,
    );
  }

  const orphan = (ordinal: number): Promise<unknown> =>
    client.patch(`/api/v1/namespaces/${ns}/pods/${NAME}-${ordinal}`, { metadata: { ownerReferences: null } }, 'merge');
  const adopted = (ordinal: number): Promise<unknown> =>
    eventually(`${NAME}-${ordinal} adopted again`, async () => {
      const pod = await client.get<Pod>(`/api/v1/namespaces/${ns}/pods/${NAME}-${ordinal}`);
      return pod.metadata?.ownerReferences?.some((o) => o.controller === true) ? true : undefined;
    });

  it(
    'should delete PVCs with a WhenDeleted policy',
    async () => {
      await create(retained({ whenDeleted: 'Delete' }));
      await verifyClaims([0, 1, 2], true);
      await client.delete(setsPath(ns, NAME));
      await verifyClaims([]);
    },
    STATEFUL_SET_TIMEOUT,
  );

  it(
    'should delete PVCs with a OnScaledown policy',
    async () => {
      await create(retained({ whenScaled: 'Delete' }));
      await verifyClaims([0, 1, 2]);
      await patchSet(client, ns, NAME, { spec: { replicas: 1 } });
      await verifyClaims([0]);
    },
    STATEFUL_SET_TIMEOUT,
  );

  it(
    'should delete PVCs with a OnScaledown policy and range reserveOrdinals=[0,2-5]',
    async () => {
      await create(retained({ whenScaled: 'Delete' }, { reserveOrdinals: [0, '2-5'] }));
      await verifyClaims([1, 6, 7]);
      await patchSet(client, ns, NAME, { spec: { replicas: 1 } });
      await verifyClaims([1]);
    },
    STATEFUL_SET_TIMEOUT,
  );

  it(
    'should delete PVCs after adopting pod (WhenDeleted)',
    async () => {
      await create(retained({ whenDeleted: 'Delete' }));
      await verifyClaims([0, 1, 2], true);
      await waitForRunningAndReady(client, ns, 3);
      await orphan(2);
      await adopted(2);
      await client.delete(setsPath(ns, NAME));
      await verifyClaims([]);
    },
    STATEFUL_SET_TIMEOUT,
  );

  it(
    'should delete PVCs after adopting pod (WhenScaled)',
    async () => {
      await create(retained({ whenScaled: 'Delete' }));
      await verifyClaims([0, 1, 2]);
      await waitForRunningAndReady(client, ns, 3);
      await orphan(1);
      await adopted(1);
      await patchSet(client, ns, NAME, { spec: { replicas: 1 } });
      await verifyClaims([0]);
    },
    STATEFUL_SET_TIMEOUT,
  );

  // Tailor's own: the policy is mutable, as the native one, and claims made before follow it.
  it(
    'a policy changed after the claims were made applies to them: owned under Delete, of no owner under Retain again',
    async () => {
      await create(retained({ whenDeleted: 'Retain' }));
      await verifyClaims([0, 1, 2], false);
      await patchSet(client, ns, NAME, { spec: { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' } } });
      await verifyClaims([0, 1, 2], true);
      await patchSet(client, ns, NAME, { spec: { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain' } } });
      await verifyClaims([0, 1, 2], false);
    },
    STATEFUL_SET_TIMEOUT,
  );
});

describe('StatefulSet v1beta1 (Kruise) on InPlaceStatefulSet: Automatically recreate PVC for pending pod when PVC is missing', () => {
  // Kruise cordons the pod's node; here the set is pinned by a node label of this namespace's own,
  // taken off and put back, so no other test's pods lose a node meanwhile (decision 98).
  const PIN = `tailor.dev/pin-${ns}`.slice(0, 63);
  const labelNode = (node: string, on: boolean): Promise<unknown> =>
    client.patch(`/api/v1/nodes/${node}`, { metadata: { labels: { [PIN]: on ? 'yes' : null } } }, 'merge');
  let pinned = '';
  afterEach(async () => {
    if (pinned) await labelNode(pinned, false);
  });

  it(
    'PVC should be recreated when pod is pending due to missing PVC',
    async () => {
      pinned = (await client.list<{ metadata: { name: string } }>('/api/v1/nodes')).items[0]!.metadata.name;
      await labelNode(pinned, true);
      const ss = withDataDir(newStatefulSet(NAME, 1));
      ss.spec.template.spec['nodeSelector'] = { [PIN]: 'yes' };
      await create(ss);
      const [first] = await waitForRunningAndReady(client, ns, 1);
      expect(first!.spec?.nodeName).toBe(pinned);

      await labelNode(pinned, false);
      await client.delete(`/api/v1/namespaces/${ns}/pods/${nameOf(first!)}`);
      await eventually(
        'the new pod pending and unschedulable',
        async () => {
          const pod = await podByName(`${NAME}-0`);
          const unscheduled = pod?.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False');
          return pod && pod.metadata?.uid !== first!.metadata?.uid && unscheduled ? pod : undefined;
        },
        120_000,
      );
      const claims = `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
      const old = await client.get<{ metadata: { uid: string } }>(`${claims}/datadir-${NAME}-0`);
      await client.delete(`${claims}/datadir-${NAME}-0`);
      await eventually(
        'the old claim gone',
        async () => {
          const now = await client
            .get<{ metadata: { uid: string } }>(`${claims}/datadir-${NAME}-0`)
            .catch(() => undefined);
          return now?.metadata.uid !== old.metadata.uid ? true : undefined;
        },
        120_000,
      );

      await labelNode(pinned, true);
      const [back] = await waitForRunningAndReady(client, ns, 1);
      expect(back!.spec?.nodeName).toBe(pinned);
      const remade = await client.get<{ metadata: { uid: string }; status?: { phase?: string } }>(
        `${claims}/datadir-${NAME}-0`,
      );
      expect(remade.metadata.uid).not.toBe(old.metadata.uid);
      expect(remade.status?.phase).toBe('Bound');
    },
    STATEFUL_SET_TIMEOUT,
  );
});
