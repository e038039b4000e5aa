import { describe, expect, it } from '@jest/globals';
import type { ControllerRevision } from '../../../../src/api/revision.js';
import {
  imageLocation,
  imagesToPrePull,
  nextReport,
  parseDockerConfigSecret,
  registryAuthFor,
  type DockerConfig,
} from '../../../../src/agent/pure/prepull-plan.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../../../src/api/types.js';
import { buildPod, cloneSetOwner } from '../../../support/fixtures/pods.js';

const revision = (
  name: string,
  number: number,
  images: Record<string, string>,
  owner = 'cs',
  namespace = 'ns',
): ControllerRevision => ({
  revision: number,
  metadata: { name, namespace, ownerReferences: [cloneSetOwner('web', owner)] },
  data: { template: { spec: { containers: Object.entries(images).map(([n, image]) => ({ name: n, image })) } } },
});
const pod = (
  name: string,
  rev: string,
  images: Record<string, string>,
  extra: Partial<Parameters<typeof buildPod>[0]> = {},
) =>
  buildPod({
    name,
    labels: { [LABEL_CONTROLLER_REVISION_HASH]: rev },
    ownerReferences: [cloneSetOwner()],
    containers: Object.entries(images).map(([n, image]) => ({ name: n, image })),
    spec: { imagePullSecrets: [{ name: 'regcred' }] },
    ...extra,
  });

describe('imagesToPrePull: the newest revision images that pods on the node do not run yet', () => {
  const revisions = [
    revision('web-1', 1, { app: 'app:v1', log: 'log:v1' }),
    revision('web-2', 2, { app: 'app:v2', log: 'log:v1' }),
  ];

  it.each<[string, ReturnType<typeof buildPod>[], ControllerRevision[], string[]]>([
    [
      'a pod on an older revision wants the changed image only',
      [pod('a', 'web-1', { app: 'app:v1', log: 'log:v1' })],
      revisions,
      ['app:v2'],
    ],
    [
      'a pod on the newest revision wants nothing',
      [pod('a', 'web-2', { app: 'app:v2', log: 'log:v1' })],
      revisions,
      [],
    ],
    [
      'a rollback renumbers the reused revision: the highest number wins, not the newest name',
      [pod('a', 'web-2', { app: 'app:v2', log: 'log:v1' })],
      [revision('web-1', 3, { app: 'app:v1', log: 'log:v1' }), revision('web-2', 2, { app: 'app:v2', log: 'log:v1' })],
      ['app:v1'],
    ],
    [
      'a pod of another CloneSet wants nothing from this one',
      [pod('a', 'x-1', { app: 'app:v1' }, { ownerReferences: [cloneSetOwner('x', 'other')] })],
      revisions,
      [],
    ],
    [
      'a pod without a CloneSet owner wants nothing',
      [pod('a', 'web-1', { app: 'app:v1' }, { ownerReferences: [] })],
      revisions,
      [],
    ],
    ['a finished pod wants nothing', [pod('a', 'web-1', { app: 'app:v1' }, { phase: 'Succeeded' })], revisions, []],
    [
      'two pods wanting one image pull it once',
      [pod('a', 'web-1', { app: 'app:v1' }), pod('b', 'web-1', { app: 'app:v1' })],
      revisions,
      ['app:v2'],
    ],
    [
      'a container the pod does not have is not pulled (it needs a recreate)',
      [pod('a', 'web-1', { log: 'log:v1' })],
      revisions,
      [],
    ],
    // Issue 31.3: the newest revision is looked up by namespace and UID, under a CloneSet controller reference.
    [
      "a revision in another namespace naming the pod's CloneSet UID is ignored, however high its number",
      [pod('a', 'web-1', { app: 'app:v1', log: 'log:v1' })],
      [...revisions, revision('web-evil', 999, { app: 'evil:latest', log: 'log:v1' }, 'cs', 'attacker')],
      ['app:v2'],
    ],
    [
      "a revision whose controller is not an apps.tailor.dev CloneSet is ignored, even in the pod's namespace",
      [pod('a', 'web-1', { app: 'app:v1', log: 'log:v1' })],
      [
        ...revisions,
        {
          ...revision('web-evil', 999, { app: 'evil:latest' }),
          metadata: {
            name: 'web-evil',
            namespace: 'ns',
            ownerReferences: [{ ...cloneSetOwner('web', 'cs'), apiVersion: 'apps.kruise.io/v1alpha1' }],
          },
        },
      ],
      ['app:v2'],
    ],
  ])('%s', (_name, pods, revs, expected) => {
    expect([...imagesToPrePull(pods, revs).keys()]).toEqual(expected);
  });

  it('names the wanting pod namespace and pull secrets for the credentials', () => {
    const teamRevisions = [
      revision('web-1', 1, { app: 'app:v1' }, 'cs', 'team'),
      revision('web-2', 2, { app: 'app:v2' }, 'cs', 'team'),
    ];
    const wanted = imagesToPrePull([pod('a', 'web-1', { app: 'app:v1' }, { namespace: 'team' })], teamRevisions);
    expect(wanted.get('app:v2')).toEqual({ image: 'app:v2', namespace: 'team', pullSecrets: ['regcred'] });
  });
});

