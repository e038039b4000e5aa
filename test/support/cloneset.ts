// Helpers for tests that drive CloneSets through the real API server: create/patch/read
// CloneSets, list their pods, and wait for a condition with a clear timeout message.
import type { CloneSet } from '../../src/api/types.js';
import type { KubeClient } from '../../src/runtime/kube-client.js';
import type { Pod, Wire } from '../../src/api/wire.js';
import { eventually } from './testbed.js';

export type TestCloneSet = Wire<CloneSet>;

/** Carried by every CloneSet a test creates; `make dev`'s controller skips them (decision 5). */
export const TEST_CLONESET_LABEL = 'tailor.dev/test';

export const cloneSetPath = (ns: string, name = ''): string =>
  `/apis/apps.tailor.dev/v1alpha1/namespaces/${ns}/clonesets${name ? `/${name}` : ''}`;

export function cloneSetManifest(name: string, spec: Record<string, unknown>, podSpec: Record<string, unknown> = {}): TestCloneSet {
  return {
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'CloneSet',
    // The label keeps `make dev`'s in-cluster controller away: the test's own controller acts.
    metadata: { name, labels: { [TEST_CLONESET_LABEL]: 'true' } },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never', command: ['/bin/sleep', '3600'] }],
          ...podSpec,
        },
      },
      ...spec,
    },
  };
}

export async function activePods(client: KubeClient, ns: string, app: string): Promise<Pod[]> {
  const list = await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: `app=${app}` });
  return list.items.filter((p) => !p.metadata?.deletionTimestamp);
}

export async function readCloneSet(client: KubeClient, ns: string, name: string): Promise<TestCloneSet> {
  return client.get<TestCloneSet>(cloneSetPath(ns, name));
}

/** Waits until the CloneSet's status has observed its generation and `check` holds. */
export async function waitForCloneSet(
  client: KubeClient,
  ns: string,
  name: string,
  what: string,
  check: (cs: TestCloneSet, pods: Pod[]) => boolean,
  timeoutMs = 60_000,
): Promise<TestCloneSet> {
  let last = '';
  try {
    return await eventually(
      what,
      async () => {
        const cs = await readCloneSet(client, ns, name);
        const pods = await activePods(client, ns, name);
        last = JSON.stringify({ status: cs.status, pods: pods.map((p) => p.metadata?.name) });
        const observed = (cs.status?.observedGeneration ?? 0) >= (cs.metadata?.generation ?? 0);
        return observed && check(cs, pods) ? cs : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen ${last}`, { cause: err });
  }
}

/** Waits until the CloneSet has exactly `replicas` pods and reports them all ready. */
export function waitForReady(client: KubeClient, ns: string, name: string, replicas: number, timeoutMs = 120_000): Promise<TestCloneSet> {
  return waitForCloneSet(
    client,
    ns,
    name,
    `${replicas} ready pods`,
    (cs, pods) => pods.length === replicas && cs.status?.readyReplicas === replicas,
    timeoutMs,
  );
}

/** The CloneSet's condition of `type` when it is True. */
export const trueCondition = (cs: TestCloneSet, type: string) => cs.status?.conditions?.find((c) => c.type === type && c.status === 'True');
