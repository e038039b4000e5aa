// `helm template` of charts/tailor with given values, as parsed objects; and the tools the
// chart tier's global setup built (test/support/chart/setup.js).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';

export const CHART = 'charts/tailor';
export const NAMESPACE = 'tailor-system';

const tool = (name: string): string => {
  const value = process.env[`TAILOR_CHART_${name}`];
  if (!value)
    throw new Error(
      `TAILOR_CHART_${name} is not set: run the chart tier through Jest (its global setup builds the tools)`,
    );
  return value;
};
export const helmBin = (): string => tool('HELM');
export const kubeconformBin = (): string => tool('KUBECONFORM');
export const schemaDir = (): string => tool('SCHEMAS');
export const schemaReleases = (): string[] => tool('RELEASES').split(' ').filter(Boolean);

/** A Kubernetes object as rendered. */
export interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface Rendered {
  ok: boolean;
  stdout: string;
  stderr: string;
  objects: Obj[];
}

/** The values as a file (JSON is YAML), so nested objects and lists need no --set escaping. */
function withValues<T>(values: object, run: (args: string[]) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-chart-'));
  try {
    const file = join(dir, 'values.json');
    writeFileSync(file, JSON.stringify(values));
    return run(['-f', file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** helm template with these values (namespace tailor-system unless named). */
export function render(values: object = {}, namespace = NAMESPACE): Rendered {
  return withValues(values, (args) => {
    const r = spawnSync(helmBin(), ['template', 'tailor', CHART, '--namespace', namespace, ...args], {
      encoding: 'utf8',
    });
    const ok = r.status === 0;
    const objects = ok ? (yaml.loadAll(r.stdout) as (Obj | null)[]).filter((o): o is Obj => o !== null) : [];
    return { ok, stdout: r.stdout, stderr: r.stderr, objects };
  });
}

/** helm template that must succeed. */
export function objects(values: object = {}): Obj[] {
  const r = render(values);
  if (!r.ok) throw new Error(`helm template failed: ${r.stderr}`);
  return r.objects;
}

/**
 * The chart's NOTES.txt as `helm install --dry-run=client` renders it (`helm template` leaves NOTES
 * out). Client-side: no cluster is reached, and KUBECONFIG names no file, so none could be.
 */
export function notes(values: object = {}): string {
  return withValues(values, (args) => {
    const r = spawnSync(
      helmBin(),
      ['install', 'tailor', CHART, '--namespace', NAMESPACE, '--dry-run=client', '--output', 'json', ...args],
      { encoding: 'utf8', env: { ...process.env, KUBECONFIG: join(tmpdir(), 'tailor-chart-no-kubeconfig') } },
    );
    if (r.status !== 0) throw new Error(`helm install --dry-run=client failed: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { info: { notes: string } }).info.notes;
  });
}

/** helm package of a chart directory into outDir; the path of the .tgz. */
export function packageChart(chartDir: string, outDir: string): string {
  const r = spawnSync(helmBin(), ['package', chartDir, '--destination', outDir], { encoding: 'utf8' });
  const m = /saved it to: (\S+\.tgz)/.exec(r.stdout);
  if (r.status !== 0 || !m) throw new Error(`helm package failed: ${r.stdout}${r.stderr}`);
  return m[1]!;
}

/** helm lint --strict with these values. */
export function lint(values: object = {}): { ok: boolean; output: string } {
  return withValues(values, (args) => {
    const r = spawnSync(helmBin(), ['lint', '--strict', CHART, '--namespace', NAMESPACE, ...args], {
      encoding: 'utf8',
    });
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  });
}

export const find = (objs: Obj[], kind: string, name: string): Obj | undefined =>
  objs.find((o) => o.kind === kind && o.metadata.name === name);

export const must = (objs: Obj[], kind: string, name: string): Obj => {
  const o = find(objs, kind, name);
  if (!o) throw new Error(`no ${kind} ${name} among ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
  return o;
};

/** Every value of the chart's optional parts turned on. */
export const EVERYTHING_ON = {
  crds: { enabled: true, keep: true },
  createNamespace: true,
  commonLabels: { team: 'platform' },
  image: {
    repository: 'registry.example.com/tailor',
    tag: '0.1.0',
    digest: `sha256:${'a'.repeat(64)}`,
    pullPolicy: 'Always',
  },
  imagePullSecrets: [{ name: 'regcred' }],
  controller: {
    replicas: 3,
    clonesetSelector: '!tailor.dev/test',
    workers: 8,
    logLevel: 'debug',
    resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'platform', effect: 'NoSchedule' }],
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: {
              topologyKey: 'kubernetes.io/hostname',
              labelSelector: {
                matchLabels: { 'app.kubernetes.io/name': 'tailor', 'app.kubernetes.io/component': 'controller' },
              },
            },
          },
        ],
      },
    },
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { 'app.kubernetes.io/component': 'controller' } },
      },
    ],
    priorityClassName: 'system-cluster-critical',
    podAnnotations: { 'example.com/scrape': 'true' },
    podLabels: { team: 'platform' },
    extraArgs: ['--resync-period=5m'],
    extraEnv: [{ name: 'EXTRA', value: '1' }],
    serviceAccount: { annotations: { 'example.com/role': 'tailor' } },
    podDisruptionBudget: { enabled: true, maxUnavailable: 1 },
  },
  agent: {
    enabled: true,
    logLevel: 'debug',
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    tolerations: [{ key: 'workload', operator: 'Exists', effect: 'NoSchedule' }],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'example.com/pool', operator: 'In', values: ['apps'] }] }],
        },
      },
    },
    priorityClassName: 'system-node-critical',
    podAnnotations: { 'example.com/a': 'b' },
    podLabels: { team: 'platform' },
    extraArgs: ['--image-prepull-parallelism=4'],
    extraEnv: [{ name: 'EXTRA', value: '1' }],
    serviceAccount: { annotations: { 'example.com/role': 'tailor-agent' } },
  },
  metrics: { serviceMonitor: { enabled: true, labels: { release: 'kube-prometheus-stack' } } },
  flowControl: { leaderElection: true, podWrites: { enabled: true, nominalConcurrencyShares: 20 } },
  networkPolicy: {
    enabled: true,
    metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
  },
};
