// Sums what hack/test.sh recorded into the one plain line CI reads:
// "N passed, N failed" (", N skipped" appended when Jest skipped or left todo tests).
// Honest by construction: every step listed in `planned` must have run and, for a Jest tier,
// left its JSON results. A step that did not run (the run stopped after a failed build), a tier
// with no results (its cluster failed to start, Jest crashed) and a step that exited non-zero
// without a failing test (lint, typecheck, build, a failed global setup or teardown) each count as one
// failure, and a line on stderr says why. Exits non-zero when anything failed.
// Without a `planned` file (results from an older run) it sums the JSON files it finds.
// Before that line, one line per step (result and seconds) and one per Kubernetes release, so a
// matrix run (hack/test.sh: <tier>@<release> for a release other than the default) shows what
// each release passed and took.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? '.tailor/test-results';
const NOT_JEST = new Set(['lint', 'typecheck', 'build', 'kubernetes']);
const read = (file) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8') : undefined);

const plannedText = read('planned');
const planned = plannedText
  ? plannedText
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean)
  : readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.replace(/\.json$/, ''));

const gateOffOnly = new Set((read('gate-off-only') ?? '').split('\n').filter(Boolean));
const defaultRelease = read('default-release')?.trim();
const RELEASE_FREE = new Set(['lint', 'typecheck', 'unit', 'argocd', 'chart', 'build']);
const release = (step) =>
  step.includes('@')
    ? `Kubernetes v${step.slice(step.indexOf('@') + 1)}`
    : RELEASE_FREE.has(step)
      ? 'no cluster'
      : defaultRelease
        ? `Kubernetes v${defaultRelease}`
        : 'the default Kubernetes release';

let passed = 0;
let failed = 0;
let skipped = 0;
const why = [];
const lines = [];
const byRelease = new Map();
const count = (step, p, f, seconds) => {
  const r = byRelease.get(release(step)) ?? { passed: 0, failed: 0, seconds: 0 };
  byRelease.set(release(step), { passed: r.passed + p, failed: r.failed + f, seconds: r.seconds + seconds });
};
for (const step of planned) {
  const rcText = read(`${step}.rc`);
  const code = rcText === undefined ? undefined : Number(rcText.trim());
  const seconds = Number(read(`${step}.seconds`)?.trim() ?? 0);
  const tier = step.split('@')[0];
  const failedBefore = failed;
  const passedBefore = passed;
  const note = gateOffOnly.has(step) ? ' (gate-off scenarios only)' : '';
  const record = () => {
    count(step, passed - passedBefore, failed - failedBefore, seconds);
    const outcome =
      NOT_JEST.has(tier) && failed === failedBefore ? 'ok' : `${passed - passedBefore} passed, ${failed - failedBefore} failed`;
    lines.push(`  ${step.padEnd(24)} ${String(seconds).padStart(5)} s  ${code === undefined ? 'not run' : outcome}${note}`);
  };
  if (plannedText && code === undefined) {
    failed += 1;
    why.push(`${step}: did not run (an earlier step stopped the run, or its Kubernetes release did not build)`);
    record();
    continue;
  }
  if (NOT_JEST.has(tier)) {
    if (code !== 0) {
      failed += 1;
      why.push(`${step}: failed (exit ${code})`);
    }
    record();
    continue;
  }
  const json = read(`${step}.json`);
  if (json === undefined) {
    failed += 1;
    why.push(`${step}: no results (exit ${code ?? '?'}): its cluster failed to start or Jest crashed before running tests`);
    record();
    continue;
  }
  const r = JSON.parse(json);
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  // A suite that fails to load (syntax error, failed beforeAll) has no failed test but fails the run.
  const brokenSuites = r.numRuntimeErrorTestSuites ?? 0;
  const jestFailed = !r.success || (code !== undefined && code !== 0);
  if (r.numFailedTests === 0 && (brokenSuites > 0 || jestFailed)) {
    failed += Math.max(brokenSuites, 1);
    const cause = r.snapshot?.failure
      ? `obsolete snapshot files: ${r.snapshot.filesRemovedList?.join(', ')}`
      : brokenSuites > 0
        ? `${brokenSuites} suite(s) failed to run`
        : r.numTotalTests === 0
          ? 'no tests found'
          : `Jest exited ${code} (global setup or teardown failed?)`;
    why.push(`${step}: Jest reported failure with no failed test (${cause})`);
  }
  record();
}
if (lines.length > 0) {
  console.log(`steps (seconds):\n${lines.join('\n')}`);
  for (const [name, r] of byRelease) {
    const minutes = (r.seconds / 60).toFixed(1);
    console.log(`${name}: ${r.passed} passed, ${r.failed} failed in ${minutes} min`);
  }
}
for (const line of why) console.error(line);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
