// Applying one of crds/ to the test-bed API server through client-node's typed API, for the CRD
// validation tests: create or replace it, wait until it is Established and its kind served (a
// dry-run create of a valid object works), and read an API failure as its code and message.
// Owns: nothing but the CRD it applies, which it never deletes (other tests share it).
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** The API server's message (and HTTP code) from a failed call. */
export function apiError(err: unknown): { code: number; message: string } {
  if (err instanceof k8s.ApiException) {
    const body: unknown = err.body;
    let message = String(err.message);
    try {
      const parsed: unknown = typeof body === 'string' ? JSON.parse(body) : body;
      if (parsed !== null && typeof parsed === 'object' && 'message' in parsed) {
        message = String(parsed.message);
      }
    } catch {
      message = String(body);
    }
    return { code: err.code, message };
  }
  return { code: 0, message: err instanceof Error ? err.message : String(err) };
}

/**
 * Creates or replaces crds/<file> (named `name`), then waits until it is Established and `probe`
 * (a dry-run create of a valid object of its kind) succeeds: Established can precede the handler
 * serving the new schema.
 */
export async function applyCrd(
  kc: k8s.KubeConfig,
  file: string,
  name: string,
  probe: () => Promise<unknown>,
): Promise<void> {
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const crd = k8s.loadYaml<k8s.V1CustomResourceDefinition>(readFileSync(resolve(process.cwd(), 'crds', file), 'utf8'));
  let replaced = false;
  try {
    const existing = await ext.readCustomResourceDefinition({ name });
    crd.metadata = { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion };
    await ext.replaceCustomResourceDefinition({ name, body: crd });
    replaced = true;
  } catch (err) {
    const { code, message } = apiError(err);
    if (code !== 404) throw new Error(`applying the CRD failed (${code}): ${message}`, { cause: err });
    try {
      await ext.createCustomResourceDefinition({ body: crd });
    } catch (createErr) {
      const failure = apiError(createErr);
      throw new Error(`creating the CRD failed (${failure.code}): ${failure.message}`, { cause: createErr });
    }
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    const current = await ext.readCustomResourceDefinition({ name });
    const established = current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    if (established) break;
    if (Date.now() > deadline) throw new Error(`CRD ${name} not Established: ${JSON.stringify(current.status)}`);
    await sleep(200);
  }
  for (;;) {
    try {
      await probe();
      break;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${name} not served: ${apiError(err).message}`, { cause: err });
      await sleep(200);
    }
  }
  if (replaced) await sleep(2_000); // let every apiserver handler pick up a changed schema
}