describe('nextReport lists only the images still wanted', () => {
  it('drops a pull whose image no pod wants any more', () => {
    const pulls = new Map([
      ['a', { state: 'Pulled' as const, since: '2026-01-01T00:00:00Z' }],
      ['b', { state: 'Pulling' as const, since: '2026-01-01T00:00:00Z' }],
    ]);
    expect([...nextReport(['b'], pulls).keys()]).toEqual(['b']);
  });
});

describe('registry credentials match as the kubelet matches them', () => {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  it.each<[string, string, string]>([
    ['busybox', 'docker.io', 'library/busybox'],
    ['busybox:1.36', 'docker.io', 'library/busybox'],
    ['team/app:v1', 'docker.io', 'team/app'],
    ['registry.example.com/team/app:v1', 'registry.example.com', 'team/app'],
    ['127.0.0.1:5050/tailor/slow:v2', '127.0.0.1', 'tailor/slow'],
    ['localhost/app@sha256:abc', 'localhost', 'app'],
  ])('%s is at %s, path %s', (image, host, path) => {
    expect(imageLocation(image)).toMatchObject({ host, path });
  });

  const config: DockerConfig = {
    'https://index.docker.io/v1/': { username: 'hub', password: 'h' },
    'registry.example.com': { auth: b64('any:a') },
    'registry.example.com/team': { auth: b64('team:t') },
    '*.corp.example': { username: 'corp', password: 'c' },
    '127.0.0.1:5050': { auth: b64('local:l') },
  };
  it.each<[string, string | undefined]>([
    ['busybox', 'hub'],
    ['registry.example.com/other/app', 'any'],
    ['registry.example.com/team/app', 'team'],
    ['registry.example.com/teamx/app', 'any'],
    ['eu.corp.example/app', 'corp'],
    ['a.eu.corp.example/app', undefined],
    ['127.0.0.1:5050/tailor/slow:v2', 'local'],
    ['127.0.0.1:5051/tailor/slow:v2', undefined],
    ['quay.io/app', undefined],
  ])('%s uses the credential of %s', (image, user) => {
    expect(registryAuthFor(image, [config])?.username).toBe(user);
  });

  it('takes the first secret that has a matching entry, as the pod lists them', () => {
    const first: DockerConfig = { 'quay.io': { username: 'q', password: '' } };
    const second: DockerConfig = {
      'quay.io': { username: 'q2', password: '' },
      'docker.io': { username: 'd', password: '' },
    };
    expect(registryAuthFor('quay.io/x', [first, second])?.username).toBe('q');
    expect(registryAuthFor('busybox', [first, second])?.username).toBe('d');
  });

  it('reads dockerconfigjson and dockercfg secrets, and nothing else', () => {
    const auths = { 'r.example': { auth: b64('u:p') } };
    const json = {
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
    };
    const cfg = { type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64(JSON.stringify(auths)) } };
    expect(parseDockerConfigSecret(json)).toEqual(auths);
    expect(parseDockerConfigSecret(cfg)).toEqual(auths);
    expect(parseDockerConfigSecret({ type: 'Opaque', data: { token: b64('x') } })).toBeUndefined();
    expect(parseDockerConfigSecret({ data: { '.dockerconfigjson': b64('not json') } })).toBeUndefined();
    expect(registryAuthFor('r.example/app', [parseDockerConfigSecret(json) ?? {}])).toEqual({
      username: 'u',
      password: 'p',
    });
  });
});
