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
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    // charts/tailor offline: helm and kubeconform built from their Go modules by the global setup
    // (hack/build-chart-tools.sh), no cluster (decision 24).
    { ...common, globalSetup: '<rootDir>/test/support/chart/setup.js', displayName: 'chart', testMatch: ['<rootDir>/test/chart/**/*.test.ts'] },
    { ...common, ...onCluster('control-plane'), displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
    { ...common, ...onCluster('full'), displayName: 'cri', ...clusterTier('cri') },
    { ...common, ...onCluster('full'), displayName: 'e2e', ...clusterTier('e2e') },
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
