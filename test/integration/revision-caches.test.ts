// What the controller and the node agent keep of a CloneSet's revision history (issue 31.2),
// against a real kube-apiserver: one CloneSet at the CRD's bounds (64 containers with
// 1,024-character images, and env filling its template to about 1 MB) with 100 revisions, beside a
// small neighbour CloneSet.
// - The controller's revision informer (trimRevision, 20 a page) keeps a digest per revision, not
//   the template; RevisionStore.sync fetches only the templates its pods run.
// - The agent lists no revisions: RevisionTemplates fetches by name those it is told about (a
//   request's, the controller's word on its Node), trimmed to their containers, each once.
// Each prints its figures: the first sync's time, the longest the event loop was blocked during it,
// and the cached bytes per revision.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import { RevisionTemplates } from '../../src/agent/revision-templates.js';
import type { ControllerRevision } from '../../src/api/revision.js';
import { LABEL_CLONESET, LABEL_CONTROLLER_REVISION_HASH } from '../../src/api/types.js';
import type { KubeObject, Pod, WireCloneSet } from '../../src/api/wire.js';
import { OWNER_INDEX, RevisionStore, trimRevision } from '../../src/workload/revision-store.js';
import { byControllerOf } from '../../src/runtime/handlers.js';
import { CLONESET_OWNER } from '../../src/api/owner.js';
import { Informer } from '../../src/runtime/informer.js';
import { KubeClient } from '../../src/runtime/kube-client.js';
import type { Logger } from '../../src/runtime/logger.js';
import { createTestNamespace, loadTestKubeConfig } from '../support/cluster/kube.js';
import { CLONESET } from '../../src/cloneset/kind.js';

const client = new KubeClient(loadTestKubeConfig());
const NS = `revision-caches-${Date.now().toString(36)}`;
const REVISIONS = 100;
const BIG = { name: 'big', uid: '11111111-2222-3333-4444-555555555555' };
const SMALL = { name: 'small', uid: '66666666-7777-8888-9999-000000000000' };
const logger = pino({ level: 'silent' }) as unknown as Logger;

/** A template at the CRD's bounds: 64 containers, images of 1,024 characters, env to about 1 MB in all. */
const bigTemplate = (revision: number): Record<string, unknown> => ({
  metadata: { labels: { app: BIG.name } },
  spec: {
    containers: Array.from({ length: 64 }, (_, c) => ({
      name: `c${c}`,
      image: `registry.example/${'x'.repeat(990)}:r${revision}`.slice(0, 1024),
      env: Array.from({ length: 40 }, (_, e) => ({ name: `E${e}`, value: `${revision}-`.padEnd(360, 'v') })),
      resources: { requests: { cpu: '10m', memory: '16Mi', 'example.com/widget': '1' } },
    })),
  },
});
const smallTemplate = (revision: number): Record<string, unknown> => ({
  metadata: { labels: { app: SMALL.name } },
  spec: { containers: [{ name: 'app', image: `app:r${revision}` }] },
});
const revisionName = (owner: { name: string }, n: number): string => `${owner.name}-r${n}`;

async function createRevision(owner: { name: string; uid: string }, n: number, template: unknown): Promise<void> {
  await client.create(`/apis/apps/v1/namespaces/${NS}/controllerrevisions`, {
    metadata: {
      name: revisionName(owner, n),
      labels: { app: owner.name, [LABEL_CLONESET]: owner.name },
      ownerReferences: [
        {
          apiVersion: 'apps.tailor.dev/v1alpha1',
          kind: 'CloneSet',
          name: owner.name,
          uid: owner.uid,
          controller: true,
        },
      ],
    },
    revision: n,
    data: { template },
  });
}

/** A pod (never created: only the caches' inputs) of `owner` on revision `n`. */
const podOf = (owner: { name: string; uid: string }, n: number): Pod => ({
  metadata: {
    name: `${owner.name}-p`,
    namespace: NS,
    uid: `pod-${owner.name}`,
    labels: { [LABEL_CONTROLLER_REVISION_HASH]: revisionName(owner, n) },
    ownerReferences: [
      { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: owner.name, uid: owner.uid, controller: true },
    ],
  },
  spec: { nodeName: 'node-a', containers: [{ name: 'c0', image: 'old' }] },
  status: { phase: 'Running' },
});

/** A client that counts the revisions it was asked for. */
const counting = (): { client: Pick<KubeClient, 'get'>; gets: string[] } => {
  const gets: string[] = [];
  return {
    gets,
    client: { get: <T>(path: string): Promise<T> => (gets.push(path.split('/').pop() ?? ''), client.get<T>(path)) },
  };
};

/** Starts an informer over this namespace's revisions; resolves with it once synced, and the sync's figures. */
async function synced<T extends KubeObject>(
  transform: (r: T) => T,
  index?: boolean,
): Promise<{ informer: Informer<T>; seconds: number; maxBlockMs: number }> {
  const informer = new Informer<T>({
    name: `revisions-${NS}`,
    client,
    path: `/apis/apps/v1/namespaces/${NS}/controllerrevisions`,
    labelSelector: LABEL_CLONESET,
    transform,
    pageSize: 20,
    logger,
  });
  if (index) informer.addIndex(OWNER_INDEX, byControllerOf(CLONESET_OWNER));
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  informer.start();
  await informer.waitForSync();
  const seconds = (performance.now() - started) / 1000;
  delay.disable();
  return { informer, seconds, maxBlockMs: delay.max / 1e6 };
}

