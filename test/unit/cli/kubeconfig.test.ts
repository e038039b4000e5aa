// The controller's light kubeconfig loader: which kubeconfigs it understands by itself (server,
// CA, client certificate, token, token file, basic auth; in-cluster) and which it leaves to
// client-node (exec plugins, auth providers, impersonation, proxies), and what it puts on a request.
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionOf, inClusterConnection, LightKubeConfig } from '../../../src/cli/kubeconfig.js';

const config = (cluster: Record<string, unknown>, user: Record<string, unknown>): unknown => ({
  apiVersion: 'v1',
  kind: 'Config',
  'current-context': 'main',
  contexts: [
    { name: 'other', context: { cluster: 'nowhere', user: 'nobody' } },
    { name: 'main', context: { cluster: 'c', user: 'u', namespace: 'ns' } },
  ],
  clusters: [{ name: 'c', cluster }],
  users: [{ name: 'u', user }],
});

describe('connectionOf', () => {
  test('reads the current context: server, CA and client certificate, relative files next to the kubeconfig', () => {
    const conn = connectionOf(
      config(
        { server: 'https://198.18.0.1:6443/', 'certificate-authority': 'ca.crt' },
        { 'client-certificate-data': 'Y2VydA==', 'client-key': '/abs/key.pem' },
      ),
      '/home/me/.kube',
    );
    expect(conn).toEqual({
      server: 'https://198.18.0.1:6443',
      ca: { file: '/home/me/.kube/ca.crt' },
      cert: { data: 'Y2VydA==' },
      key: { file: '/abs/key.pem' },
    });
  });

  test('token, token file, basic auth and insecure-skip-tls-verify', () => {
    expect(
      connectionOf(config({ server: 'https://x', 'insecure-skip-tls-verify': true }, { token: 't0k' }), '/d'),
    ).toEqual({
      server: 'https://x',
      insecure: true,
      token: 't0k',
    });
    expect(connectionOf(config({ server: 'https://x' }, { 'token-file': 'tok' }), '/d')).toEqual({
      server: 'https://x',
      tokenFile: '/d/tok',
    });
    expect(connectionOf(config({ server: 'https://x' }, { username: 'admin', password: 'pw' }), '/d')).toEqual({
      server: 'https://x',
      basic: { username: 'admin', password: 'pw' },
    });
  });

  test.each([
    ['an exec plugin', {}, { exec: { command: 'aws', args: ['eks', 'get-token'] } }],
    ['an auth provider', {}, { 'auth-provider': { name: 'oidc', config: {} } }],
    ['impersonation', {}, { token: 't', as: 'someone' }],
    ['a proxy', { 'proxy-url': 'socks5://proxy:1080' }, {}],
    ['a TLS server name', { 'tls-server-name': 'api.internal' }, {}],
  ])('leaves %s to client-node', (_what, cluster, user) => {
    expect(connectionOf(config({ server: 'https://x', ...cluster }, user), '/d')).toBeUndefined();
  });

  test('leaves a config without a usable current context to client-node', () => {
    expect(connectionOf({ clusters: [] }, '/d')).toBeUndefined();
    expect(
      connectionOf({ ...(config({ server: 'https://x' }, {}) as object), 'current-context': 'missing' }, '/d'),
    ).toBeUndefined();
    expect(connectionOf(config({}, {}), '/d')).toBeUndefined();
    expect(connectionOf('not a config', '/d')).toBeUndefined();
  });
});

describe('inClusterConnection', () => {
  test('the service account, as client-node builds it (IPv6 in brackets, http on the plain ports)', () => {
    expect(
      inClusterConnection({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, '/sa'),
    ).toEqual({
      server: 'https://10.96.0.1:443',
      ca: { file: '/sa/ca.crt' },
      tokenFile: '/sa/token',
    });
    expect(
      inClusterConnection({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '8080' }, '/sa')?.server,
    ).toBe('http://[fd00::1]:8080');
    expect(inClusterConnection({}, '/sa')).toBeUndefined();
  });
});

describe('LightKubeConfig', () => {
  test('puts the TLS material and the bearer token on a request; a token file is read again after a minute', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-kubeconfig-'));
    writeFileSync(join(dir, 'ca.crt'), 'CA');
    writeFileSync(join(dir, 'token'), 'first\n');
    let now = 0;
    const kc = new LightKubeConfig(
      {
        server: 'https://x',
        ca: { file: join(dir, 'ca.crt') },
        cert: { data: Buffer.from('CERT').toString('base64') },
        tokenFile: join(dir, 'token'),
      },
      () => now,
    );
    expect(kc.getCurrentCluster()).toEqual({ server: 'https://x' });
    const apply = async (): Promise<https.RequestOptions> => {
      const options: https.RequestOptions = { headers: { Accept: 'application/json' } };
      await kc.applyToHTTPSOptions(options);
      return options;
    };
    const first = await apply();
    expect(first.ca?.toString()).toBe('CA');
    expect(first.cert?.toString()).toBe('CERT');
    expect(first.rejectUnauthorized).toBeUndefined();
    expect(first.headers).toEqual({ Accept: 'application/json', Authorization: 'Bearer first' });
    writeFileSync(join(dir, 'token'), 'rotated\n');
    now = 59_000;
    expect((await apply()).headers).toMatchObject({ Authorization: 'Bearer first' });
    now = 61_000;
    expect((await apply()).headers).toMatchObject({ Authorization: 'Bearer rotated' });
  });

  test('basic auth and an insecure cluster', async () => {
    const kc = new LightKubeConfig({ server: 'https://x', insecure: true, basic: { username: 'a', password: 'b' } });
    const options: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(options);
    expect(options).toEqual({ rejectUnauthorized: false, auth: 'a:b' });
  });
});
