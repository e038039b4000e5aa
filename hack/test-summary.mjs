// Sums the Jest JSON results of every tier into the one plain line CI reads:
// "N passed, N failed". Exits non-zero when a tier failed or left no results.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? '.tailor/test-results';
let passed = 0;
let failed = 0;
let suitesFailed = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  const r = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  // A suite that fails to load (syntax error, failed beforeAll) has no failed tests but fails the run.
  suitesFailed += r.numRuntimeErrorTestSuites + (r.success ? 0 : 1);
  if (!r.success && r.numFailedTests === 0) {
    const why = r.snapshot?.failure ? `obsolete snapshot files: ${r.snapshot.filesRemovedList?.join(', ')}` : 'a suite failed to run';
    console.error(`${file}: Jest reported failure with no failed test (${why})`);
  }
}
if (suitesFailed > 0 && failed === 0) failed = suitesFailed;
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
