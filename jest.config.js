// Jest runs TypeScript as ESM through ts-jest. ts-jest does not type-check in this mode;
// `make test` runs `tsc --noEmit` first. One project per test tier; tiers that need the test-bed
// cluster bring it up in their global setup and stop it again if they started it.
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
  globalSetup: `<rootDir>/test/support/setup-${mode}.js`,
  globalTeardown: '<rootDir>/test/support/teardown.js',
});

export default {
  // Cluster tiers wait on real pods; a per-project testTimeout is ignored by Jest, so it is global.
  testTimeout: 180_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, ...onCluster('control-plane'), displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
    { ...common, ...onCluster('full'), displayName: 'cri', testMatch: ['<rootDir>/test/cri/**/*.test.ts'] },
    { ...common, ...onCluster('full'), displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
    // Faults injected mid-rollout (controller, API server, etcd, kubelet, containerd, agent); each
    // scenario asserts nothing lost, and the tier ends with one table of recovery times.
    {
      ...common,
      globalSetup: '<rootDir>/test/support/setup-fault.js',
      globalTeardown: '<rootDir>/test/support/fault-teardown.js',
      displayName: 'fault',
      testMatch: ['<rootDir>/test/fault/**/*.test.ts'],
    },
  ],
};
