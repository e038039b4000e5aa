// Lint guardrails (issue 15): typescript-eslint's type-checked rules, with the ones a controller
// cannot do without made errors — no floating or misused promises, explicit return types on
// what a module exports, a complexity cap, strict equality. Formatting is Prettier's
// (eslint-config-prettier turns off the rules that would fight it). Layering is checked by
// dependency-cruiser (.dependency-cruiser.cjs), not here.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tailor/**', 'coverage/**', 'hack/images/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/use-unknown-in-catch-callback-variable': 'error',
      complexity: ['error', { max: 30 }],
      'max-depth': ['error', 5],
      'max-params': ['error', { max: 7 }],
      eqeqeq: ['error', 'always'],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests and benchmarks drive real clusters with loosely typed JSON: keep the promise and
    // equality rules, relax the ones about `any` coming back from JSON.parse and mocks.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/explicit-module-boundary-types': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // Fakes implement async interfaces without awaiting anything.
      '@typescript-eslint/require-await': 'off',
      complexity: 'off',
      'max-depth': 'off',
    },
  },
  prettier,
);
