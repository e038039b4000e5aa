// The informer against the real kube-apiserver: it follows adds, updates and deletes; reports
// synced after its first list; keeps label indexes current; applies a label selector to its list
// and its watch alike; holds one object shape; and, when the API server goes away mid-watch (and
// even when etcd compacts away the resourceVersion it would resume from), it comes back, relists
// and ends with a cache equal to a fresh list and handlers that saw every change's net effect;
// a watch whose connection silently stops delivering is abandoned by the watchdog and a relist
// catches up.
// Owns: the namespaces it creates. Must not: mock anything, or stop more than the API server.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { Backoff } from '../../src/runtime/backoff.js';
import { Informer } from '../../src/runtime/informer.js';
import { objectKey } from '../../src/runtime/store.js';
import { KubeClient } from '../../src/runtime/kube-client.js';
import type { KubeObject } from '../../src/api/wire.js';
import type { Logger } from '../../src/runtime/logger.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { restartApiServer } from '../support/cluster/components.js';
import { startFaultProxy } from '../support/fault/proxy.js';
import { loadTestKubeConfig } from '../support/cluster/kube.js';
import { eventually } from '../support/cluster/testbed.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };

const ETCD = 'http://127.0.0.1:2379';
const kubeConfig = loadTestKubeConfig();
const client = new KubeClient(kubeConfig);
const namespaces: string[] = [];
const informers: Informer<ConfigMap>[] = [];
const informerClients: KubeClient[] = [];

afterAll(async () => {
  await Promise.all(informers.map((i) => i.stop()));
  for (const c of informerClients) c.close();
  for (const ns of namespaces) await client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  client.close();
});

async function freshNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  await client.create('/api/v1/namespaces', { metadata: { name } });
  namespaces.push(name);
  return name;
}

const cmPath = (ns: string, name?: string): string => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;

async function createConfigMap(
  ns: string,
  name: string,
  labels: Record<string, string>,
  data: Record<string, string>,
): Promise<ConfigMap> {
  return client.create<ConfigMap>(cmPath(ns), { metadata: { name, labels }, data });
}

async function patchConfigMap(
  ns: string,
  name: string,
  patch: { labels?: Record<string, string>; data?: Record<string, string> },
): Promise<ConfigMap> {
  return client.patch<ConfigMap>(cmPath(ns, name), { metadata: { labels: patch.labels }, data: patch.data }, 'merge');
}

async function deleteConfigMap(ns: string, name: string): Promise<void> {
  await client.delete(cmPath(ns, name));
}

/** What "equal" means for a cache entry: same version, labels and data. */
function summary(
  objects: ConfigMap[],
): Record<string, { resourceVersion?: string; labels?: Record<string, string>; data?: Record<string, string> }> {
  const out: ReturnType<typeof summary> = {};
  for (const o of [...objects].sort((a, b) => objectKey(a).localeCompare(objectKey(b)))) {
    out[objectKey(o)] = {
      resourceVersion: o.metadata?.resourceVersion,
      labels: o.metadata?.labels ?? {},
      data: o.data ?? {},
    };
  }
  return out;
}

async function freshList(ns: string, labelSelector?: string): Promise<ConfigMap[]> {
  return (await client.list<ConfigMap>(cmPath(ns), { labelSelector })).items;
}

/** A pino logger writing into memory, so tests can see what the informer reported. */
function capturingLogger(): { logger: Logger; messages: () => string[] } {
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  return { logger, messages: () => lines.map((l) => (JSON.parse(l) as { msg?: string }).msg ?? '') };
}

/** Keeps its own copy of the cache from handler calls alone, and remembers every call. */
class HandlerMirror {
  readonly objects = new Map<string, ConfigMap>();
  readonly added: string[] = [];
  readonly updated: string[] = [];
  readonly deleted: string[] = [];
  attach(informer: Informer<ConfigMap>): void {
    informer.addHandler({
      onAdd: (obj) => {
        this.added.push(obj.metadata?.name ?? '');
        this.objects.set(objectKey(obj), obj);
      },
      onUpdate: (_old, obj) => {
        this.updated.push(obj.metadata?.name ?? '');
        this.objects.set(objectKey(obj), obj);
      },
      onDelete: (obj) => {
        this.deleted.push(obj.metadata?.name ?? '');
        this.objects.delete(objectKey(obj));
      },
    });
  }
}

