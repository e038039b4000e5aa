// Loads the kubeconfig the way kubectl does (flag, $KUBECONFIG, ~/.kube/config, in-cluster) and
// checks the cluster answers, so "no cluster" is one clear line rather than a stack trace.
// The controller and the agent use a light loader of our own: @kubernetes/client-node's
// KubeConfig pulls in the whole generated API (about 75 MB of resident memory, half of the
// controller's budget with 10,000 pods cached) for what is, in the usual case, a server address,
// a CA and a client certificate or token. The light loader handles exactly those (and the
// in-cluster service account); anything else (exec plugins, auth providers, impersonation, proxies,
// several $KUBECONFIG files, no config at all) is left to client-node, loaded only then.
// Must not: talk to the cluster beyond the one /version check, or keep state besides the token.
import { readFileSync, existsSync } from 'node:fs';
import type https from 'node:https';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { KubeClient, type KubeAuth } from '../runtime/kube-client.js';

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** A token file is read again after this long (client-go and client-node do the same). */
const TOKEN_REREAD_MS = 60_000;

/** What the light loader understood of one kubeconfig: where the server is and how to log in. */
export interface Connection {
  server: string;
  ca?: { data?: string; file?: string };
  insecure?: boolean;
  cert?: { data?: string; file?: string };
  key?: { data?: string; file?: string };
  token?: string;
  tokenFile?: string;
  basic?: { username: string; password: string };
}

const CLUSTER_KEYS = new Set([
  'server',
  'certificate-authority',
  'certificate-authority-data',
  'insecure-skip-tls-verify',
  'extensions',
]);
const USER_KEYS = new Set([
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'token',
  'token-file',
  'tokenFile',
  'username',
  'password',
  'extensions',
]);

type Named<K extends string> = { name?: unknown } & Partial<Record<K, Record<string, unknown>>>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The connection a parsed kubeconfig describes (its current context), or undefined when it uses
 * something only client-node handles. Relative file paths are relative to `dir`, as kubectl reads them.
 */
export function connectionOf(config: unknown, dir: string): Connection | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const c = config as { 'current-context'?: unknown; contexts?: unknown; clusters?: unknown; users?: unknown };
  const find = <K extends string>(list: unknown, name: unknown, key: K): Record<string, unknown> | undefined =>
    Array.isArray(list) ? (list as Named<K>[]).find((e) => e?.name === name)?.[key] : undefined;
  const context = find(c.contexts, c['current-context'], 'context');
  if (!context) return undefined;
  const cluster = find(c.clusters, context['cluster'], 'cluster');
  const user = context['user'] === undefined ? {} : find(c.users, context['user'], 'user');
  if (!cluster || !user) return undefined;
  if (Object.keys(cluster).some((k) => !CLUSTER_KEYS.has(k)) || Object.keys(user).some((k) => !USER_KEYS.has(k)))
    return undefined;
  const server = str(cluster['server']);
  if (!server) return undefined;
  const path = (p: unknown): string | undefined => {
    const s = str(p);
    return s === undefined || isAbsolute(s) ? s : join(dir, s);
  };
  const source = (file: unknown, data: unknown): { data?: string; file?: string } | undefined => {
    const f = path(file);
    const d = str(data);
    return f ? { file: f } : d ? { data: d } : undefined;
  };
  const conn: Connection = { server: server.replace(/\/$/, '') };
  const ca = source(cluster['certificate-authority'], cluster['certificate-authority-data']);
  if (ca) conn.ca = ca;
  if (cluster['insecure-skip-tls-verify'] === true) conn.insecure = true;
  const cert = source(user['client-certificate'], user['client-certificate-data']);
  const key = source(user['client-key'], user['client-key-data']);
  if (cert) conn.cert = cert;
  if (key) conn.key = key;
  const token = str(user['token']);
  const tokenFile = path(user['token-file'] ?? user['tokenFile']);
  if (token) conn.token = token;
  else if (tokenFile) conn.tokenFile = tokenFile;
  const username = str(user['username']);
  if (username) conn.basic = { username, password: typeof user['password'] === 'string' ? user['password'] : '' };
  return conn;
}

/** The in-cluster connection (service account), as client-node's loadFromCluster builds it. */
export function inClusterConnection(env: NodeJS.ProcessEnv, saDir = SA_DIR): Connection | undefined {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) return undefined;
  const scheme = ['80', '8080', '8001'].includes(port) ? 'http' : 'https';
  const server = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return { server, ca: { file: join(saDir, 'ca.crt') }, tokenFile: join(saDir, 'token') };
}

/** A Connection as the client's authentication: TLS material read once, a token file re-read every minute. */
export class LightKubeConfig implements KubeAuth {
  private readonly tls: Pick<https.RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized'> = {};
  private token: { value: string; readAt: number } | undefined;

