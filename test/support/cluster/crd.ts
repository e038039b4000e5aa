// Installs (or updates) the CloneSet CRD from crds/ on the test-bed API server and waits until it
// is Established, so tests can create CloneSets right away.
import { load } from 'js-yaml';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isAlreadyExists, type KubeClient } from '../../../src/runtime/kube-client.js';
import { eventually } from './testbed.js';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export async function ensureCrd(client: KubeClient): Promise<void> {
  // A plain YAML parse: client-node's loadYaml would rename x-kubernetes-* keys into model fields.
  const crd = load(readFileSync(resolve(process.cwd(), 'crds/apps.tailor.dev_clonesets.yaml'), 'utf8')) as {
    metadata: { name: string };
  };
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
