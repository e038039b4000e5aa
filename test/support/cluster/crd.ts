// Installs (or updates) Tailor's CRDs (CloneSet, InPlaceStatefulSet) from crds/ on the test-bed API
// server and waits until they are Established, so tests can create either kind right away.
import { load } from 'js-yaml';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isAlreadyExists, type KubeClient } from '../../../src/runtime/kube-client.js';
import { eventually } from './testbed.js';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const CRD_FILES = ['crds/apps.tailor.dev_clonesets.yaml', 'crds/apps.tailor.dev_inplacestatefulsets.yaml'];

export async function ensureCrd(client: KubeClient): Promise<void> {
  for (const file of CRD_FILES) await ensureOneCrd(client, file);
}

async function ensureOneCrd(client: KubeClient, file: string): Promise<void> {
  // A plain YAML parse: client-node's loadYaml would rename x-kubernetes-* keys into model fields.
  const crd = load(readFileSync(resolve(process.cwd(), file), 'utf8')) as { metadata: { name: string } };
  try {
    await client.create(CRD_PATH, crd);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    await client.patch(`${CRD_PATH}/${crd.metadata.name}`, crd, 'merge');
  }
  await eventually('CRD established', async () => {
    const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
      `${CRD_PATH}/${crd.metadata.name}`,
    );
    return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
  });
}
