// Jest runs TypeScript as ESM through ts-jest. ts-jest does not type-check in this mode;
// `make test` runs `tsc --noEmit` first. One project per test tier; tiers that need the test-bed
// cluster bring it up in their global setup and stop it again if they started it.
import { gateOffProfileRuns, kubeVersion, kubeVersions } from './test/support/cluster/kube-version.js';

// Tests that switch the test bed to InPlacePodVerticalScaling=false (the node agent's profile).
// Only a kubelet up to 1.34 has that gate unlocked, so they are selected by the targeted version
// (KUBE_VERSION, else hack/versions.sh's default), never skipped in code: on 1.35+ they are not
// part of the run. TAILOR_GATE_OFF_ONLY=1 selects only them, for hack/test.sh's pass of the fault
// tier on such a version (decision 60).
const gateOffTests = ['test/e2e/agent.test.ts', 'test/fault/agent-faults.test.ts'];
const gateOffOnly = process.env.TAILOR_GATE_OFF_ONLY === '1';
const asPattern = (path) => `/${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

// On the matrix's other releases the e2e tier runs only what differs between kubelets: the bed
// itself, resizes (1.34 reports Infeasible on the pod, 1.37 refuses at admission), the agent's
// gate-off path, in-place image updates, sidecars and pod-level resources. The rest (the
// controller's and the readers' logic, Kruise's cases, the chart, the CLI, the node-level specs,
// which need three nodes) runs on the default release, so CI's 90 minutes hold cold (decisions
// 60 and 61). The cri tier runs on the default release only (decision 62).
const everyReleaseE2e = [
  'test/e2e/testbed.test.ts',
  'test/e2e/agent.test.ts',
  'test/e2e/resize.test.ts',
  'test/e2e/inplace.test.ts',
  'test/e2e/sidecars-and-pod-level.test.ts',
];
const otherRelease = kubeVersion() !== kubeVersions()[0];

// The e2e files that must run alone: they share something node-level with every other file (the
// first node's capacity their Deferred/Infeasible verdicts read, the nodes' images, the kubelets'
// feature gates, the pods of every node, a cluster-wide install, the one node agent whose hooks and
// restart slots they count: other files run agents of their own on the same node) or assert a lag of about a second
// that a busy machine would stretch, or read what every other file left (the RBAC audit). hack/test.sh runs the e2e tier in two passes when
// E2E_WORKERS > 1: the other files side by side (TAILOR_E2E_GROUP=shared), then these one at a
// time (TAILOR_E2E_GROUP=alone). Decision 62.
const aloneE2e = [
  'test/e2e/agent.test.ts',
  'test/e2e/bounded-history.test.ts',
  'test/e2e/dev.test.ts',
  'test/e2e/helm.test.ts',
  'test/e2e/nodes-agent.test.ts',
  'test/e2e/nodes-rollout.test.ts',
  'test/e2e/prepull.test.ts',
  'test/e2e/rbac-audit.test.ts',
  'test/e2e/readiness-conditions.test.ts',
  'test/e2e/resize.test.ts',
  'test/e2e/restart.test.ts',
  'test/e2e/status-truth.test.ts',
  'test/e2e/testbed.test.ts',
];
const e2eGroup = process.env.TAILOR_E2E_GROUP;

/** The e2e tier's files for TAILOR_E2E_GROUP: all of them, the shared ones, or those run alone. */
function e2eGroupOf(tier) {
  if (e2eGroup === 'alone') {
    const alone = aloneE2e.map((t) => `<rootDir>/${t}`).filter((t) => tier.testMatch.some((m) => m === t || m.endsWith('**/*.test.ts')));
    // An empty testMatch would mean Jest's default (every test file), not none.
    return { ...tier, testMatch: alone.length > 0 ? alone : ['<rootDir>/test/e2e/no-alone-tests'] };
  }
  if (e2eGroup === 'shared') {
    return { ...tier, testPathIgnorePatterns: [...(tier.testPathIgnorePatterns ?? []), ...aloneE2e.map(asPattern)] };
  }
  return tier;
}

/** Which files of test/<dir> a cluster tier runs on the targeted version. */
function clusterTier(dir) {
  const all = otherRelease && dir === 'e2e' ? everyReleaseE2e.map((t) => `<rootDir>/${t}`) : [`<rootDir>/test/${dir}/**/*.test.ts`];
  const ignored = ['/node_modules/'];
  if (!gateOffProfileRuns()) return { testMatch: all, testPathIgnorePatterns: [...ignored, ...gateOffTests.map(asPattern)] };
  if (gateOffOnly) {
    const own = gateOffTests.filter((t) => t.startsWith(`test/${dir}/`)).map((t) => `<rootDir>/${t}`);
    // An empty testMatch would mean Jest's default (every test file), not none.
    return { testMatch: own.length > 0 ? own : [`<rootDir>/test/${dir}/no-gate-off-tests`] };
  }
  return { testMatch: all, testPathIgnorePatterns: ignored };
}

const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
  testEnvironment: 'node',
  // Only the code: etcd's *.snap files under .tailor/ would otherwise count as obsolete snapshots.
  roots: ['<rootDir>/src', '<rootDir>/test'],
  modulePathIgnorePatterns: ['<rootDir>/.tailor/', '<rootDir>/dist/'],
};
const onCluster = (mode) => ({
  globalSetup: `<rootDir>/test/support/cluster/setup-${mode}.js`,
  globalTeardown: '<rootDir>/test/support/cluster/teardown.js',
});

export default {
  // Cluster tiers wait on real pods; a per-project testTimeout is ignored by Jest, so it is global.
  testTimeout: 180_000,
  // Each tier's testbed.test.ts first: it checks the bed before other files change it.
  testSequencer: '<rootDir>/test/support/cluster/bed-first-sequencer.js',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    // charts/tailor offline: helm and kubeconform built from their Go modules by the global setup
    // (hack/build-chart-tools.sh), no cluster (decision 24).
    { ...common, globalSetup: '<rootDir>/test/support/chart/setup.js', displayName: 'chart', testMatch: ['<rootDir>/test/chart/**/*.test.ts'] },
    { ...common, ...onCluster('control-plane'), displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
    { ...common, ...onCluster('full'), displayName: 'cri', ...clusterTier('cri') },
    { ...common, ...onCluster('full'), displayName: 'e2e', ...e2eGroupOf(clusterTier('e2e')) },
    // Faults injected mid-rollout (controller, API server, etcd, kubelet, containerd, agent); each
    // scenario asserts nothing lost, and the tier ends with one table of recovery times.
    {
      ...common,
      globalSetup: '<rootDir>/test/support/fault/setup.js',
      globalTeardown: '<rootDir>/test/support/fault/teardown.js',
      displayName: 'fault',
      ...clusterTier('fault'),
    },
  ],
};
