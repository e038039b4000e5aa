// Sums what hack/test.sh recorded into the one plain line CI reads:
// "N passed, N failed" (", N skipped" appended when Jest skipped or left todo tests).
// Honest by construction: every step listed in `planned` must have run and, for a Jest tier,
// left its JSON results. A step that did not run (the run stopped after a failed build), a tier
// with no results (its cluster failed to start, Jest crashed) and a step that exited non-zero
// without a failing test (lint, typecheck, build, a failed global setup or teardown) each count as one
// failure, and a line on stderr says why. Exits non-zero when anything failed.
// Without a `planned` file (results from an older run) it sums the JSON files it finds.
// Before that line, one line per step (result, seconds and the step's share of the time budget)
// and one per Kubernetes release, so a matrix run (hack/test.sh: <tier>@<release> for a release
// other than the default) shows what each release passed and took; then the run's time against the
// budget (decision 62), with a warning line when it is over. Over budget never fails the run. Last
// before the count, the failed tests with the first lines of their messages.
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

// The time budget of `make test` on CI's 2-core machine (issue 40; decision 62): 40 minutes warm,
// 60 cold. A run is cold when a `kubernetes` step took COLD_AFTER_SECONDS or more: a cached one
// ends within a second or two, so such a run spent real time building (assumed: CI caches
// ~/.cache/tailor as one unit, so containerd, the provisioner, helm and the rest were built too).
const BUDGET_MINUTES = { warm: 40, cold: 60 };
const COLD_AFTER_SECONDS = 30;
// Each step's share of the budget in minutes, [warm, added when cold]: the default release's
// tiers, then those of each other release (<tier>@<release>). With the two releases of
// hack/versions.sh they add up to the budget; a step not listed has no share. Fitted to the run
// from every cache empty (decision 62's third amendment): the e2e and fault tiers hold most of it.
const SHARES = {
  lint: [0.75, 0],
  typecheck: [0.25, 0],
  unit: [0.75, 0],
  argocd: [0.25, 0.25], // cold: Argo CD's module and the harness's build
  chart: [0.5, 3.75], // cold: helm and kubeconform (hack/build-chart-tools.sh)
  build: [0.25, 0],
  kubernetes: [0.25, 10.25], // cold: the default release's control plane, etcd, kubelet and kubectl
  integration: [5, 0],
  cri: [1, 2.75], // cold: containerd, the volume provisioner and the test images (first full bed)
  e2e: [21.25, 0],
  fault: [5.5, 0],
};
const OTHER_RELEASE_SHARES = {
  kubernetes: [0.25, 3], // cold: the older release's kubelet
  e2e: [2.75, 0],
  fault: [1.25, 0],
};
const secondsOf = (step) => Number(read(`${step}.seconds`)?.trim() ?? 0);
const cold = planned.some((s) => s.split('@')[0] === 'kubernetes' && secondsOf(s) >= COLD_AFTER_SECONDS);
const shareOf = (step) => {
  const entry = (step.includes('@') ? OTHER_RELEASE_SHARES : SHARES)[step.split('@')[0]];
  return entry === undefined ? undefined : Math.round((entry[0] + (cold ? entry[1] : 0)) * 60);
};
const overShare = [];
const release = (step) =>
  step.includes('@')
    ? `Kubernetes v${step.slice(step.indexOf('@') + 1)}`
    : RELEASE_FREE.has(step)
      ? 'no cluster'
      : defaultRelease
        ? `Kubernetes v${defaultRelease}`
        : 'the default Kubernetes release';