interface Started {
  informer: Informer<ConfigMap>;
  mirror: HandlerMirror;
  messages: () => string[];
}

interface StartOptions {
  labelSelector?: string;
  backoff?: Backoff;
  index?: boolean;
  /** Another way to the API server (e.g. through a fault proxy). */
  kubeConfig?: KubeConfig;
  requestTimeoutMs?: number;
  noEventTimeoutMs?: number;
}

async function startInformer(ns: string, options: StartOptions = {}): Promise<Started> {
  const { logger, messages } = capturingLogger();
  // Its own client: the informer's sockets are not shared with the test's writes.
  const informerClient = new KubeClient(options.kubeConfig ?? kubeConfig, undefined, {
    requestTimeoutMs: options.requestTimeoutMs,
  });
  informerClients.push(informerClient);
  const informer = new Informer<ConfigMap>({
    name: `configmaps-${ns}`,
    client: informerClient,
    path: cmPath(ns),
    labelSelector: options.labelSelector,
    backoff: options.backoff,
    ...(options.noEventTimeoutMs === undefined ? {} : { noEventTimeoutMs: options.noEventTimeoutMs }),
    logger,
  });
  if (options.index)
    informer.addIndex('tier', (cm) => (cm.metadata?.labels?.['tier'] ? [cm.metadata.labels['tier']] : []));
  const mirror = new HandlerMirror();
  mirror.attach(informer);
  informers.push(informer);
  expect(informer.hasSynced()).toBe(false);
  informer.start();
  await informer.waitForSync();
  return { informer, mirror, messages };
}

const names = (objects: ConfigMap[]): string[] => objects.map((o) => o.metadata?.name ?? '').sort();

/** Waits until the informer's cache (and the handlers' mirror of it) equals a fresh list. */
async function converged(
  started: Started,
  ns: string,
  labelSelector?: string,
  timeoutMs = 90_000,
): Promise<ConfigMap[]> {
  return eventually(
    'the informer cache to equal a fresh list',
    async () => {
      const fresh = await freshList(ns, labelSelector);
      const want = JSON.stringify(summary(fresh));
      const cacheMatches = JSON.stringify(summary(started.informer.list())) === want;
      const handlersMatch = JSON.stringify(summary([...started.mirror.objects.values()])) === want;
      return cacheMatches && handlersMatch ? fresh : undefined;
    },
    timeoutMs,
  );
}

