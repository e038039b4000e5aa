// One tenant's CloneSet history does not exhaust the controller or the node agents (issue 31.2,
// decision 54), on the real kubelet: a CloneSet at the CRD's bounds (64 containers, 1,024-character
// images, env to about 1 MB a template) with 100 ControllerRevisions and no pods, beside a
// neighbour that scales. The controller and the agent run as real processes with the V8 sizes
// their shipped manifests give them (config/manager/deployment.yaml, config/agent/daemonset.yaml).
// The controller is restarted with the history in place (its first sync reads every revision), and
// the neighbour scales from 1 to 3 meanwhile. Asserted: the neighbour's pods are ready, the
// controller kept its Lease, and neither process exited. Printed: first sync time, the longest
// event-loop block (nodejs_eventloop_lag_max_seconds), heap and RSS of both.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadAll } from 'js-yaml';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LABEL_CLONESET } from '../../src/api/types.js';
import { KubeClient } from '../../src/runtime/kube-client.js';
import { ensureCrd } from '../support/cluster/crd.js';
import { createTestNamespace, loadTestKubeConfig } from '../support/cluster/kube.js';
import { startNodeAgent, type NodeAgent } from '../support/cluster/node-agent.js';
import { eventually } from '../support/cluster/testbed.js';
import {
  freePort,
  killAllControllers,
  leaseHolder,
  startControllerProcess,
  type ControllerProcess,
} from '../support/fault/controllers.js';
import { cloneSetManifest, cloneSetPath, waitForReady } from '../support/fixtures/cloneset.js';

const client = new KubeClient(loadTestKubeConfig());
const ns = `bounded-history-${Date.now().toString(36)}`;
const REVISIONS = 100;

/** The node flags between `node` and the script in a shipped manifest's command. */
function shippedNodeFlags(file: string): string[] {
  const docs = loadAll(readFileSync(resolve(process.cwd(), file), 'utf8')) as {
    spec?: { template?: { spec?: { containers?: { command?: string[] }[] } } };
  }[];
  const command = docs.flatMap((d) => d.spec?.template?.spec?.containers ?? [])[0]?.command ?? [];
  return command.filter((part) => part.startsWith('--'));
}

/** A template at the CRD's bounds, about 1 MB, different for each `n`. */
const boundedTemplate = (n: number): Record<string, unknown> => ({
  metadata: { labels: { app: 'big' } },
  spec: {
    containers: Array.from({ length: 64 }, (_, c) => ({
      name: `c${c}`,
      image: `registry.example/${'x'.repeat(990)}:r${n}`.slice(0, 1024),
      env: Array.from({ length: 40 }, (_, e) => ({ name: `E${e}`, value: `${n}-`.padEnd(360, 'v') })),
    })),
  },
});

const metric = async (port: number, name: string): Promise<number> => {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? NaN);
};
const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

let agent: NodeAgent | undefined;
let agentPort = 0;
beforeAll(async () => {
  await ensureCrd(client);
  await createTestNamespace(client, ns);
  // The history, as the controller would have written it: revisions owned by the CloneSet.
  const big = await client.create<{ metadata: { uid: string } }>(
    cloneSetPath(ns),
    cloneSetManifest('big', { replicas: 0, revisionHistoryLimit: 100, template: boundedTemplate(REVISIONS) }),
  );
  for (let n = 1; n < REVISIONS; n++) {
    await client.create(`/apis/apps/v1/namespaces/${ns}/controllerrevisions`, {
      metadata: {
        name: `big-history-${n}`,
        labels: { app: 'big', [LABEL_CLONESET]: 'big' },
        ownerReferences: [
          {
            apiVersion: 'apps.tailor.dev/v1alpha1',
            kind: 'CloneSet',
            name: 'big',
            uid: big.metadata.uid,
            controller: true,
          },
        ],
      },
      revision: n,
      data: { template: boundedTemplate(n) },
    });
  }
  agentPort = await freePort();
  agent = await startNodeAgent(agentPort, shippedNodeFlags('config/agent/daemonset.yaml'));
}, 600_000);

afterAll(async () => {
  await killAllControllers();
  await agent?.stop();
  await client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  client.close();
});

describe('a CloneSet with 100 revisions at the CRD bounds beside a neighbour that scales', () => {
  it('neither the controller nor the agent restarts, the controller keeps its Lease, and the neighbour scales', async () => {
    const flags = shippedNodeFlags('config/manager/deployment.yaml');
    expect(flags.some((f) => f.startsWith('--max-old-space-size='))).toBe(true);
    const start = (identity: string): Promise<ControllerProcess> =>
      startControllerProcess(identity, ns, { metrics: true, timings: 'default', nodeFlags: flags });

    // The first controller writes the newest revision (the CloneSet's template) beside the history.
    const first = await start('first');
    await eventually(
      'the controller to record the newest revision',
      async () => {
        const list = await client.list(`/apis/apps/v1/namespaces/${ns}/controllerrevisions`, {
          labelSelector: `${LABEL_CLONESET}=big`,
        });
        return list.items.length === REVISIONS ? true : undefined;
      },
      120_000,
    );
    await client.create(cloneSetPath(ns), cloneSetManifest('small', { replicas: 1 }));
    await waitForReady(client, ns, 'small', 1);
    first.child.kill('SIGTERM');
    await first.exited;

    // A new controller syncs the whole history while the neighbour scales.
    const started = Date.now();
    const second = await start('second');
    await client.patch(cloneSetPath(ns, 'small'), { spec: { replicas: 3 } }, 'merge');
    await eventually('the restarted controller to be ready (caches synced)', async () =>
      (await fetch(`http://127.0.0.1:${second.healthPort}/readyz`)).ok ? true : undefined,
    );
    const syncSeconds = (Date.now() - started) / 1000;
    await waitForReady(client, ns, 'small', 3);
    const scaledSeconds = (Date.now() - started) / 1000;

    const controller = {
      lag: await metric(second.metricsPort, 'nodejs_eventloop_lag_max_seconds'),
      heap: await metric(second.metricsPort, 'nodejs_heap_size_used_bytes'),
      rss: await metric(second.metricsPort, 'process_resident_memory_bytes'),
    };
    const agentFigures = {
      heap: await metric(agentPort, 'nodejs_heap_size_used_bytes'),
      rss: await metric(agentPort, 'process_resident_memory_bytes'),
    };
    process.stdout.write(
      `[bounded-history] ${REVISIONS} revisions of about 1 MB: controller ready ${syncSeconds.toFixed(1)} s after its start, ` +
        `event loop blocked at most ${(controller.lag * 1000).toFixed(0)} ms, heap ${mb(controller.heap)}, RSS ${mb(controller.rss)} ` +
        `(flags ${flags.join(' ')}); neighbour 1 -> 3 ready in ${scaledSeconds.toFixed(1)} s; ` +
        `agent heap ${mb(agentFigures.heap)}, RSS ${mb(agentFigures.rss)}\n`,
    );

    expect(second.exit).toBeUndefined();
    expect(agent?.alive()).toBe(true);
    expect(await leaseHolder(client, ns)).toBe('second');
    // Well inside the 10 s renew deadline the Lease allows.
    expect(controller.lag).toBeLessThan(5);
  }, 600_000);
});
