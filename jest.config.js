// Jest runs TypeScript as ESM through ts-jest. ts-jest does not type-check in this mode;
// `npm run typecheck` (tsc --noEmit) does, and `make test` runs it first.
const transform = { '^.+\\.ts$': ['ts-jest', { useESM: true }] };
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform,
  testEnvironment: 'node',
};

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
    { ...common, displayName: 'cri', testMatch: ['<rootDir>/test/cri/**/*.test.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
  ],
};