// The failed tests themselves, printed last before the count: CI keeps only the output's tail, and
// a failure it cannot name cannot be mended.
const MAX_FAILURES_SHOWN = 8;
const FAILURE_LINES_SHOWN = 6;
const failures = [];
const ANSI = new RegExp(String.fromCharCode(27) + '\\[[0-9;]*m', 'g');
const collectFailures = (step, results) => {
  for (const file of results.testResults ?? []) {
    const path = file.name?.slice(file.name.indexOf('/test/') + 1) ?? '?';
    for (const test of file.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      const message = (test.failureMessages?.[0] ?? '')
        .replace(ANSI, '')
        .split('\n')
        .map((l) => l.trimEnd())
        .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('at '))
        .slice(0, FAILURE_LINES_SHOWN);
      failures.push([`${step}: ${path} › ${test.fullName}`, ...message.map((l) => `    ${l.trim()}`)].join('\n'));
    }
    // A file that failed outside its tests (a suite that did not load, a failing afterAll).
    const testFailed = (file.assertionResults ?? []).some((test) => test.status === 'failed');
    if (!testFailed && file.status === 'failed' && file.message)
      failures.push(`${step}: ${path} failed to run\n    ${file.message.replace(ANSI, '').trim().split('\n')[0]}`);
  }
};

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
  const seconds = secondsOf(step);
  const share = shareOf(step);
  const tier = step.split('@')[0];
  const failedBefore = failed;
  const passedBefore = passed;
  const note = gateOffOnly.has(step) ? ' (gate-off scenarios only)' : '';
  const record = () => {
    count(step, passed - passedBefore, failed - failedBefore, seconds);
    const outcome =
      NOT_JEST.has(tier) && failed === failedBefore
        ? 'ok'
        : `${passed - passedBefore} passed, ${failed - failedBefore} failed`;
    const over = share !== undefined && seconds > share;
    if (over) overShare.push(`${step} (+${seconds - share} s)`);
    const budget = share === undefined ? ' '.repeat(13) : `/ ${String(share).padStart(5)} s ${over ? 'OVER' : '    '}`;
    lines.push(
      `  ${step.padEnd(24)} ${String(seconds).padStart(5)} s ${budget}  ${code === undefined ? 'not run' : outcome}${note}`,
    );
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
    why.push(
      `${step}: no results (exit ${code ?? '?'}): its cluster failed to start or Jest crashed before running tests`,
    );
    record();
    continue;
  }
  const r = JSON.parse(json);
  collectFailures(step, r);
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
  const kind = cold ? 'cold' : 'warm';
  console.log(`steps (seconds / share of the ${BUDGET_MINUTES[kind]} min ${kind} budget):\n${lines.join('\n')}`);
  for (const [name, r] of byRelease) {
    const minutes = (r.seconds / 60).toFixed(1);
    console.log(`${name}: ${r.passed} passed, ${r.failed} failed in ${minutes} min`);
  }
  // hack/test.sh runs the steps one after another: their sum is its wall time (make test's npm ci
  // before it is not counted).
  const total = planned.reduce((sum, step) => sum + secondsOf(step), 0);
  const cause = cold
    ? `cold: ${planned.filter((s) => s.split('@')[0] === 'kubernetes' && secondsOf(s) >= COLD_AFTER_SECONDS).join(', ')} built`
    : 'warm: no kubernetes step built';
  console.log(`time: ${(total / 60).toFixed(1)} min of the ${BUDGET_MINUTES[kind]} min ${kind} budget (${cause})`);
  const shares = overShare.length > 0 ? `; over their share: ${overShare.join(', ')}` : '';
  const overBy = total - BUDGET_MINUTES[kind] * 60;
  if (overBy > 0) {
    console.log(`warning: over the ${kind} time budget by ${(overBy / 60).toFixed(1)} min${shares}`);
  } else if (overShare.length > 0) {
    console.log(`warning: within the ${kind} time budget${shares}`);
  }
}
for (const line of why) console.error(line);
if (failures.length > 0) {
  const more = failures.length > MAX_FAILURES_SHOWN ? ` (the first ${MAX_FAILURES_SHOWN} of ${failures.length})` : '';
  console.log(`failed tests${more}:\n${failures.slice(0, MAX_FAILURES_SHOWN).join('\n')}`);
}
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
