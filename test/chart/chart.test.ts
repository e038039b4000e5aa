// charts/tailor offline (decision 24): helm lint, the rendered manifests against the Kubernetes
// schemas of the oldest and the newest release of hack/versions.sh (kubeconform, strict), config/
// against what the chart renders, and what each value does to the manifests.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import {
  EVERYTHING_ON,
  find,
  kubeconformBin,
  lint,
  must,
  objects,
  type Obj,
  render,
  schemaDir,
  schemaReleases,
} from './render.js';

interface Container {
  name: string;
  image?: string;
  imagePullPolicy?: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string }[];
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PodSpec {
  containers: Container[];
  securityContext?: Record<string, unknown>;
  volumes?: { name: string; hostPath?: { path: string } }[];
  [key: string]: unknown;
}
const podSpec = (o: Obj): PodSpec => (o.spec as { template: { spec: PodSpec } }).template.spec;
const podMeta = (o: Obj): { labels?: Record<string, string>; annotations?: Record<string, string> } =>
  (o.spec as { template: { metadata: { labels?: Record<string, string> } } }).template.metadata;
const container = (o: Obj): Container => podSpec(o).containers[0]!;
const controller = (objs: Obj[]): Obj => must(objs, 'Deployment', 'tailor-controller');
const agent = (objs: Obj[]): Obj => must(objs, 'DaemonSet', 'tailor-agent');
const names = (objs: Obj[]): string[] => objs.map((o) => `${o.kind}/${o.metadata.name}`).sort();

describe('helm lint', () => {
  it.each([
    ['the default values', {}],
    ['every optional part on', EVERYTHING_ON],
  ])('passes with %s', (_what, values) => {
    const r = lint(values);
    expect(r.output).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(r.ok).toBe(true);
  });
});

describe('the rendered manifests against the Kubernetes schemas (kubeconform, strict)', () => {
  const cases = schemaReleases().flatMap((release) => [
    [release, 'the default values', {}],
    [release, 'every optional part on', EVERYTHING_ON],
  ]) as [string, string, object][];
  it.each(cases)('Kubernetes v%s: %s', (release, _what, values) => {
    const rendered = render(values);
    // Helm's one notice: files/ links to crds/ (decision 24).
    expect(rendered.stderr.split('\n').filter((l) => l && !l.includes('found symbolic link in path'))).toEqual([]);
    // ServiceMonitor is prometheus-operator's kind, not Kubernetes': its shape is asserted below.
    const r = spawnSync(
      kubeconformBin(),
      [
        '-strict',
        '-summary',
        '-kubernetes-version',
        release,
        '-schema-location',
        schemaDir(),
        '-skip',
        'ServiceMonitor',
        '-',
      ],
      { input: rendered.stdout, encoding: 'utf8' },
    );
    expect(`${r.stdout}${r.stderr}`).toMatch(/Invalid: 0, Errors: 0/);
    expect(r.status).toBe(0);
    // Every object was checked against a schema, not skipped for want of one.
    const skipped = rendered.objects.filter((o) => o.kind === 'ServiceMonitor').length;
    expect(`${r.stdout}`).toContain(`Valid: ${rendered.objects.length - skipped},`);
  });
});

describe('config/ (the kustomize install)', () => {
  it('is what the chart renders (hack/gen-config.sh --check)', () => {
    const r = spawnSync('bash', ['hack/gen-config.sh', '--check'], {
      encoding: 'utf8',
      env: { ...process.env, HELM: process.env.TAILOR_CHART_HELM },
    });
    expect(`${r.stdout}${r.stderr}`).toContain('config/ is what charts/tailor renders');
    expect(r.status).toBe(0);
  });
});

