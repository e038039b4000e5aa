// Merges Jest --json result files into one, as if one run had produced them (hack/test.sh's e2e
// tier in two passes, decision 62): the counts are summed, the test results listed together, and
// a missing file (a pass that crashed before writing) counts as one broken suite.
//   node hack/merge-jest-results.mjs <out.json> <in.json>...
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const [out, ...inputs] = process.argv.slice(2);
if (!out || inputs.length === 0) {
  console.error('usage: merge-jest-results.mjs <out.json> <in.json>...');
  process.exit(2);
}
const COUNTS = [
  'numFailedTestSuites',
  'numFailedTests',
  'numPassedTestSuites',
  'numPassedTests',
  'numPendingTestSuites',
  'numPendingTests',
  'numRuntimeErrorTestSuites',
  'numTodoTests',
  'numTotalTestSuites',
  'numTotalTests',
];
const merged = Object.fromEntries(COUNTS.map((k) => [k, 0]));
merged.success = true;
merged.testResults = [];
merged.startTime = Infinity;
for (const file of inputs) {
  if (!existsSync(file)) {
    merged.numRuntimeErrorTestSuites += 1;
    merged.success = false;
    continue;
  }
  const r = JSON.parse(readFileSync(file, 'utf8'));
  for (const k of COUNTS) merged[k] += r[k] ?? 0;
  merged.success &&= r.success === true;
  merged.testResults.push(...(r.testResults ?? []));
  merged.startTime = Math.min(merged.startTime, r.startTime ?? Infinity);
}
if (merged.startTime === Infinity) delete merged.startTime;
writeFileSync(out, JSON.stringify(merged));