describe('the informer against the real API server', () => {
  const timeoutMs = 120_000;

  it(
    'sees ConfigMaps added, updated and deleted, turns synced after its first list, and keeps a label index current',
    async () => {
      const ns = await freshNamespace('informer-crud');
      await createConfigMap(ns, 'before-start', { tier: 'web' }, { v: '1' });
      const started = await startInformer(ns, { index: true });
      const { informer, mirror } = started;

      expect(informer.hasSynced()).toBe(true);
      expect(informer.get(`${ns}/before-start`)?.data).toEqual({ v: '1' });

      await createConfigMap(ns, 'web-1', { tier: 'web' }, { v: '1' });
      await createConfigMap(ns, 'db-1', { tier: 'db' }, { v: '1' });
      await patchConfigMap(ns, 'web-1', { data: { v: '2' } });
      await deleteConfigMap(ns, 'db-1');
      await converged(started, ns);

      expect(informer.get(`${ns}/web-1`)?.data).toEqual({ v: '2' });
      expect(informer.get(`${ns}/db-1`)).toBeUndefined();
      expect(mirror.added).toEqual(expect.arrayContaining(['before-start', 'web-1', 'db-1']));
      expect(mirror.updated).toContain('web-1');
      expect(mirror.deleted).toEqual(['db-1']);
      expect(names(informer.byIndex('tier', 'web'))).toEqual(['before-start', 'web-1']);
      expect(informer.byIndex('tier', 'db')).toEqual([]);

      await patchConfigMap(ns, 'web-1', { labels: { tier: 'db' } });
      await converged(started, ns);
      expect(names(informer.byIndex('tier', 'web'))).toEqual(['before-start']);
      expect(names(informer.byIndex('tier', 'db'))).toEqual(['web-1']);
      expect(() => informer.byIndex('no-such-index', 'x')).toThrow(/no index/);
    },
    timeoutMs,
  );

  it(
    'applies its label selector to the list and to the watch alike',
    async () => {
      const ns = await freshNamespace('informer-selector');
      await createConfigMap(ns, 'web-before', { tier: 'web' }, {});
      await createConfigMap(ns, 'db-before', { tier: 'db' }, {});
      const started = await startInformer(ns, { labelSelector: 'tier=web' });
      const { informer, mirror } = started;
      expect(names(informer.list())).toEqual(['web-before']);

      await createConfigMap(ns, 'db-after', { tier: 'db' }, {});
      await patchConfigMap(ns, 'web-before', { labels: { tier: 'db' } }); // leaves the selection
      await patchConfigMap(ns, 'db-before', { labels: { tier: 'web' } }); // enters it
      await createConfigMap(ns, 'web-after', { tier: 'web' }, {}); // last: once seen, all above were delivered
      await converged(started, ns, 'tier=web');

      expect(names(informer.list())).toEqual(['db-before', 'web-after']);
      expect(mirror.added).not.toContain('db-after');
      expect(mirror.deleted).toEqual(['web-before']);
      expect(names(await freshList(ns))).toEqual(expect.arrayContaining(['db-after', 'web-before']));
    },
    timeoutMs,
  );

  it(
    'holds every object in one shape, whether it came from the list or the watch',
    async () => {
      const ns = await freshNamespace('informer-shape');
      await createConfigMap(ns, 'listed', { tier: 'web' }, { v: '1' });
      const started = await startInformer(ns, { labelSelector: 'tier=web' });
      await createConfigMap(ns, 'watched', { tier: 'web' }, { v: '1' });
      await converged(started, ns, 'tier=web');

      const shapes = started.informer
        .list()
        .map((o) => ({ name: o.metadata?.name, apiVersion: o.apiVersion, kind: o.kind }))
        .sort((a, b) => String(a.name).localeCompare(String(b.name)));
      expect(shapes).toEqual([
        { name: 'listed', apiVersion: 'v1', kind: 'ConfigMap' },
        { name: 'watched', apiVersion: 'v1', kind: 'ConfigMap' },
      ]);
    },
    timeoutMs,
  );

  it(
    'keeps multi-byte UTF-8 data intact when one watch event spans many network chunks',
    async () => {
      const ns = await freshNamespace('informer-utf8');
      const started = await startInformer(ns);
      // ~400 KB of 2-, 3- and 4-byte characters: chunk boundaries fall inside characters.
      const text = 'ä€😀ß漢字🚀é'.repeat(20_000);
      const created = await createConfigMap(ns, 'unicode', {}, { text });
      const cached = await eventually(
        'the informer to hold the created ConfigMap',
        async () => {
          const cm = started.informer.get(`${ns}/unicode`);
          return cm?.metadata?.resourceVersion === created.metadata?.resourceVersion ? cm : undefined;
        },
        30_000,
      );
      const replacementChars = [...(cached.data?.['text'] ?? '')].filter((c) => c === '\uFFFD').length;
      expect(replacementChars).toBe(0);
      expect(cached?.data?.['text'] === text).toBe(true);
    },
    timeoutMs,
  );
});