  constructor(
    readonly connection: Connection,
    private readonly now: () => number = Date.now,
  ) {
    const read = (s: { data?: string; file?: string } | undefined): Buffer | undefined =>
      s?.file ? readFileSync(s.file) : s?.data ? Buffer.from(s.data, 'base64') : undefined;
    const ca = read(connection.ca);
    const cert = read(connection.cert);
    const key = read(connection.key);
    if (ca) this.tls.ca = ca;
    if (cert) this.tls.cert = cert;
    if (key) this.tls.key = key;
    if (connection.insecure) this.tls.rejectUnauthorized = false;
  }

  getCurrentCluster(): { server: string } {
    return { server: this.connection.server };
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    Object.assign(options, this.tls);
    const bearer = this.connection.token ?? this.fileToken();
    if (bearer) options.headers = { ...(options.headers ?? {}), Authorization: `Bearer ${bearer}` };
    const basic = this.connection.basic;
    if (basic) options.auth = `${basic.username}:${basic.password}`;
    return Promise.resolve();
  }

  private fileToken(): string | undefined {
    const file = this.connection.tokenFile;
    if (!file) return undefined;
    const now = this.now();
    if (!this.token || now - this.token.readAt > TOKEN_REREAD_MS) {
      this.token = { value: readFileSync(file, 'utf8').trim(), readAt: now };
    }
    return this.token.value;
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\s*/g;
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----\s*/;

/**
 * The node's own identity for the requests the Node authorizer should judge: the server and CA of
 * `base`, with the kubelet's client certificate and key (one PEM file holding both, as the
 * kubelet's certificate rotation writes `kubelet-client-current.pem`) instead of `base`'s token or
 * certificate. The file is read again every minute, so a rotated certificate is picked up.
 * The API server then gives these requests exactly the kubelet's power: the secrets of the pods
 * bound to this node (docs/decisions/0053-agent-reads-pull-secrets-as-its-node.md).
 */
export class NodeIdentityAuth implements KubeAuth {
  private pem: { cert: string; key: string; readAt: number } | undefined;

  constructor(
    private readonly base: KubeAuth,
    readonly pemFile: string,
    private readonly now: () => number = Date.now,
  ) {}

  getCurrentCluster(): { server: string } | null {
    return this.base.getCurrentCluster();
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    await this.base.applyToHTTPSOptions(options);
    const { Authorization: _dropped, ...headers } = (options.headers ?? {}) as Record<string, string>;
    options.headers = headers;
    delete options.auth;
    const { cert, key } = this.credentials();
    options.cert = cert;
    options.key = key;
  }

  private credentials(): { cert: string; key: string } {
    const now = this.now();
    if (this.pem === undefined || now - this.pem.readAt > TOKEN_REREAD_MS) {
      const text = readFileSync(this.pemFile, 'utf8');
      const cert = (text.match(PEM_CERTIFICATE) ?? []).join('');
      const key = PEM_PRIVATE_KEY.exec(text)?.[0];
      if (cert === '' || key === undefined)
        throw new Error(`${this.pemFile} does not hold a PEM certificate and private key`);
      this.pem = { cert, key, readAt: now };
    }
    return this.pem;
  }
}

/** The light loader's answer for `path` (or kubectl's defaults), or undefined: client-node must load it. */
function lightKubeConfig(path: string | undefined): LightKubeConfig | undefined {
  const fromFile = (file: string): LightKubeConfig | undefined => {
    const conn = connectionOf(yaml.load(readFileSync(file, 'utf8')), dirname(file));
    return conn ? new LightKubeConfig(conn) : undefined;
  };
  if (path) return fromFile(path);
  const env = process.env['KUBECONFIG'];
  if (env) {
    const files = env.split(delimiter).filter((f) => f !== '');
    return files.length === 1 ? fromFile(files[0]!) : undefined;
  }
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return fromFile(home);
  const inCluster = inClusterConnection(process.env);
  return inCluster ? new LightKubeConfig(inCluster) : undefined;
}

/** client-node's full KubeConfig (contexts, exec plugins, auth providers); loaded on demand. */
async function fullKubeConfig(path: string | undefined): Promise<k8s.KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

async function checkReachable(config: KubeAuth): Promise<void> {
  const server = config.getCurrentCluster()?.server;
  if (!server) throw new Error('no cluster configured: pass --kubeconfig or set KUBECONFIG');
  const client = new KubeClient(config);
  try {
    await client.get('/version');
  } catch (err) {
    throw new Error(
      `cannot reach the cluster at ${server}: ${err instanceof Error ? ((err.cause as Error)?.message ?? err.message) : String(err)}`,
      { cause: err },
    );
  } finally {
    client.close();
  }
}

/** For long-running processes (controller, agent): the light loader when it can, client-node otherwise. */
export async function loadKubeAuth(path: string | undefined): Promise<KubeAuth> {
  const config = lightKubeConfig(path) ?? (await fullKubeConfig(path));
  await checkReachable(config);
  return config;
}

/** client-node's KubeConfig, for callers that need contexts and namespaces (the kubectl plugin). */
export async function loadKubeConfig(path: string | undefined): Promise<k8s.KubeConfig> {
  const kc = await fullKubeConfig(path);
  await checkReachable(kc);
  return kc;
}
