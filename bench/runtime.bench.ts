// Benchmarks of the controller machinery (docs/architecture.md §7 Performance targets), printed with their ratio to the target:
//  - work queue throughput: keys/s through a Controller (WorkQueue + p-queue workers, metrics on,
//    trivial reconcile) at 1, 4 and 16 workers; target >= 50,000 keys/s;
//  - informer memory: process RSS before and after an Informer (with the production indexes)
//    lists and watches 10,000 realistic pods; target <= 150 MB.
// The pods come from a stand-in API server in a child process (plain HTTP on 127.0.0.1 serving
// the list with paging and a watch), so no real pods or nodes are needed and its memory is not
// counted. The RSS measurement runs in a fresh process of its own.
// Owns: its child processes. Must not: talk to a real cluster.
// Run: hack/bench.sh (builds bench/ and src/ into .tailor/bench-dist, runs each *.bench.js).
import * as k8s from '@kubernetes/client-node';
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Controller, type ControllerLogger } from '../src/runtime/controller.js';
import { Informer, byNodeName } from '../src/runtime/informer.js';
import { byControllerOf } from '../src/runtime/handlers.js';
import { CLONESET_OWNER } from '../src/api/owner.js';
import { KubeClient } from '../src/runtime/kube-client.js';
import type { Pod } from '../src/api/wire.js';
import { silentLogger } from '../src/runtime/logger.js';
import { RuntimeMetrics } from '../src/runtime/metrics.js';

const QUEUE_KEYS = 200_000;
const QUEUE_TARGET_KEYS_PER_S = 50_000;
const PODS = 10_000;
const WATCH_EVENTS = 1_000;
const RSS_TARGET_MB = 150;
const self = fileURLToPath(import.meta.url);

const mb = (bytes: number): number => Math.round(bytes / (1024 * 1024));
const verdict = (ok: boolean): string => (ok ? 'meets target' : 'MISSES target');

// ---------------------------------------------------------------- work queue throughput

const quiet: ControllerLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

async function queueThroughput(workers: number, keys: readonly string[]): Promise<number> {
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const controller = new Controller({
    name: `bench-${workers}-${keys.length}`,
    concurrency: workers,
    logger: quiet,
    metrics: new RuntimeMetrics(),
    reconcile: async () => {
      done += 1;
      if (done === keys.length) finish();
    },
  });
  controller.start();
  const startedAt = performance.now();
  for (const key of keys) controller.queue.add(key);
  await finished;
  const seconds = (performance.now() - startedAt) / 1000;
  await controller.stop(1_000);
  return keys.length / seconds;
}

async function benchQueue(): Promise<void> {
  const keys = Array.from({ length: QUEUE_KEYS }, (_, i) => `bench/cloneset-${i}`);
  await queueThroughput(4, keys.slice(0, 20_000)); // warm up the JIT
  for (const workers of [1, 4, 16]) {
    const rate = Math.round(await queueThroughput(workers, keys));
    const ratio = rate / QUEUE_TARGET_KEYS_PER_S;
    console.log(
      `queue throughput workers=${workers}: ${rate} keys/s (${QUEUE_KEYS} keys; target >= ${QUEUE_TARGET_KEYS_PER_S} keys/s; ratio ${ratio.toFixed(2)}x, ${verdict(ratio >= 1)})`,
    );
  }
}

// ---------------------------------------------------------------- stand-in API server (child)

