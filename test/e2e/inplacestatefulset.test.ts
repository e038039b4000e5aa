// The InPlaceStatefulSet on a real kubelet (issue 42): a StatefulSet manifest with only its
// apiVersion and kind changed runs; its pods are `<name>-<ordinal>`, created in ordinal order under
// OrderedReady, with the StatefulSet labels, a hostname in the governing Service's subdomain and a
// claim per ordinal; an image update and a cpu resize keep every pod's UID, node and claim; a
// deleted pod comes back with its name and claim; a scale-down removes the highest ordinal and
// keeps its claim (Retain). A resize shows in status.resize until done, and one no node can fit is
// Infeasible, held under onInfeasible Wait. The controller runs as the chart's identity (controllerTestBed).
// Owns: the sets, pods and claims of its namespace, and the StorageClass and volumes it makes.
// Must not: touch another namespace's objects or any other StorageClass or volume.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type * as k8s from '@kubernetes/client-node';
import type { Pod, Wire } from '../../src/api/wire.js';
import type { CloneSetStatus } from '../../src/api/types.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { createLocalStorage, type LocalStorage } from '../support/cluster/local-storage.js';
import { eventually, RESIZE_WITHOUT_RESTART, RUN_UNTIL_TERM, sizedContainer } from '../support/cluster/testbed.js';
import {
  expectEveryResizeReported,
  NOTHING_RESIZING,
  resizeCounts,
  sampleResizesDuring,
} from '../support/cluster/resize-watch.js';
import { TEST_CLONESET_LABEL } from '../support/fixtures/cloneset.js';
import {
  newStatefulSet,
  patchSet,
  readSet,
  setPods,
  setsPath,
  waitForRunningAndReady,
  type TestStatefulSet,
} from '../support/fixtures/stateful.js';

type Claim = Wire<k8s.V1PersistentVolumeClaim>;
interface StatefulSetLike {
  apiVersion: string;
  kind: string;
  metadata: { name: string; generation?: number; labels?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: CloneSetStatus;
}

const { client, ns } = controllerTestBed('ipsts');
const NAME = 'db';
const REPLICAS = 3;
const CASE_TIMEOUT = 300_000;
let storage: LocalStorage | undefined;

/** A native apps/v1 StatefulSet, as a user has it today. */
function nativeStatefulSet(className: string): StatefulSetLike {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: NAME },
    spec: {
      replicas: REPLICAS,
      serviceName: NAME,
      selector: { matchLabels: { app: NAME } },
      template: {
        metadata: { labels: { app: NAME } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'db',
              image: 'tailor.local/busybox:v1',
              imagePullPolicy: 'Never',
              command: RUN_UNTIL_TERM,
              resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
              resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: className,
            resources: { requests: { storage: '1Gi' } },
          },
        },
      ],
    },
  };
}

