// Jest global setup/teardown for the tiers that need the test-bed cluster. Brings the cluster up
// on the targeted release (KUBE_VERSION, else hack/versions.sh's default) in the mode the tier
// needs (reusing a healthy one of that release) and, at teardown, stops it only if this run
// started it, so a developer's `make dev` cluster survives `make test`. A cluster of another
// release is not reused: hack/cluster.sh replaces it, and this run then owns (and stops) the new one.
// Plain JS: Jest loads global setup files outside the ts-jest transform.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { kubeVersion } from './kube-version.js';
import { CLUSTER_DIR as clusterDir, REPO as repo } from './bed.js';

const marker = resolve(clusterDir, 'started-by-test');

function currentMode() {
  const recorded = resolve(clusterDir, 'version');
  if (!existsSync(recorded) || readFileSync(recorded, 'utf8').trim() !== kubeVersion()) return 'down';
  const status = spawnSync('bash', [resolve(repo, 'hack/cluster.sh'), 'status'], { encoding: 'utf8' });
  if (!/kube-apiserver\s+running/.test(status.stdout)) return 'down';
  if (/kubelet-\S+\s+running/.test(status.stdout)) return 'full';
  return existsSync(resolve(clusterDir, 'mode'))
    ? readFileSync(resolve(clusterDir, 'mode'), 'utf8').trim()
    : 'control-plane';
}

export function clusterSetup(mode) {
  return async function setup() {
    const before = currentMode();
    const covers = before === 'full' || before === mode;
    // cluster.sh reads the release from the environment too; pinned here so both agree.
    const env = { ...process.env, KUBE_VERSION: kubeVersion() };
    try {
      execFileSync('bash', [resolve(repo, 'hack/cluster.sh'), 'up', covers ? before : mode], { stdio: 'inherit', env });
    } catch (err) {
      // A half-started test bed this run began would otherwise outlive it, and the next tier would
      // find its components in the way.
      if (before === 'down') spawnSync('bash', [resolve(repo, 'hack/cluster.sh'), 'down'], { stdio: 'inherit' });
      throw err;
    }
    if (before === 'down') writeFileSync(marker, mode);
    process.env.TAILOR_KUBECONFIG = resolve(clusterDir, 'kubeconfig');
    // kubectl's discovery cache of this bed only (hack/bed/common.sh says why).
    process.env.KUBECACHEDIR = resolve(clusterDir, 'kubectl-cache');
    // On the full bed, the namespaces of specs written for one node keep their pods on the first
    // (test/support/cluster/kube.ts createTestNamespace; decision 61).
    if (mode === 'full') process.env.TAILOR_TEST_NODE = 'tailor-node';
    // The tests' own kubectl and cluster.sh calls then target the release this setup started.
    process.env.KUBE_VERSION = env.KUBE_VERSION;
  };
}

export async function clusterTeardown() {
  if (process.env.TAILOR_KEEP_CLUSTER || !existsSync(marker)) return;
  rmSync(marker);
  execFileSync('bash', [resolve(repo, 'hack/cluster.sh'), 'down'], { stdio: 'inherit' });
}