describe('the informer when its watch silently stops delivering', () => {
  it('abandons the silent watch after the no-event timeout, relists, and misses nothing', async () => {
    const ns = await freshNamespace('informer-silent');
    for (const name of ['keep', 'update-me', 'delete-me']) await createConfigMap(ns, name, {}, { v: '1' });
    const proxy = await startFaultProxy(kubeConfig);
    try {
      const started = await startInformer(ns, {
        kubeConfig: proxy.kubeConfig,
        requestTimeoutMs: 3_000,
        noEventTimeoutMs: 4_000,
      });
      const { informer, mirror, messages } = started;
      await patchConfigMap(ns, 'keep', { data: { v: 'live' } });
      await eventually('the watch to deliver a change', async () =>
        informer.get(`${ns}/keep`)?.data?.['v'] === 'live' ? true : undefined,
      );
      // Every connection open now goes silent (nothing closes); new connections still work.
      proxy.freeze('open');
      const frozenAt = Date.now();
      await createConfigMap(ns, 'added-while-silent', {}, { v: '1' });
      await patchConfigMap(ns, 'update-me', { data: { v: '2' } });
      await deleteConfigMap(ns, 'delete-me');
      await converged(started, ns, undefined, 60_000);
      const recoveredMs = Date.now() - frozenAt;

      expect(messages()).toContain('watch delivered nothing; relisting');
      expect(informer.relists).toBeGreaterThan(0);
      // The watchdog counts from the last event before the freeze; then one relist.
      expect(recoveredMs).toBeLessThan(4_000 + 10_000);
      expect(mirror.added).toContain('added-while-silent');
      expect(mirror.deleted).toContain('delete-me');
      expect(informer.get(`${ns}/update-me`)?.data).toEqual({ v: '2' });
    } finally {
      proxy.thaw();
      await proxy.close();
    }
  }, 120_000);
});

describe('the informer when the API server goes away', () => {
  // Longer than an API server restart takes to become ready, so the changes below are made while
  // the informer is still disconnected and must be recovered when it comes back.
  const slowBackoff = (): Backoff => new Backoff({ initialDelayMs: 6_000, maxDelayMs: 12_000 });

  beforeAll(async () => {
    await eventually('the API server to answer', () => client.get<object>('/version'), 60_000);
  });

  it('survives the API server being stopped and restarted mid-watch and misses nothing', async () => {
    const ns = await freshNamespace('informer-restart');
    for (const name of ['keep', 'update-me', 'delete-me', 'relabel-me'])
      await createConfigMap(ns, name, { tier: 'web' }, { v: '1' });
    const started = await startInformer(ns, { backoff: slowBackoff(), index: true });
    const { informer, mirror } = started;
    let reconnects = 0;
    informer.onReconnect(() => void reconnects++);
    // The watch is live before the outage.
    await patchConfigMap(ns, 'keep', { data: { v: 'live' } });
    await eventually('the watch to deliver a change', async () =>
      informer.get(`${ns}/keep`)?.data?.['v'] === 'live' ? true : undefined,
    );
    let cacheWhenChanged: string[] = [];

    await restartApiServer({
      onceReady: async () => {
        await createConfigMap(ns, 'added-while-away', { tier: 'web' }, { v: '1' });
        await patchConfigMap(ns, 'update-me', { data: { v: '2' } });
        await patchConfigMap(ns, 'update-me', { data: { v: '3' } });
        await deleteConfigMap(ns, 'delete-me');
        await patchConfigMap(ns, 'relabel-me', { labels: { tier: 'db' } });
        await createConfigMap(ns, 'transient', { tier: 'web' }, {});
        await deleteConfigMap(ns, 'transient');
        cacheWhenChanged = names(informer.list());
      },
    });
    const fresh = await converged(started, ns, undefined, 120_000);

    // The changes were made while the informer was away: its cache did not have them yet.
    expect(cacheWhenChanged).toContain('delete-me');
    expect(cacheWhenChanged).not.toContain('added-while-away');
    expect(names(fresh)).toEqual(expect.arrayContaining(['added-while-away', 'keep', 'relabel-me', 'update-me']));
    expect(informer.get(`${ns}/update-me`)?.data).toEqual({ v: '3' });
    expect(mirror.objects.get(`${ns}/update-me`)?.data).toEqual({ v: '3' });
    expect(mirror.added).toContain('added-while-away');
    expect(mirror.updated).toEqual(expect.arrayContaining(['update-me', 'relabel-me']));
    expect(mirror.deleted).toContain('delete-me');
    expect(informer.get(`${ns}/delete-me`)).toBeUndefined();
    expect(names(informer.byIndex('tier', 'db'))).toEqual(['relabel-me']);
    expect(informer.hasSynced()).toBe(true);
    // The controller retries its failed keys at once on this (decision 77).
    expect(reconnects).toBeGreaterThanOrEqual(1);
  }, 300_000);

  it('relists and converges after etcd compacted away the resourceVersion it would resume from', async () => {
    const ns = await freshNamespace('informer-compaction');
    for (const name of ['keep', 'update-me', 'delete-me']) await createConfigMap(ns, name, {}, { v: '1' });
    const started = await startInformer(ns, { backoff: slowBackoff() });
    const { informer, mirror, messages } = started;
    await patchConfigMap(ns, 'keep', { data: { v: 'live' } });
    await eventually('the watch to deliver a change', async () =>
      informer.get(`${ns}/keep`)?.data?.['v'] === 'live' ? true : undefined,
    );
    const resumeFrom = Number(informer.get(`${ns}/keep`)?.metadata?.resourceVersion);
    const relistsBefore = informer.relists;
    let compactedAt = 0;

    await restartApiServer({
      whileDown: async () => {
        compactedAt = await compactEtcd();
      },
      onceReady: async () => {
        await createConfigMap(ns, 'added-while-away', {}, { v: '1' });
        await patchConfigMap(ns, 'update-me', { data: { v: '2' } });
        await deleteConfigMap(ns, 'delete-me');
      },
    });
    const fresh = await converged(started, ns, undefined, 120_000);

    expect(compactedAt).toBeGreaterThan(resumeFrom);
    // etcd no longer has the revision the informer last saw.
    await expect(etcdRangeAt(`/registry/configmaps/${ns}/keep`, resumeFrom)).rejects.toThrow(/compacted/);
    // At once, or after a backoff when the 410 came as soon as the watch opened (no tight loop).
    expect(messages().some((m) => m.startsWith('resourceVersion expired (410 Gone)'))).toBe(true);
    expect(informer.relists).toBeGreaterThan(relistsBefore);
    expect(names(fresh)).toEqual(expect.arrayContaining(['added-while-away', 'keep', 'update-me']));
    expect(informer.get(`${ns}/update-me`)?.data).toEqual({ v: '2' });
    expect(informer.get(`${ns}/delete-me`)).toBeUndefined();
    expect(mirror.added).toContain('added-while-away');
    expect(mirror.updated).toContain('update-me');
    expect(mirror.deleted).toContain('delete-me');
  }, 300_000);
});

