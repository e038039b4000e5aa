// Sums what hack/test.sh recorded into the one plain line CI reads:
// "N passed, N failed" (", N skipped" appended when Jest skipped or left todo tests).
// Honest by construction: every step listed in `planned` must have run and, for a Jest tier,
// left its JSON results. A step that did not run (the run stopped after a failed build), a tier
// with no results (its cluster failed to start, Jest crashed) and a step that exited non-zero
// without a failing test (lint, typecheck, build, a failed global setup or teardown) each count as one
// failure, and a line on stderr says why. Exits non-zero when anything failed.
// Without a `planned` file (results from an older run) it sums the JSON files it finds.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? '.tailor/test-results';
const NOT_JEST = new Set(['lint', 'typecheck', 'build']);
const read = (file) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8') : undefined);

const plannedText = read('planned');
const planned = plannedText
  ? plannedText.split('\n').map((s) => s.trim()).filter(Boolean)
  : readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));

let passed = 0;
let failed = 0;
let skipped = 0;
const why = [];
for (const step of planned) {
  const rcText = read(`${step}.rc`);
  const code = rcText === undefined ? undefined : Number(rcText.trim());
  if (plannedText && code === undefined) {
    failed += 1;
    why.push(`${step}: did not run (an earlier step stopped the run)`);
    continue;
  }
  if (NOT_JEST.has(step)) {
    if (code !== 0) {
      failed += 1;
      why.push(`${step}: failed (exit ${code})`);
    }
    continue;
  }
  const json = read(`${step}.json`);
  if (json === undefined) {
    failed += 1;
    why.push(`${step}: no results (exit ${code ?? '?'}): its cluster failed to start or Jest crashed before running tests`);
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
}
for (const line of why) console.error(line);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