const cachedBytes = (objects: readonly unknown[]): number => JSON.stringify(objects).length;
let storedBytes = 0;

beforeAll(async () => {
  await createTestNamespace(client, NS);
  for (let n = 1; n <= REVISIONS; n++) await createRevision(BIG, n, bigTemplate(n));
  for (let n = 1; n <= 2; n++) await createRevision(SMALL, n, smallTemplate(n));
  const list = await client.list<unknown>(`/apis/apps/v1/namespaces/${NS}/controllerrevisions`, {
    labelSelector: `${LABEL_CLONESET}=${BIG.name}`,
  });
  storedBytes = cachedBytes(list.items);
  process.stdout.write(
    `[revision-caches] ${REVISIONS} revisions of ${(storedBytes / REVISIONS / 1e6).toFixed(2)} MB stored\n`,
  );
}, 600_000);

afterAll(async () => {
  await client.delete(`/api/v1/namespaces/${NS}`).catch(() => undefined);
  client.close();
});

describe("the controller's revision cache", () => {
  it('keeps a digest per revision, and a round fetches only the templates its pods run', async () => {
    const { informer, seconds, maxBlockMs } = await synced<ControllerRevision>(trimRevision, true);
    try {
      const cached = informer.list();
      expect(cached).toHaveLength(REVISIONS + 2);
      const perRevision = cachedBytes(cached) / cached.length;
      process.stdout.write(
        `[revision-caches] controller: first sync ${seconds.toFixed(2)} s, event loop blocked at most ${maxBlockMs.toFixed(0)} ms, ` +
          `${perRevision.toFixed(0)} bytes cached per revision (stored: ${(storedBytes / REVISIONS).toFixed(0)})\n`,
      );
      expect(perRevision).toBeLessThan(1_000);

      const { client: reader, gets } = counting();
      const store = new RevisionStore(reader as KubeClient, CLONESET, informer);
      const cs = {
        apiVersion: 'apps.tailor.dev/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: BIG.name, namespace: NS, uid: BIG.uid, generation: 100 },
        spec: { replicas: 1, selector: { matchLabels: { app: BIG.name } }, template: bigTemplate(REVISIONS) },
        status: { currentRevision: revisionName(BIG, REVISIONS) },
      } as unknown as WireCloneSet;
      const synced1 = await store.sync(cs, [podOf(BIG, 50)]);
      expect(synced1).not.toBe('collision');
      if (synced1 === 'collision') return;
      // The template equal to the CloneSet's is found by digest; only the pod's revision is fetched.
      expect(synced1.updateRevision).toBe(revisionName(BIG, REVISIONS));
      expect(gets).toEqual([revisionName(BIG, 50)]);
      expect(synced1.templates.get(revisionName(BIG, 50))).toEqual(bigTemplate(50));
      // Fetched once: the next round reads it from the store's own bounded cache.
      await store.sync(cs, [podOf(BIG, 50)]);
      expect(gets).toHaveLength(1);
    } finally {
      await informer.stop();
    }
  });
});

describe("the node agent's revision cache", () => {
  it('fetches by name only the revisions it is told about, trimmed, and each once', async () => {
    const { client: reader, gets } = counting();
    const templates = new RevisionTemplates(reader);
    // A node that runs only the neighbour's pod is told its update revision; the big CloneSet's history is never read.
    const small = await templates.named([{ namespace: NS, name: revisionName(SMALL, 2) }]);
    expect(small.map((r) => r.metadata?.name)).toEqual([revisionName(SMALL, 2)]);
    expect(gets).toEqual([revisionName(SMALL, 2)]);
    // A node with a pod of the big CloneSet reads the containers of the revision it is told about, trimmed.
    const big = await templates.named([{ namespace: NS, name: revisionName(BIG, REVISIONS) }]);
    expect(gets).toEqual([revisionName(SMALL, 2), revisionName(BIG, REVISIONS)]);
    const containers = big[0]?.data?.template?.spec?.containers ?? [];
    expect(containers).toHaveLength(64);
    expect(containers[0]?.resources).toEqual({ requests: { cpu: '10m', memory: '16Mi' } });
    const perRevision = cachedBytes(big);
    process.stdout.write(
      `[revision-caches] agent: ${perRevision} bytes kept for a revision of ${(storedBytes / REVISIONS).toFixed(0)} stored\n`,
    );
    expect(perRevision).toBeLessThan(80_000);
    // A resize request names its revision: fetched by name, once; an unknown one is undefined.
    expect((await templates.revision(NS, revisionName(BIG, 7)))?.revision).toBe(7);
    expect((await templates.revision(NS, revisionName(BIG, 7)))?.revision).toBe(7);
    expect(await templates.revision(NS, 'no-such-revision')).toBeUndefined();
    expect(await templates.named([{ namespace: NS, name: 'no-such-revision' }])).toEqual([]);
    expect(gets).toHaveLength(5);
  });
});