/** A pod as a CloneSet creates it and a kubelet reports it, in the API server's JSON shape. */
function realisticPod(i: number, resourceVersion: number): Pod {
  const name = `web-${i.toString(36).padStart(5, '0')}`;
  const uid = `6b1f${i.toString(16).padStart(4, '0')}-3e2a-4c8b-9d41-${(1e11 + i * 7919).toString(16).slice(-12)}`;
  const ownerUid = `0c6a1d52-7f0e-4d2b-a3c1-${(i % 50).toString(16).padStart(12, '0')}`;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const node = `node-${i % 100}`;
  const at = '2026-11-22T03:36:58Z';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: 'web-',
      namespace: `team-${i % 20}`,
      uid,
      resourceVersion: String(resourceVersion),
      generation: 1,
      creationTimestamp: at,
      labels: {
        app: 'web',
        'apps.tailor.dev/instance-id': name.slice(4),
        'controller-revision-hash': `web-${(i % 50).toString(16)}7d9f8c6b5`,
        'pod-template-hash': '7d9f8c6b5',
      },
      annotations: {
        'apps.tailor.dev/inplace-update-state': `{"revision":"web-7d9f8c6b5","updateTimestamp":"${at}","lastContainerStatuses":{"main":{"imageID":"docker.io/tailor/busybox@sha256:${'ab'.repeat(32)}"}}}`,
      },
      ownerReferences: [
        {
          apiVersion: 'apps.tailor.dev/v1alpha1',
          kind: 'CloneSet',
          name: `web-${i % 50}`,
          uid: ownerUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'tailor-controller',
          operation: 'Update',
          apiVersion: 'v1',
          time: at,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:annotations': { '.': {}, 'f:apps.tailor.dev/inplace-update-state': {} },
              'f:generateName': {},
              'f:labels': {
                '.': {},
                'f:app': {},
                'f:apps.tailor.dev/instance-id': {},
                'f:controller-revision-hash': {},
                'f:pod-template-hash': {},
              },
              'f:ownerReferences': { '.': {}, [`k:{"uid":"${ownerUid}"}`]: {} },
            },
            'f:spec': {
              'f:containers': {
                'k:{"name":"main"}': {
                  '.': {},
                  'f:image': {},
                  'f:imagePullPolicy': {},
                  'f:name': {},
                  'f:ports': {
                    '.': {},
                    'k:{"containerPort":8080,"protocol":"TCP"}': {
                      '.': {},
                      'f:containerPort': {},
                      'f:name': {},
                      'f:protocol': {},
                    },
                  },
                  'f:readinessProbe': {
                    '.': {},
                    'f:httpGet': { '.': {}, 'f:path': {}, 'f:port': {}, 'f:scheme': {} },
                    'f:periodSeconds': {},
                  },
                  'f:resources': {
                    '.': {},
                    'f:limits': { '.': {}, 'f:cpu': {}, 'f:memory': {} },
                    'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} },
                  },
                },
              },
              'f:readinessGates': {
                '.': {},
                'k:{"conditionType":"InPlaceUpdateReady"}': { '.': {}, 'f:conditionType': {} },
              },
              'f:restartPolicy': {},
            },
          },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: at,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:status': {
              'f:conditions': {
                'k:{"type":"ContainersReady"}': {
                  '.': {},
                  'f:lastProbeTime': {},
                  'f:lastTransitionTime': {},
                  'f:status': {},
                  'f:type': {},
                },
                'k:{"type":"Initialized"}': {
                  '.': {},
                  'f:lastProbeTime': {},
                  'f:lastTransitionTime': {},
                  'f:status': {},
                  'f:type': {},
                },
                'k:{"type":"PodReadyToStartContainers"}': {
                  '.': {},
                  'f:lastProbeTime': {},
                  'f:lastTransitionTime': {},
                  'f:status': {},
                  'f:type': {},
                },
                'k:{"type":"Ready"}': {
                  '.': {},
                  'f:lastProbeTime': {},
                  'f:lastTransitionTime': {},
                  'f:status': {},
                  'f:type': {},
                },
              },
              'f:containerStatuses': {},
              'f:hostIP': {},
              'f:hostIPs': {},
              'f:phase': {},
              'f:podIP': {},
              'f:podIPs': { '.': {}, [`k:{"ip":"${ip}"}`]: { '.': {}, 'f:ip': {} } },
              'f:startTime': {},
            },
          },
          subresource: 'status',
        },
      ],
    },
    spec: {
      volumes: [
        {
          name: `kube-api-access-${name.slice(4)}`,
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              {
                downwardAPI: {
                  items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
                },
              },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [
        {
          name: 'main',
          image: 'tailor/busybox:v1',
          command: ['sh', '-c', 'httpd -f -p 8080'],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
          resources: { limits: { cpu: '200m', memory: '128Mi' }, requests: { cpu: '100m', memory: '64Mi' } },
          volumeMounts: [
            {
              name: `kube-api-access-${name.slice(4)}`,
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
          readinessProbe: {
            httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' },
            timeoutSeconds: 1,
            periodSeconds: 5,
            successThreshold: 1,
            failureThreshold: 3,
          },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName: node,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
    },
    status: {
      phase: 'Running',
      conditions: [
        'InPlaceUpdateReady',
        'PodReadyToStartContainers',
        'Initialized',
        'Ready',
        'ContainersReady',
        'PodScheduled',
      ].map((type) => ({
        type,
        status: 'True',
        lastTransitionTime: at,
      })),
      hostIP: `198.18.${i % 100}.1`,
      hostIPs: [{ ip: `198.18.${i % 100}.1` }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: at,
      containerStatuses: [
        {
          name: 'main',
          state: { running: { startedAt: at } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: 'docker.io/tailor/busybox:v1',
          imageID: `docker.io/tailor/busybox@sha256:${'ab'.repeat(32)}`,
          containerID: `containerd://${(BigInt(i + 1) * 0x9e3779b97f4a7c15n).toString(16).padStart(64, '0').slice(-64)}`,
          started: true,
          resources: { limits: { cpu: '200m', memory: '128Mi' }, requests: { cpu: '100m', memory: '64Mi' } },
          volumeMounts: [
            {
              name: `kube-api-access-${name.slice(4)}`,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
              readOnly: true,
              recursiveReadOnly: 'Disabled',
            },
          ],
        },
      ],
      qosClass: 'Burstable',
    },
  };
}

/**
 * Serves GET /api/v1/pods as a paged list and as a watch that modifies WATCH_EVENTS pods. With
 * `withoutManagedFields`, pods come without metadata.managedFields (what an informer transform
 * that strips them, like controller-runtime's TransformStripManagedFields, would keep).
 */
async function serveFakeApi(withoutManagedFields: boolean): Promise<void> {
  const listRv = PODS + 1;
  const makePod = (i: number, rv: number): Pod => {
    const pod = realisticPod(i, rv);
    if (withoutManagedFields) delete pod.metadata?.managedFields;
    return pod;
  };
  const pods = Array.from({ length: PODS }, (_, i) => makePod(i, i + 1));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/api/v1/pods') {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"kind":"Status","code":404}');
      return;
    }
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      let rv = listRv;
      for (let i = 0; i < WATCH_EVENTS; i++) {
        const pod = makePod(i, ++rv);
        pod.metadata!.annotations!['apps.tailor.dev/inplace-update-state'] =
          `{"revision":"web-8e0a9d7c6","updateTimestamp":"2026-11-22T04:00:00Z"}`;
        res.write(JSON.stringify({ type: 'MODIFIED', object: pod }) + '\n');
      }
      // Held open like a real watch until the client goes away.
      req.on('close', () => res.end());
      return;
    }
    const limit = Number(url.searchParams.get('limit') ?? PODS) || PODS;
    const offset = Number(url.searchParams.get('continue') ?? 0) || 0;
    const next = offset + limit;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: {
          resourceVersion: String(listRv),
          ...(next < PODS ? { continue: String(next), remainingItemCount: PODS - next } : {}),
        },
        items: pods.slice(offset, next).map(({ apiVersion: _v, kind: _k, ...item }) => item),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const bytes = Buffer.byteLength(JSON.stringify(pods[0]));
  process.send?.({ port: (server.address() as AddressInfo).port, bytesPerPod: bytes });
  process.on('disconnect', () => {
    server.closeAllConnections();
    server.close();
  });
}

// ---------------------------------------------------------------- informer memory (child)

interface RssResult {
  beforeMb: number;
  afterMb: number;
  heapMb: number;
  syncMs: number;
  cached: number;
  bytesPerPod: number;
}

function startChild(args: string[], execArgv: string[] = []): { child: ChildProcess; message: Promise<unknown> } {
  const child = fork(self, args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const message = new Promise<unknown>((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) =>
      reject(new Error(`bench child ${args.join(' ')} exited with ${code} before reporting`)),
    );
  });
  return { child, message };
}

const collect = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
};

async function measureInformerRss(withoutManagedFields: boolean): Promise<void> {
  const api = startChild(['--fake-api', ...(withoutManagedFields ? ['--without-managed-fields'] : [])]);
  const { port, bytesPerPod } = (await api.message) as { port: number; bytesPerPod: number };
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'stand-in', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'bench' }],
    contexts: [{ name: 'bench', cluster: 'stand-in', user: 'bench' }],
    currentContext: 'bench',
  });
  const client = new KubeClient(kubeConfig);
  const informer = new Informer<Pod>({
    name: 'pods',
    client,
    path: '/api/v1/pods',
    labelSelector: 'apps.tailor.dev/instance-id',
    logger: silentLogger(),
  });
  informer.addIndex('owner', byControllerOf(CLONESET_OWNER));
  informer.addIndex('node', byNodeName);
  let modified = 0;
  let allModified!: () => void;
  const watched = new Promise<void>((resolve) => (allModified = resolve));
  informer.addHandler({
    onUpdate: () => {
      modified += 1;
      if (modified === WATCH_EVENTS) allModified();
    },
  });
  collect();
  const before = process.memoryUsage().rss;
  const startedAt = performance.now();
  informer.start();
  await informer.waitForSync();
  const syncMs = performance.now() - startedAt;
  await watched;
  collect();
  const usage = process.memoryUsage();
  const result: RssResult = {
    beforeMb: mb(before),
    afterMb: mb(usage.rss),
    heapMb: mb(usage.heapUsed),
    syncMs: Math.round(syncMs),
    cached: informer.size(),
    bytesPerPod,
  };
  await informer.stop();
  client.close();
  api.child.disconnect();
  process.send?.(result);
  process.disconnect();
}