interface EtcdResponse {
  header?: { revision?: string };
  error?: string;
  message?: string;
}

async function etcd(path: string, body: unknown): Promise<EtcdResponse> {
  const response = await fetch(`${ETCD}${path}`, { method: 'POST', body: JSON.stringify(body) });
  const parsed = (await response.json()) as EtcdResponse;
  if (!response.ok || parsed.error)
    throw new Error(`etcd ${path}: ${response.status} ${parsed.message ?? parsed.error ?? ''}`);
  return parsed;
}

/** Compacts etcd (physically) at its current revision; returns that revision. */
async function compactEtcd(): Promise<number> {
  // A write only the test knows of, so the revision is past anything the informer saw even if
  // nothing else wrote while the API server was down; removed again before compacting.
  const marker = Buffer.from(`/tailor-test/compaction-marker-${process.pid}`).toString('base64');
  await etcd('/v3/kv/put', { key: marker, value: Buffer.from('x').toString('base64') });
  await etcd('/v3/kv/deleterange', { key: marker });
  const revision = (await etcd('/v3/kv/range', { key: 'AA==' })).header?.revision;
  if (!revision) throw new Error('etcd returned no revision');
  await etcd('/v3/kv/compaction', { revision, physical: true });
  return Number(revision);
}

async function etcdRangeAt(key: string, revision: number): Promise<EtcdResponse> {
  return etcd('/v3/kv/range', { key: Buffer.from(key).toString('base64'), revision: String(revision) });
}
