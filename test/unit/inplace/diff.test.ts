import { describe, expect, it } from '@jest/globals';
import { diffTemplates, type PodTemplate } from '../../../src/inplace/diff.js';

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
  ['env', (t) => (app(t).env = [{ name: 'A', value: '2' }]), { recreateOnly: ['spec.containers[app].env'] }],
  ['command', (t) => (app(t).command = ['/bin/sh']), { recreateOnly: ['spec.containers[app].command'] }],
  ['ports', (t) => (app(t).ports = [{ containerPort: 80 }]), { recreateOnly: ['spec.containers[app].ports'] }],
  ['a probe', (t) => (app(t).readinessProbe = { tcpSocket: { port: 80 } }), { recreateOnly: ['spec.containers[app].readinessProbe'] }],
  ['volumes', (t) => (t.spec!.volumes = [{ name: 'v', emptyDir: {} }]), { recreateOnly: ['spec.volumes'] }],
  ['init containers', (t) => (t.spec!.initContainers = [{ name: 'i', image: 'x' }]), { recreateOnly: ['spec.initContainers'] }],
  ['a container added', (t) => t.spec!.containers.push({ name: 'third', image: 'x' }), { recreateOnly: ['spec.containers[*].name'] }],
  [
    'cpu request and memory limit values',
    (t) => {
      app(t).resources = { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '256Mi' } };
    },
    { resources: { app: { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '256Mi' } } }, recreateOnly: [] },
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
