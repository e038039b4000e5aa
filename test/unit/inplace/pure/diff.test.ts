import { describe, expect, it } from '@jest/globals';
import { diffTemplates } from '../../../../src/inplace/pure/diff.js';
import type { PodTemplate } from '../../../../src/api/wire.js';

const base: PodTemplate = {
  metadata: { labels: { app: 'web' }, annotations: { team: 'a' } },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'img:v1',
        env: [{ name: 'A', value: '1' }],
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
      },
      { name: 'side', image: 'side:v1' },
    ],
  },
};

type Edit = (t: PodTemplate) => void;
const edited = (edit: Edit): PodTemplate => {
  const t = structuredClone(base);
  edit(t);
  return t;
};
const app = (t: PodTemplate) => t.spec!.containers[0]!;

const table: [string, Edit, Partial<ReturnType<typeof diffTemplates>>][] = [
  ['no change', () => undefined, { images: {}, resources: {}, labels: {}, annotations: {}, recreateOnly: [] }],
  ['one container image', (t) => (app(t).image = 'img:v2'), { images: { app: 'img:v2' }, recreateOnly: [] }],
  [
    'only the sidecar image in a multi-container pod',
    (t) => (t.spec!.containers[1]!.image = 'side:v2'),
    { images: { side: 'side:v2' }, recreateOnly: [] },
  ],
  [
    'a label added and one removed',
    (t) => (t.metadata!.labels = { app: 'web', tier: 'gold' }),
    { labels: { tier: 'gold' }, recreateOnly: [] },
  ],
  ['an annotation removed', (t) => (t.metadata!.annotations = {}), { annotations: { team: null }, recreateOnly: [] }],
  [
    "a template's lifecycle state label is never moved to pods (it would bypass the disruption budget)",
    (t) => (t.metadata!.labels = { app: 'web', 'lifecycle.apps.tailor.dev/state': 'PreparingDelete', tier: 'gold' }),
    { labels: { tier: 'gold' }, recreateOnly: [] },
  ],
  [
    "a template's Tailor control annotations are never moved to pods",
    (t) =>
      (t.metadata!.annotations = {
        team: 'a',
        'apps.tailor.dev/resize-request': '{}',
        'lifecycle.apps.tailor.dev/timestamp': '2026-01-01T00:00:00Z',
      }),
    { annotations: {}, recreateOnly: [] },
  ],
  ['env', (t) => (app(t).env = [{ name: 'A', value: '2' }]), { recreateOnly: ['spec.containers[app].env'] }],
  ['command', (t) => (app(t).command = ['/bin/sh']), { recreateOnly: ['spec.containers[app].command'] }],
  ['ports', (t) => (app(t).ports = [{ containerPort: 80 }]), { recreateOnly: ['spec.containers[app].ports'] }],
  [
    'a probe',
    (t) => (app(t).readinessProbe = { tcpSocket: { port: 80 } }),
    { recreateOnly: ['spec.containers[app].readinessProbe'] },
  ],
  ['volumes', (t) => (t.spec!.volumes = [{ name: 'v', emptyDir: {} }]), { recreateOnly: ['spec.volumes'] }],
  [
    'an init container added',
    (t) => (t.spec!.initContainers = [{ name: 'i', image: 'x' }]),
    { recreateOnly: ['spec.initContainers[*].name or restartPolicy'] },
  ],
  [
    'a container added',
    (t) => t.spec!.containers.push({ name: 'third', image: 'x' }),
    { recreateOnly: ['spec.containers[*].name'] },
  ],
  [
    'cpu request and memory limit values',
    (t) => {
      app(t).resources = { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '256Mi' } };
    },
    {
      resources: { app: { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '256Mi' } } },
      recreateOnly: [],
    },
  ],
  [
    'a limit removed',
    (t) => {
      app(t).resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } };
    },
    { resources: {}, recreateOnly: ['spec.containers[app].resources.limits.cpu (removed)'] },
  ],
  [
    'a non-resizable resource',
    (t) => {
      app(t).resources = { ...app(t).resources, requests: { cpu: '100m', memory: '64Mi', 'ephemeral-storage': '1Gi' } };
    },
    { recreateOnly: ['spec.containers[app].resources.requests.ephemeral-storage'] },
  ],
  [
    'image and env together',
    (t) => {
      app(t).image = 'img:v2';
      app(t).env = [];
    },
    { images: { app: 'img:v2' }, recreateOnly: ['spec.containers[app].env'] },
  ],
];

