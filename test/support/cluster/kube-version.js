// The Kubernetes release the test bed's kubelets run (the control plane is always the default
// release: controlPlaneVersion), for Jest's config, the cluster tiers' global setup and the tests: KUBE_VERSION from the environment, else hack/versions.sh's default — the rule every
// hack/ script follows, so a test never drives a cluster of another version than the one it started.
// Owns: reading hack/versions.sh. Must not: start or stop anything.
// Plain JS: jest.config.js and the global setup load it outside the ts-jest transform.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// import.meta.url, not import.meta.dirname: Jest's module VM (tests importing this) has only the URL.
const versionsFile = fileURLToPath(new URL('../../../hack/versions.sh', import.meta.url));

function versionsText() {
  return readFileSync(versionsFile, 'utf8');
}

/** The releases `make test` covers, the default first. */
export function kubeVersions() {
  const listed = /^KUBE_VERSIONS="([^"]+)"$/m.exec(versionsText())?.[1];
  if (!listed) throw new Error(`no KUBE_VERSIONS="…" line in ${versionsFile}`);
  return listed.split(/\s+/).filter(Boolean);
}

/** The release this process targets: $KUBE_VERSION, else the default in hack/versions.sh. */
export function kubeVersion() {
  if (process.env.KUBE_VERSION) return process.env.KUBE_VERSION;
  const fallback = /^KUBE_VERSION=\$\{KUBE_VERSION:-([^}]+)\}$/m.exec(versionsText())?.[1];
  if (!fallback) throw new Error(`no KUBE_VERSION=\${KUBE_VERSION:-…} line in ${versionsFile}`);
  return fallback;
}

/**
 * The release of the control plane (API server, controller-manager, scheduler) and kubectl: always
 * the default; another targeted release is the nodes' kubelet only (hack/versions.sh
 * KUBE_CONTROL_PLANE_VERSION; decision 62).
 */
export function controlPlaneVersion() {
  return kubeVersions()[0];
}

/** A binary the test bed runs, as hack/build-k8s.sh caches it: the kubelet of the targeted release, the rest of the control plane's. */
export function kubeBinary(name) {
  const cache = process.env.TAILOR_CACHE ?? `${process.env.HOME}/.cache/tailor`;
  return `${cache}/kubernetes/v${name === 'kubelet' ? kubeVersion() : controlPlaneVersion()}/bin/${name}`;
}

/**
 * Whether the release's kubelet can run with InPlacePodVerticalScaling=false, the node agent's
 * test profile: up to 1.34; from 1.35 the gate is locked on (decision 60).
 */
export function gateOffProfileRuns(version = kubeVersion()) {
  return Number(version.split('.')[1]) < 35;
}