describe('the default values', () => {
  const objs = objects();

  it('install the CRDs, RBAC, the controller with a disruption budget, the agent, the admission policies and the leader-election FlowSchema; nothing opt-in', () => {
    expect(names(objs)).toEqual(
      [
        'ClusterRole/tailor-agent',
        'ClusterRole/tailor-controller',
        'ClusterRoleBinding/tailor-agent',
        'ClusterRoleBinding/tailor-controller',
        'CustomResourceDefinition/clonesets.apps.tailor.dev',
        'CustomResourceDefinition/inplacestatefulsets.apps.tailor.dev',
        'DaemonSet/tailor-agent',
        'Deployment/tailor-controller',
        'FlowSchema/tailor-leader-election',
        'PodDisruptionBudget/tailor-controller',
        'Role/tailor-leader-election',
        'RoleBinding/tailor-leader-election',
        'Service/tailor-controller-metrics',
        'ServiceAccount/tailor-agent',
        'ServiceAccount/tailor-controller',
        'ValidatingAdmissionPolicy/tailor-node-annotations',
        'ValidatingAdmissionPolicy/tailor-pod-annotations',
        'ValidatingAdmissionPolicy/tailor-pod-bindings',
        'ValidatingAdmissionPolicyBinding/tailor-node-annotations',
        'ValidatingAdmissionPolicyBinding/tailor-pod-annotations',
        'ValidatingAdmissionPolicyBinding/tailor-pod-bindings',
      ].sort(),
    );
  });

  it('render the CRD from crds/apps.tailor.dev_clonesets.yaml, unchanged but for labels and the keep policy', () => {
    const file = yaml.load(readFileSync('crds/apps.tailor.dev_clonesets.yaml', 'utf8')) as Obj;
    const crd = must(objs, 'CustomResourceDefinition', 'clonesets.apps.tailor.dev');
    expect(crd.spec).toEqual(file.spec);
    expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(crd.metadata.labels).toMatchObject(file.metadata.labels ?? {});
  });

  it('run two controller replicas behind a Lease in tailor-system, and the image of the chart’s appVersion', () => {
    const d = controller(objs);
    expect(d.metadata.namespace).toBe('tailor-system');
    expect((d.spec as { replicas: number }).replicas).toBe(2);
    expect(container(d).args).toEqual(
      expect.arrayContaining(['--leader-elect', '--leader-election-namespace=tailor-system']),
    );
    expect(container(d).image).toBe('tailor.local/tailor:0.1.0');
    expect(container(agent(objs)).image).toBe('tailor.local/tailor:0.1.0');
  });

  it('harden the controller: non-root, read-only root, no capability, no escalation, seccomp RuntimeDefault', () => {
    const spec = podSpec(controller(objs));
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container(controller(objs)).securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    for (const key of ['hostNetwork', 'hostPID', 'hostIPC', 'volumes']) expect(spec[key]).toBeUndefined();
  });

  it('give the agent root for the CRI socket and cgroups, and nothing more: no capability, privilege or host namespace', () => {
    const spec = podSpec(agent(objs));
    expect(spec.securityContext).toEqual({ seccompProfile: { type: 'RuntimeDefault' } });
    expect(container(agent(objs)).securityContext).toEqual({
      runAsUser: 0,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    for (const key of ['hostNetwork', 'hostPID', 'hostIPC']) expect(spec[key]).toBeUndefined();
    expect(spec.volumes?.map((v) => v.hostPath?.path)).toEqual([
      '/run/containerd',
      '/sys/fs/cgroup',
      '/var/lib/kubelet/pki',
    ]);
    const mounts = container(agent(objs)).volumeMounts ?? [];
    expect(mounts.filter((m) => m.readOnly).map((m) => m.name)).toEqual(['cri-socket-dir', 'kubelet-pki']);
    expect(container(agent(objs)).args).toContain('--node-credentials=/var/lib/kubelet/pki/kubelet-client-current.pem');
    expect(spec['tolerations']).toBeUndefined();
  });

  it('size V8’s old space to three quarters of each memory limit', () => {
    expect(container(controller(objs)).command).toContain('--max-old-space-size=384');
    expect(container(agent(objs)).command).toContain('--max-old-space-size=192');
  });

  it('name, in the admission policies, the service accounts the chart creates', () => {
    const policy = JSON.stringify(must(objs, 'ValidatingAdmissionPolicy', 'tailor-pod-annotations'));
    for (const sa of objs.filter((o) => o.kind === 'ServiceAccount')) {
      expect(policy).toContain(`system:serviceaccount:${sa.metadata.namespace}:${sa.metadata.name}`);
    }
  });

  it('label every object as Tailor’s and as this release’s', () => {
    for (const o of objs) {
      expect(o.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': 'tailor',
        'app.kubernetes.io/managed-by': 'Helm',
        'app.kubernetes.io/instance': 'tailor',
      });
    }
  });
});

describe('values', () => {
  it("send the controller's Lease requests to leader-election; flowControl.podWrites gives its pod writes a level of their own, one queue per namespace", () => {
    const lease = must(objects(), 'FlowSchema', 'tailor-leader-election') as unknown as {
      spec: {
        priorityLevelConfiguration: { name: string };
        rules: { subjects: unknown[]; resourceRules: unknown[] }[];
      };
    };
    expect(lease.spec.priorityLevelConfiguration.name).toBe('leader-election');
    expect(lease.spec.rules[0]?.subjects).toEqual([
      { kind: 'ServiceAccount', serviceAccount: { name: 'tailor-controller', namespace: 'tailor-system' } },
    ]);
    expect(lease.spec.rules[0]?.resourceRules).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        namespaces: ['tailor-system'],
        verbs: ['get', 'create', 'update', 'patch'],
      },
    ]);
    expect(
      names(objects({ flowControl: { leaderElection: false } })).filter((n) => n.startsWith('FlowSchema/')),
    ).toEqual([]);
    const on = objects({ flowControl: { podWrites: { enabled: true, nominalConcurrencyShares: 40 } } });
    const level = must(on, 'PriorityLevelConfiguration', 'tailor-pod-writes') as unknown as {
      spec: { limited: { nominalConcurrencyShares: number } };
    };
    expect(level.spec.limited.nominalConcurrencyShares).toBe(40);
    const writes = must(on, 'FlowSchema', 'tailor-pod-writes') as unknown as {
      spec: { distinguisherMethod: { type: string }; priorityLevelConfiguration: { name: string } };
    };
    expect(writes.spec).toMatchObject({
      distinguisherMethod: { type: 'ByNamespace' },
      priorityLevelConfiguration: { name: 'tailor-pod-writes' },
    });
  });

  it('every optional part on: ServiceMonitor, NetworkPolicies, Namespace, scheduling, image by digest and pull secrets', () => {
    const objs = objects(EVERYTHING_ON);
    const on = EVERYTHING_ON;
    const d = controller(objs);
    const a = agent(objs);
    expect(must(objs, 'Namespace', 'tailor-system')).toBeDefined();
    const sm = must(objs, 'ServiceMonitor', 'tailor-controller');
    expect(sm.metadata.labels?.['release']).toBe('kube-prometheus-stack');
    expect(sm.spec).toMatchObject({ endpoints: [{ port: 'metrics', path: '/metrics' }] });
    const np = must(objs, 'NetworkPolicy', 'tailor-controller');
    expect(np.spec).toMatchObject({
      ingress: [{ ports: [{ port: 'health' }] }, { from: on.networkPolicy.metricsFrom, ports: [{ port: 'metrics' }] }],
    });
    expect(must(objs, 'NetworkPolicy', 'tailor-agent').spec).toMatchObject({
      ingress: [{ ports: [{ port: 'health' }] }],
    });
    const image = `registry.example.com/tailor:0.1.0@sha256:${'a'.repeat(64)}`;
    for (const w of [d, a]) {
      expect(container(w).image).toBe(image);
      expect(container(w).imagePullPolicy).toBe('Always');
      expect(podSpec(w)['imagePullSecrets']).toEqual([{ name: 'regcred' }]);
      expect(container(w).env).toContainEqual({ name: 'EXTRA', value: '1' });
      expect(podMeta(w).labels?.['team']).toBe('platform');
    }
    expect(podSpec(d)).toMatchObject({
      nodeSelector: on.controller.nodeSelector,
      tolerations: on.controller.tolerations,
      affinity: on.controller.affinity,
      topologySpreadConstraints: on.controller.topologySpreadConstraints,
      priorityClassName: 'system-cluster-critical',
    });
    expect(podSpec(a)).toMatchObject({
      nodeSelector: on.agent.nodeSelector,
      tolerations: on.agent.tolerations,
      affinity: on.agent.affinity,
    });
    expect((d.spec as { replicas: number }).replicas).toBe(3);
    expect(container(d).args).toEqual(
      expect.arrayContaining([
        '--cloneset-selector=!tailor.dev/test',
        '--workers=8',
        '--log-level=debug',
        '--resync-period=5m',
      ]),
    );
    expect(container(d).command).toContain('--max-old-space-size=768');
    expect(must(objs, 'ServiceAccount', 'tailor-controller').metadata.annotations).toEqual({
      'example.com/role': 'tailor',
    });
    for (const o of objs) expect(o.metadata.labels?.['team']).toBe('platform');
  });

  it('crds.enabled=false leaves the CRD out; crds.keep=false lets an uninstall delete it', () => {
    expect(
      find(objects({ crds: { enabled: false } }), 'CustomResourceDefinition', 'clonesets.apps.tailor.dev'),
    ).toBeUndefined();
    const crd = must(objects({ crds: { keep: false } }), 'CustomResourceDefinition', 'clonesets.apps.tailor.dev');
    expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBeUndefined();
  });

  it('agent.enabled=false leaves out the agent and its RBAC, never the admission policies', () => {
    const objs = objects({ agent: { enabled: false } });
    expect(names(objs).filter((n) => n.includes('tailor-agent'))).toEqual([]);
    expect(objs.filter((o) => o.kind === 'ValidatingAdmissionPolicy')).toHaveLength(3);
    expect(objs.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding')).toHaveLength(3);
  });

  it("refuses an empty agent.kubeletPkiDir: the agent reads its node's pods as the node (decision 86)", () => {
    const r = render({ agent: { kubeletPkiDir: '' } });
    expect(r.ok).toBe(false);
    expect(r.stderr).toMatch(/kubeletPkiDir/);
  });

  it("mounts the kubelet's certificate directory and reads as the node with its client certificate", () => {
    const a = agent(objects({}));
    expect(podSpec(a).volumes?.find((v) => v.name === 'kubelet-pki')?.hostPath).toEqual({
      path: '/var/lib/kubelet/pki',
      type: 'Directory',
    });
    expect(container(a).args).toContain('--node-credentials=/var/lib/kubelet/pki/kubelet-client-current.pem');
  });

  it('agent.criSocketDir and criSocketName point the agent at another runtime (CRI-O)', () => {
    const a = agent(objects({ agent: { criSocketDir: '/var/run/crio', criSocketName: 'crio.sock' } }));
    expect(podSpec(a).volumes?.[0]?.hostPath?.path).toBe('/var/run/crio');
    expect(container(a).args).toContain('--cri-endpoint=unix:///run/containerd/crio.sock');
  });

  it('one replica: no disruption budget (it would block every drain)', () => {
    expect(find(objects({ controller: { replicas: 1 } }), 'PodDisruptionBudget', 'tailor-controller')).toBeUndefined();
  });

  it('refuses two replicas without leader election', () => {
    const r = render({ controller: { leaderElection: { enabled: false } } });
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('leader election');
  });

  it('refuses a memory limit it cannot size V8 for', () => {
    const r = render({ controller: { resources: { limits: { memory: '1000M' } } } });
    expect(r.ok).toBe(false);
    expect(r.stderr).toMatch(/memory/);
  });

  it('refuses a misspelt value (values.schema.json: additionalProperties false)', () => {
    const r = render({ controller: { replica: 3 } });
    expect(r.ok).toBe(false);
    expect(r.stderr).toMatch(/replica/);
    expect(render({ agnet: { enabled: false } }).ok).toBe(false);
  });

  it('refuses a namespace other than tailor-system, which the admission policies name', () => {
    const r = render({}, 'tailor');
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('tailor-system');
  });
});
