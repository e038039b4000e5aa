// Lint guardrails (issue 15): typescript-eslint's type-checked rules, with the ones a controller
// cannot do without made errors — no floating or misused promises, explicit return types (on
// every function in src/, on what a module exports elsewhere), strict equality — and limits on
// a function's shape for new code as Pepr sets them (issue 36: complexity 10, nesting depth 3,
// 4 parameters; issue 41: 20 statements, in src/). What broke them before is listed in eslint-suppressions.json, a ratchet that
// only goes down (docs/decisions/0025-guard-rails-ratchet-and-transitive-purity.md). Formatting
// is Prettier's (eslint-config-prettier turns off the rules that would fight it). Layering and
// purity are checked by dependency-cruiser (.dependency-cruiser.cjs), not here.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { builtinRules } from 'eslint/use-at-your-own-risk';
import tseslint from 'typescript-eslint';

// ESLint's bulk suppressions count a rule's violations per file, so a suppressed function that
// grew would stay suppressed. These two report a function once per point over the limit
// instead (a complexity of 13 against 10 is three violations, six parameters against four two):
// the count in eslint-suppressions.json is then the file's total excess, which a function that
// grows raises (lint fails) and one that shrinks lowers (lint fails until the count is pruned).
// max-depth needs no wrapper: ESLint reports every block nested past the limit, so nesting
// deeper already adds a violation.
const perPointOver = (name, measure) => {
  const base = builtinRules.get(name);
  return {
    meta: { ...base.meta, messages: { ...base.meta.messages, again: '{{name}}: point {{point}} of {{over}} over the limit of {{max}}.' } },
    create(context) {
      const report = (descriptor) => {
        const over = Number(descriptor.data[measure]) - Number(descriptor.data.max);
        context.report(descriptor);
        for (let point = 2; point <= over; point++)
          context.report({ ...descriptor, messageId: 'again', data: { ...descriptor.data, point, over } });
      };
      return base.create(Object.create(context, { report: { value: report } }));
    },
  };
};
const ratchet = {
  rules: {
    complexity: perPointOver('complexity', 'complexity'),
    'max-params': perPointOver('max-params', 'count'),
    'max-statements': perPointOver('max-statements', 'count'),
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tailor/**', 'coverage/**', 'hack/images/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    plugins: { ratchet },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/use-unknown-in-catch-callback-variable': 'error',
      'ratchet/complexity': ['error', { max: 10 }],
      'max-depth': ['error', 3],
      'ratchet/max-params': ['error', { max: 4 }],
      eqeqeq: ['error', 'always'],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Every named function in src/ says what it returns; callbacks passed inline and functions
    // assigned to a typed slot take their type from the context.
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/explicit-function-return-type': ['error', { allowExpressions: true, allowTypedFunctionExpressions: true }],
      // A function past 20 statements does several things: split it along its own comments.
      // Not in tests, where a describe block's statements are its cases.
      'ratchet/max-statements': ['error', { max: 20 }],
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
      'ratchet/complexity': 'off',
      'max-depth': 'off',
    },
  },
  prettier,
);
