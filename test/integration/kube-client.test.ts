// The client's metadata-only patch against the real kube-apiserver: the whole patch is applied,
// and the answer is the object's metadata alone, with the resourceVersion a read then sees.
// Owns: the namespace it creates. Must not: mock anything.
import { afterAll, describe, expect, it } from '@jest/globals';
import { KubeClient } from '../../src/runtime/kube-client.js';
import type { KubeObject } from '../../src/api/wire.js';
import { loadTestKubeConfig } from '../support/cluster/kube.js';

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
