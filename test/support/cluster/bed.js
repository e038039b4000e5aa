// The test bed's vocabulary for every test tier: where hack/cluster.sh keeps its state (the
// cluster directory, its kubeconfig, PKI, logs and pid files) and the API server's address. The
// node names, sockets and registry are testbed.ts's; both follow hack/bed/common.sh, the source of
// truth. Owns: these names only. Must not: start, stop or read anything.
// Plain JS: the global setup loads it outside the ts-jest transform.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root (import.meta.url: Jest's module VM has only the URL). */
export const REPO = fileURLToPath(new URL('../../..', import.meta.url));
/** hack/cluster.sh's state: CLUSTER_DIR, else .tailor/cluster. */
export const CLUSTER_DIR = process.env.CLUSTER_DIR ?? resolve(REPO, '.tailor/cluster');
/** The admin kubeconfig the bed writes; TAILOR_KUBECONFIG (set by the global setup) points a test at another. */
export const kubeconfigPath = () => process.env.TAILOR_KUBECONFIG ?? resolve(CLUSTER_DIR, 'kubeconfig');
export const PKI_DIR = resolve(CLUSTER_DIR, 'pki');
/** One log per process the bed starts, the API server's audit log among them. */
export const LOG_DIR = resolve(CLUSTER_DIR, 'logs');
/** One pid file per process the bed starts: pids/<name>.pid. */
export const pidFile = (name) => resolve(CLUSTER_DIR, 'pids', `${name}.pid`);
/** The API server, on the host's bed address (APISERVER_IP and APISERVER_PORT of hack/bed/common.sh). */
export const APISERVER_HOST = '198.18.0.1';
export const APISERVER_PORT = 6443;