// Issue 21/24: native sidecars (init containers with restartPolicy Always) change image and
// cpu/memory in place like containers; run-to-completion init containers stay recreate-only;
// pod-level cpu/memory (spec.resources) is a resize when only values change.
const withInit: PodTemplate = {
  ...base,
  spec: {
    ...base.spec!,
    initContainers: [
      { name: 'setup', image: 'setup:v1' },
      {
        name: 'mesh',
        image: 'mesh:v1',
        restartPolicy: 'Always',
        resources: { requests: { cpu: '50m' }, limits: { cpu: '100m' } },
      },
    ],
    resources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
  },
};
const fromInit = (edit: Edit): PodTemplate => {
  const t = structuredClone(withInit);
  edit(t);
  return t;
};
const init = (t: PodTemplate, i: number) => t.spec!.initContainers![i]!;
const initTable: [string, Edit, Partial<ReturnType<typeof diffTemplates>>][] = [
  [
    'a sidecar image',
    (t) => (init(t, 1).image = 'mesh:v2'),
    { images: { mesh: 'mesh:v2' }, sidecars: ['mesh'], recreateOnly: [] },
  ],
  [
    'a sidecar cpu limit',
    (t) => (init(t, 1).resources = { requests: { cpu: '50m' }, limits: { cpu: '300m' } }),
    {
      resources: { mesh: { requests: { cpu: '50m' }, limits: { cpu: '300m' } } },
      sidecars: ['mesh'],
      recreateOnly: [],
    },
  ],
  [
    'a sidecar env',
    (t) => (init(t, 1).env = [{ name: 'X', value: '1' }]),
    { recreateOnly: ['spec.initContainers[mesh].env'], sidecars: [] },
  ],
  [
    'a run-to-completion init container image',
    (t) => (init(t, 0).image = 'setup:v2'),
    { images: {}, recreateOnly: ['spec.initContainers[setup]'] },
  ],
  [
    'an init container turned into a sidecar',
    (t) => (init(t, 0).restartPolicy = 'Always'),
    { recreateOnly: ['spec.initContainers[*].name or restartPolicy'] },
  ],
  [
    'pod-level cpu limit',
    (t) => (t.spec!.resources = { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '2', memory: '512Mi' } }),
    {
      podResources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '2', memory: '512Mi' } },
      recreateOnly: [],
    },
  ],
  [
    'pod-level limit removed',
    (t) => (t.spec!.resources = { requests: { cpu: '500m', memory: '256Mi' }, limits: { memory: '512Mi' } }),
    { recreateOnly: ['spec.resources.limits.cpu (removed)'] },
  ],
];

describe('diffTemplates classifies changes of sidecars, init containers and pod-level resources', () => {
  it.each(initTable)('%s', (_name, edit, expected) => {
    expect(diffTemplates(withInit, fromInit(edit))).toMatchObject(expected);
  });
});

describe('diffTemplates classifies each change', () => {
  it.each(table)('%s', (_name, edit, expected) => {
    expect(diffTemplates(base, edited(edit))).toMatchObject(expected);
  });
});

describe('diffTemplates is computed once per pair of templates', () => {
  it('returns the same frozen diff for the same two template objects, and a fresh one for another', () => {
    const target = edited((t) => (app(t).image = 'img:v2'));
    const first = diffTemplates(base, target);
    expect(diffTemplates(base, target)).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.images) && Object.isFrozen(first.recreateOnly)).toBe(true);
    const other = edited((t) => (app(t).image = 'img:v3'));
    expect(diffTemplates(base, other).images).toEqual({ app: 'img:v3' });
    expect(diffTemplates(target, base).images).toEqual({ app: 'img:v1' });
  });
});

// Issues 22.2 and 24.2: a container restarts in place when its env reads a pod label or annotation
// that changed (the kubelet resolves env at start only), and every container restarts when the
// template's restartedAt annotation changes (a rolling restart).
describe('diffTemplates finds containers to restart in place', () => {
  const fromEnv: PodTemplate = {
    metadata: { labels: { app: 'web', track: 'a' }, annotations: { note: 'x' } },
    spec: {
      initContainers: [{ name: 'mesh', image: 'mesh:v1', restartPolicy: 'Always' }],
      containers: [
        {
          name: 'app',
          image: 'img:v1',
          env: [{ name: 'TRACK', valueFrom: { fieldRef: { fieldPath: "metadata.labels['track']" } } }],
        },
        {
          name: 'side',
          image: 'side:v1',
          env: [{ name: 'ALL', valueFrom: { fieldRef: { fieldPath: 'metadata.annotations' } } }],
        },
      ],
    },
  };
  const edit = (e: Edit): PodTemplate => {
    const t = structuredClone(fromEnv);
    e(t);
    return t;
  };
  it.each([
    [
      'a label the env reads',
      (t: PodTemplate) => (t.metadata!.labels!['track'] = 'b'),
      { app: "env TRACK reads metadata.labels['track'], which changed" },
    ],
    ['a label no env reads', (t: PodTemplate) => (t.metadata!.labels!['tier'] = 'gold'), {}],
    [
      'an annotation, read whole by one env',
      (t: PodTemplate) => (t.metadata!.annotations!['note'] = 'y'),
      { side: 'env ALL reads metadata.annotations, which changed' },
    ],
    [
      'the label and the image of the same container (the image restarts it anyway)',
      (t: PodTemplate) => {
        t.metadata!.labels!['track'] = 'b';
        t.spec!.containers[0]!.image = 'img:v2';
      },
      {},
    ],
    [
      'the restartedAt annotation: every container and sidecar',
      (t: PodTemplate) => (t.metadata!.annotations!['kubectl.kubernetes.io/restartedAt'] = '2026-11-23T10:00:00Z'),
      {
        app: 'rolling restart (kubectl.kubernetes.io/restartedAt)',
        side: 'rolling restart (kubectl.kubernetes.io/restartedAt)',
        mesh: 'rolling restart (kubectl.kubernetes.io/restartedAt)',
      },
    ],
  ])('%s', (_, change, expected) => {
    const diff = diffTemplates(fromEnv, edit(change));
    expect(diff.restarts).toEqual(expected);
    expect(diff.recreateOnly).toEqual([]);
    expect(diff.sidecars.includes('mesh')).toBe('mesh' in expected);
  });
});