async function informerRss(withoutManagedFields: boolean): Promise<RssResult> {
  const run = startChild(
    ['--informer-rss', ...(withoutManagedFields ? ['--without-managed-fields'] : [])],
    ['--expose-gc'],
  );
  return (await run.message) as RssResult;
}

async function benchInformerRss(): Promise<void> {
  const r = await informerRss(false);
  const ratio = r.afterMb / RSS_TARGET_MB;
  console.log(`informer RSS before (process with its modules loaded, empty cache): ${r.beforeMb} MB`);
  console.log(
    `informer RSS with ${r.cached} pods: ${r.afterMb} MB (target <= ${RSS_TARGET_MB} MB; ratio ${ratio.toFixed(2)}x of target, ${verdict(ratio <= 1)})`,
  );
  console.log(
    `informer heap with ${r.cached} pods: ${r.heapMb} MB; ${PODS} pods of ~${(r.bytesPerPod / 1024).toFixed(1)} KB JSON listed and synced in ${r.syncMs} ms`,
  );
  const lean = await informerRss(true);
  console.log(
    `what-if, same pods without managedFields (~${(lean.bytesPerPod / 1024).toFixed(1)} KB JSON each): RSS ${lean.afterMb} MB, heap ${lean.heapMb} MB (ratio ${(lean.afterMb / RSS_TARGET_MB).toFixed(2)}x of target)`,
  );
}

// ---------------------------------------------------------------- entry

const role = process.argv[2];
const withoutManagedFields = process.argv.includes('--without-managed-fields');
if (role === '--fake-api') {
  await serveFakeApi(withoutManagedFields);
} else if (role === '--informer-rss') {
  await measureInformerRss(withoutManagedFields);
} else {
  console.log(`runtime bench (node ${process.version})`);
  await benchInformerRss();
  await benchQueue();
}
