// OpenKruise Rollout on the bed, unmodified (issue 44, decision 95): the pinned release built from
// its Go module (hack/build-kruise-rollout.sh) and installed from its own manifests as its
// config/default lays them out (namespace kruise-rollout, names prefixed kruise-rollout-), without
// its Deployment: the bed has no registry for its image, so the same binary runs here as a process,
// logged in as the manifests' ServiceAccount, its webhooks served on the host (its own WEBHOOK_HOST
// mode: it writes URL client configurations and its own certificates). Tailor's overlay
// (config/kruise-rollout/rbac.yaml) and the one flag the generic workload path needs
// (--filter-workload-type=false) are all that is added.
// Owns: the process, its manifests' cluster objects and the overlay; `stop` removes the webhook
// configurations (they fail closed) and leaves the CRDs. Must not: touch Tailor's own install.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dump, loadAll } from 'js-yaml';
import { join, resolve } from 'node:path';
import type { KubeClient } from '../../../src/runtime/kube-client.js';
import { freePort } from '../fault/controllers.js';
import { kubeconfigPath, loadTestKubeConfig } from './kube.js';
import { eventually, kubectl } from './testbed.js';

const VERSION = /^KRUISE_ROLLOUT_VERSION=(\S+)/m.exec(readFileSync('hack/versions.sh', 'utf8'))?.[1] ?? 'unknown';
const ROOT = resolve(process.env.TAILOR_CACHE ?? `${homedir()}/.cache/tailor`, 'kruise-rollout', `v${VERSION}`);
export const KRUISE_ROLLOUT_NAMESPACE = 'kruise-rollout';
const SERVICE_ACCOUNT = 'kruise-rollout-controller-manager';
const WEBHOOKS = [
  'mutatingwebhookconfiguration/kruise-rollout-mutating-webhook-configuration',
  'validatingwebhookconfiguration/kruise-rollout-validating-webhook-configuration',
];
/** The address the API server reaches the host at (the bed's advertise address). */
const HOST = new URL(loadTestKubeConfig().getCurrentCluster()?.server ?? 'https://127.0.0.1').hostname;
const LOGS = resolve(process.cwd(), '.tailor/logs');

export interface KruiseRollout {
  readonly version: string;
  /** Lines of its log so far (klog). */
  readonly log: string[];
  stop(): Promise<void>;
}

/** config/default without the manager's Deployment and its metrics proxy. */
const KUSTOMIZATION = `namespace: ${KRUISE_ROLLOUT_NAMESPACE}
namePrefix: kruise-rollout-
resources:
- crd
- rbac/service_account.yaml
- rbac/role.yaml
- rbac/role_binding.yaml
- rbac/leader_election_role.yaml
- rbac/leader_election_role_binding.yaml
- webhook
`;

/**
 * Applies the rendered manifests. A running Kruise Rollout rewrites its webhooks' and CRDs'
 * client configurations (a URL and its CA instead of the Service), so objects a run before left
 * behind would hold both after an apply: the webhook configurations are created afresh, and CRDs
 * that exist are left as they are (the same pinned release wrote them).
 */
function installManifests(work: string): void {
  const manifests = join(work, 'manifests');
  for (const part of ['crd', 'rbac', 'webhook'])
    cpSync(join(ROOT, 'src/config', part), join(manifests, part), { recursive: true });
  writeFileSync(join(manifests, 'kustomization.yaml'), KUSTOMIZATION);
  kubectl(
    ['apply', '-f', '-'],
    kubectl(['create', 'namespace', KRUISE_ROLLOUT_NAMESPACE, '--dry-run=client', '-o', 'yaml']),
  );
  kubectl(['delete', '--ignore-not-found', ...WEBHOOKS]);
  const present = new Set(kubectl(['get', 'crd', '-o', 'name']).split('\n'));
  const documents = (
    loadAll(kubectl(['kustomize', manifests])) as { kind?: string; metadata?: { name?: string } }[]
  ).filter(
    (d) =>
      !(
        d.kind === 'CustomResourceDefinition' &&
        present.has(`customresourcedefinition.apiextensions.k8s.io/${d.metadata?.name}`)
      ),
  );
  kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], documents.map((d) => dump(d)).join('---\n'));
  kubectl(['apply', '-f', 'config/kruise-rollout/rbac.yaml']);
}

function tokenKubeconfig(work: string): string {
  const token = kubectl(['create', 'token', '-n', KRUISE_ROLLOUT_NAMESPACE, SERVICE_ACCOUNT, '--duration=2h']).trim();
  const path = join(work, 'kubeconfig');
  writeFileSync(path, readFileSync(kubeconfigPath(), 'utf8'));
  const as = ['--kubeconfig', path];
  kubectl([...as, 'config', 'set-credentials', SERVICE_ACCOUNT, `--token=${token}`]);
  kubectl([...as, 'config', 'set-context', '--current', `--user=${SERVICE_ACCOUNT}`]);
  return path;
}

/** Installs and starts Kruise Rollout; resolves once its webhooks are served and configured. */
export async function startKruiseRollout(client: KubeClient): Promise<KruiseRollout> {
  const binary = join(ROOT, 'bin/kruise-rollout');
  // Built by hack/test.sh's background builds as a rule; this waits for one under way (its lock),
  // or builds it when the tier runs alone.
  if (!existsSync(binary))
    execFileSync('bash', ['hack/build-kruise-rollout.sh'], { stdio: 'pipe', timeout: 1_200_000 });
  const work = mkdtempSync(join(tmpdir(), 'tailor-kruise-rollout-'));
  installManifests(work);
  const kubeconfig = tokenKubeconfig(work);
  const [webhookPort, healthPort] = [await freePort(), await freePort()];
  mkdirSync(LOGS, { recursive: true });
  const logFile = join(LOGS, `kruise-rollout-${webhookPort}.log`);
  const child: ChildProcess = spawn(
    binary,
    [
      '--filter-workload-type=false',
      '--leader-elect=false',
      '--metrics-bind-address=0',
      `--health-probe-bind-address=127.0.0.1:${healthPort}`,
    ],
    {
      env: {
        ...process.env,
        KUBECONFIG: kubeconfig,
        POD_NAMESPACE: KRUISE_ROLLOUT_NAMESPACE,
        WEBHOOK_HOST: HOST,
        WEBHOOK_PORT: String(webhookPort),
        WEBHOOK_CERT_DIR: join(work, 'certs'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const log: string[] = [];
  const keep = (chunk: Buffer): void => {
    appendFileSync(logFile, chunk);
    log.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    kubectl(['delete', '--ignore-not-found', ...WEBHOOKS]);
    rmSync(work, { recursive: true, force: true });
  };
  try {
    await eventually(
      `Kruise Rollout to serve its webhooks at ${HOST}:${webhookPort} (log: ${logFile})`,
      async () => {
        if (child.exitCode !== null)
          throw new Error(`kruise-rollout exited ${child.exitCode}: ${log.slice(-5).join('\n')}`);
        const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        const config = await client.get<{ webhooks?: { clientConfig?: { url?: string; caBundle?: string } }[] }>(
          '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/kruise-rollout-mutating-webhook-configuration',
        );
        const configured = (config.webhooks ?? []).every(
          (w) => w.clientConfig?.caBundle && w.clientConfig.url?.includes(`:${webhookPort}/`),
        );
        return ready && configured ? true : undefined;
      },
      60_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { version: VERSION, log, stop };
}
