// The revisions a controller names to a node's agent (decision 94), on a Node another controller
// publishes to as well (decision 101): a controller scoped to other workloads (`make dev`'s
// install beside a test's, two controllers with other selectors) writes the same annotation.
// Tailor's publisher adds and removes only the entries of its own workloads, keeps the other's,
// and does not write again when only the other's change, so neither undoes the other (the unit
// property test in test/unit/workload/pure/prepull-publication.test.ts shows two of them settle). The other controller is played by the test, writing as the admin.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ANNOTATION_PULLED_IMAGES, encodePulledImages } from '../../src/api/prepull.js';
import { ANNOTATION_PREPULL_REVISIONS } from '../../src/api/prepull-revisions.js';
import type { Node } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { FAKE_NODE, FAKE_SCHEDULER } from '../support/cluster/fake-kubelet.js';
import { eventually } from '../support/cluster/testbed.js';
import { cloneSetManifest, cloneSetPath, readCloneSet, waitForReady } from '../support/fixtures/cloneset.js';

const { client, ns } = controllerTestBed('prepull-publication', { fakeKubelet: true });
const NODE_PATH = `/api/v1/nodes/${FAKE_NODE}`;
const OTHERS = ['elsewhere/web-bcdfghjklm', 'elsewhere/db-bcdfghjklm'];

const published = async (): Promise<string[]> => {
  const node = await client.get<Node>(NODE_PATH);
  const raw = node.metadata?.annotations?.[ANNOTATION_PREPULL_REVISIONS];
  return raw === undefined ? [] : (JSON.parse(raw) as string[]);
};
const annotate = (annotations: Record<string, string | null>): Promise<unknown> =>
  client.patch(NODE_PATH, { metadata: { annotations } }, 'merge');

beforeAll(async () => {
  await eventually('the fake node', () => client.get<Node>(NODE_PATH).catch(() => undefined), 30_000);
  // An agent reports on this node (its report is what makes a node one the controller publishes
  // to), and another controller has named one revision of its own.
  await annotate({
    [ANNOTATION_PULLED_IMAGES]: encodePulledImages(new Map()),
    [ANNOTATION_PREPULL_REVISIONS]: JSON.stringify(OTHERS.slice(0, 1)),
  });
}, 60_000);

afterAll(async () => {
  await annotate({ [ANNOTATION_PULLED_IMAGES]: null, [ANNOTATION_PREPULL_REVISIONS]: null }).catch(() => undefined);
});

describe('a node another controller publishes pre-pull revisions to', () => {
  it("gets this controller's update revision beside the other's entries, never rewrites theirs, and removes only its own", async () => {
    const manifest = cloneSetManifest(
      'web',
      // The partition holds both pods on the old revision, so the entry stays wanted throughout.
      { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible', partition: 2 } },
      { schedulerName: FAKE_SCHEDULER },
    );
    const container = manifest.spec.template.spec?.containers?.[0];
    // A merge patch replaces the list whole: the container is sent whole, so v1 is the first template again.
    const withImage = (image: string): Promise<unknown> =>
      client.patch(
        cloneSetPath(ns, 'web'),
        { spec: { template: { spec: { containers: [{ ...container, image }] } } } },
        'merge',
      );
    await client.create(cloneSetPath(ns), manifest);
    await waitForReady(client, ns, 'web', 2);
    await withImage('tailor.local/busybox:v2');
    const updateRevision = await eventually('a new update revision', async () => {
      const cs = await readCloneSet(client, ns, 'web');
      return cs.status?.updateRevision !== cs.status?.currentRevision ? cs.status?.updateRevision : undefined;
    });
    const own = `${ns}/${updateRevision}`;
    await eventually(
      "the update revision published beside the other controller's entry",
      async () => {
        const entries = await published();
        return entries.includes(own) && entries.includes(OTHERS[0] as string) ? entries : undefined;
      },
      30_000,
    );

    // The other controller names one more revision, out of name order: this one has nothing of its
    // own to change, and a rewrite of its would show in the order (it writes in name order).
    const othersWrite = [...OTHERS, own];
    await annotate({ [ANNOTATION_PREPULL_REVISIONS]: JSON.stringify(othersWrite) });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await published()).toEqual(othersWrite);

    // Reverted, the pods run the update revision again: this one's entry goes, the other's stay.
    await withImage('tailor.local/busybox:v1');
    await eventually(
      "this controller's entry removed, the other's kept",
      async () => {
        const entries = await published();
        return entries.length === OTHERS.length && OTHERS.every((e) => entries.includes(e)) ? entries : undefined;
      },
      30_000,
    );
  }, 120_000);
});
