// The client against the real kube-apiserver: a metadata-only patch is applied whole and answered
// with the object's metadata alone, at the resourceVersion a read then sees; a request that gets
// no answer in time (its connection silently dead, behind a fault proxy) closes the idle
// connections, so the next request opens a fresh one and is answered.
// Owns: the namespace and the proxy it creates. Must not: mock anything.
import { afterAll, describe, expect, it } from '@jest/globals';
import { KubeClient } from '../../src/runtime/kube-client.js';
import type { KubeObject } from '../../src/api/wire.js';
import { loadTestKubeConfig } from '../support/cluster/kube.js';
import { startFaultProxy } from '../support/fault/proxy.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };

const client = new KubeClient(loadTestKubeConfig());
const namespace = `kube-client-${Date.now().toString(36)}`;

afterAll(async () => {
  await client.delete(`/api/v1/namespaces/${namespace}`).catch(() => undefined);
  client.close();
});

describe('a metadata-only patch', () => {
  it('applies the whole patch and answers with the metadata alone, at the version a read sees', async () => {
    await client.create('/api/v1/namespaces', { metadata: { name: namespace } });
    const path = `/api/v1/namespaces/${namespace}/configmaps/c`;
    await client.create(`/api/v1/namespaces/${namespace}/configmaps`, { metadata: { name: 'c' }, data: { a: '1' } });

    const answer = await client.patchMetadata(path, { metadata: { labels: { l: 'x' } }, data: { a: '2' } }, 'merge');
    const stored = await client.get<ConfigMap>(path);

    expect(answer).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'c', labels: { l: 'x' } } });
    expect(answer).not.toHaveProperty('data');
    expect(answer.metadata?.resourceVersion).toBe(stored.metadata?.resourceVersion);
    expect(stored.data).toEqual({ a: '2' });
  });
});

describe('a request that gets no answer in time', () => {
  it('closes the idle connections, so the next request opens a fresh one and is answered', async () => {
    const proxy = await startFaultProxy(loadTestKubeConfig());
    const viaProxy = new KubeClient(proxy.kubeConfig, undefined, { requestTimeoutMs: 1_000, maxSockets: 2 });
    try {
      // Two kept-alive connections, then both silently dead (what a dropped network path leaves).
      await Promise.all([viaProxy.get('/version'), viaProxy.get('/version')]);
      proxy.freeze('open');

      await expect(viaProxy.get('/version')).rejects.toThrow(/no response/);
      await expect(viaProxy.get<{ major?: string }>('/version')).resolves.toHaveProperty('major');
    } finally {
      viaProxy.close();
      await proxy.close();
    }
  });
});