const podsOf = async (): Promise<Pod[]> =>
  (await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`)).items.filter((p) => !p.metadata?.deletionTimestamp);
const claimsOf = async (): Promise<Claim[]> =>
  (await client.list<Claim>(`/api/v1/namespaces/${ns}/persistentvolumeclaims`)).items;
const byName = (pods: readonly Pod[]): Map<string, Pod> => new Map(pods.map((p) => [p.metadata?.name ?? '', p]));
const ready = (pod: Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** Waits until the set's status says every pod is updated, current and ready at the generation it has now. */
async function settled(replicas: number): Promise<StatefulSetLike> {
  return eventually(
    `${NAME} settled at ${replicas} updated, ready pods`,
    async () => {
      const set = await client.get<StatefulSetLike>(setsPath(ns, NAME));
      const s = set.status;
      const done =
        s?.observedGeneration === set.metadata.generation &&
        s?.replicas === replicas &&
        s?.readyReplicas === replicas &&
        s?.updatedReplicas === replicas &&
        s?.currentRevision === s?.updateRevision &&
        s?.currentReplicas === replicas;
      return done ? set : undefined;
    },
    CASE_TIMEOUT,
  );
}

describe('InPlaceStatefulSet: a StatefulSet that updates in place', () => {
  let before: Map<string, Pod>;

  beforeAll(async () => {
    storage = await createLocalStorage(client, `ipsts-${ns}`.slice(0, 60), REPLICAS + 1);
  }, 60_000);
  afterAll(async () => {
    await client.delete(setsPath(ns, NAME)).catch(() => undefined);
    await eventually('the pods to be gone', async () => ((await podsOf()).length === 0 ? true : undefined), 120_000);
    await client.delete(`/api/v1/namespaces/${ns}/persistentvolumeclaims`);
    await storage?.remove();
  }, 240_000);

  it(
    'runs a StatefulSet manifest with only apiVersion and kind changed: ordinals in order, identity labels, hostnames, a claim per ordinal',
    async () => {
      const manifest = nativeStatefulSet(storage!.className);
      // Only apiVersion and kind change; the test label keeps `make dev`'s controller away (decision 5).
      const ported = { ...manifest, apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'InPlaceStatefulSet' };
      ported.metadata = { ...ported.metadata, labels: { [TEST_CLONESET_LABEL]: 'true' } };
      await client.create(setsPath(ns), ported);
      await settled(REPLICAS);
      const pods = (await podsOf()).sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
      expect(pods.map((p) => p.metadata?.name)).toEqual(['db-0', 'db-1', 'db-2']);
      for (const [ordinal, pod] of pods.entries()) {
        expect(pod.metadata?.labels?.['statefulset.kubernetes.io/pod-name']).toBe(`db-${ordinal}`);
        expect(pod.metadata?.labels?.['apps.kubernetes.io/pod-index']).toBe(String(ordinal));
        expect(pod.spec?.hostname).toBe(`db-${ordinal}`);
        expect(pod.spec?.subdomain).toBe(NAME);
        const volume = pod.spec?.volumes?.find((v) => v.name === 'data');
        expect(volume?.persistentVolumeClaim?.claimName).toBe(`data-db-${ordinal}`);
      }
      // OrderedReady: each pod was created once the one before it was Ready.
      const created = pods.map((p) => Date.parse(p.metadata?.creationTimestamp ?? ''));
      expect(created[0]! <= created[1]! && created[1]! <= created[2]!).toBe(true);
      const claims = await claimsOf();
      expect(claims.map((c) => c.metadata?.name).sort()).toEqual(['data-db-0', 'data-db-1', 'data-db-2']);
      before = byName(pods);
    },
    CASE_TIMEOUT,
  );

  it(
    'updates the image in place: same UIDs, nodes and claims, new image running',
    async () => {
      const manifest = nativeStatefulSet(storage!.className);
      const template = manifest.spec.template as { spec: { containers: Record<string, unknown>[] } };
      template.spec.containers[0]!.image = 'tailor.local/busybox:v2';
      await patchSet(client, ns, NAME, { spec: { template } });
      await settled(REPLICAS);
      const after = byName(await podsOf());
      for (const [name, pod] of before) {
        const now = after.get(name);
        expect(now?.metadata?.uid).toBe(pod.metadata?.uid);
        expect(now?.spec?.nodeName).toBe(pod.spec?.nodeName);
        expect(now?.spec?.containers[0]?.image).toBe('tailor.local/busybox:v2');
        expect(now?.status?.containerStatuses?.[0]?.image).toContain('busybox:v2');
        expect(ready(now!)).toBe(true);
      }
      before = after;
    },
    CASE_TIMEOUT,
  );

  it(
    'resizes cpu in place: same UIDs, the new request applied by the kubelet, no resize left in status',
    async () => {
      const manifest = nativeStatefulSet(storage!.className);
      const template = manifest.spec.template as { spec: { containers: Record<string, unknown>[] } };
      template.spec.containers[0]!.image = 'tailor.local/busybox:v2';
      template.spec.containers[0]!.resources = {
        requests: { cpu: '20m', memory: '16Mi' },
        limits: { cpu: '300m', memory: '64Mi' },
      };
      await patchSet(client, ns, NAME, { spec: { template } });
      await settled(REPLICAS);
      await eventually(
        'every pod running with its new cpu',
        async () => {
          const pods = await podsOf();
          const applied = pods.every((p) => p.status?.containerStatuses?.[0]?.resources?.requests?.cpu === '20m');
          return pods.length === REPLICAS && applied ? true : undefined;
        },
        CASE_TIMEOUT,
      );
      const after = byName(await podsOf());
      for (const [name, pod] of before) expect(after.get(name)?.metadata?.uid).toBe(pod.metadata?.uid);
      // The rollout's counts settle before the kubelet reports the resizes done; the status follows
      // the pods within seconds (the set was read with 3 resizing once, right after it settled).
      const set = await eventually(
        'no resize left in status',
        async () => {
          const s = await client.get<StatefulSetLike>(setsPath(ns, NAME));
          return (s.status?.resize?.resizing ?? 0) === 0 ? s : undefined;
        },
        15_000,
      );
      expect(set.status?.resize?.infeasible ?? 0).toBe(0);
    },
    CASE_TIMEOUT,
  );

  it(
    'brings a deleted pod back under its name, with its claim',
    async () => {
      const victim = before.get('db-1')!;
      await client.delete(`/api/v1/namespaces/${ns}/pods/db-1`);
      await eventually(
        'db-1 back, new, ready',
        async () => {
          const pod = byName(await podsOf()).get('db-1');
          return pod && pod.metadata?.uid !== victim.metadata?.uid && ready(pod) ? pod : undefined;
        },
        CASE_TIMEOUT,
      );
      const pod = byName(await podsOf()).get('db-1');
      expect(pod?.spec?.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName).toBe('data-db-1');
      expect((await claimsOf()).map((c) => c.metadata?.name).sort()).toEqual(['data-db-0', 'data-db-1', 'data-db-2']);
    },
    CASE_TIMEOUT,
  );

  it(
    'scales down from the highest ordinal and keeps its claim',
    async () => {
      await patchSet(client, ns, NAME, { spec: { replicas: 2 } });
      await settled(2);
      await eventually(
        'db-2 gone',
        async () => ((await podsOf()).some((p) => p.metadata?.name === 'db-2') ? undefined : true),
        CASE_TIMEOUT,
      );
      expect((await podsOf()).map((p) => p.metadata?.name).sort()).toEqual(['db-0', 'db-1']);
      expect((await claimsOf()).map((c) => c.metadata?.name).sort()).toEqual(['data-db-0', 'data-db-1', 'data-db-2']);
    },
    CASE_TIMEOUT,
  );
});

describe('InPlaceStatefulSet resize states', () => {
  const RS = 'rs';
  const sized = (cpu: string, memory: string): Record<string, unknown> =>
    sizedContainer(cpu, memory, { resizePolicy: RESIZE_WITHOUT_RESTART });
  const setResources = (set: TestStatefulSet, cpu: string, memory: string): Promise<void> =>
    patchSet(client, ns, RS, {
      spec: {
        template: { ...set.spec.template, spec: { ...set.spec.template.spec, containers: [sized(cpu, memory)] } },
      },
    });
  it(
    'reports a resize in status.resize until it is done, and one above node allocatable as Infeasible, held under onInfeasible Wait',
    async () => {
      const set = newStatefulSet(RS, 1, {
        updateStrategy: { type: 'RollingUpdate', resizeStrategy: { onInfeasible: 'Wait' } },
      });
      set.spec.template.spec.containers = [sized('50m', '32Mi')];
      await client.create(setsPath(ns), set);
      const [pod] = await waitForRunningAndReady(client, ns, 1);

      // status.resize as the user would watch it: a state while the kubelet resizes, empty after.
      const samples = await sampleResizesDuring(
        async () => ({ resize: (await readSet(client, ns, RS)).status?.resize, pods: await setPods(client, ns) }),
        async () => {
          await setResources(set, '100m', '64Mi');
          await eventually(
            'rs resized',
            async () => {
              const now = await readSet(client, ns, RS);
              const [p] = await setPods(client, ns);
              const applied = p?.status?.containerStatuses?.[0]?.resources?.requests?.cpu === '100m';
              const s = now.status;
              return s?.observedGeneration === now.metadata.generation &&
                s?.updatedReplicas === 1 &&
                (s.resize?.resizing ?? 1) === 0 &&
                applied
                ? true
                : undefined;
            },
            CASE_TIMEOUT,
          );
        },
      );
      expectEveryResizeReported('ipsts', samples);
      expect(resizeCounts((await readSet(client, ns, RS)).status?.resize)).toBe(NOTHING_RESIZING);

      // 500 cpus fit no node: Infeasible, named in ResizeBlocked, the pod kept as it is.
      await setResources(set, '500', '64Mi');
      const blocked = await eventually(
        'rs Infeasible',
        async () => {
          const s = (await readSet(client, ns, RS)).status;
          const condition = s?.conditions?.find((c) => c.type === 'ResizeBlocked' && c.status === 'True');
          return s?.resize?.infeasible === 1 && condition ? s : undefined;
        },
        CASE_TIMEOUT,
      );
      expect(blocked.resize?.pods?.[0]).toMatchObject({ name: `${RS}-0`, state: 'Infeasible' });
      expect(blocked.conditions?.find((c) => c.type === 'ResizeBlocked')?.message).toContain(`${RS}-0`);
      const [still] = await setPods(client, ns);
      expect(still?.metadata?.uid).toBe(pod?.metadata?.uid);
    },
    CASE_TIMEOUT,
  );
});
