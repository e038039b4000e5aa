// The fault tier's global teardown: prints the one table of recovery times from the rows its
// scenarios appended (test/support/fault/rollout.ts recordRecovery), writes it next to them as
// fault-recovery.txt, then stops the cluster if this run started it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { clusterTeardown } from '../cluster/cluster-setup.js';

const results = resolve(import.meta.dirname, '../../../.tailor/test-results');

function recoveryTable(rows) {
  const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
  const header = ['scenario', 'recovery', 'measured from fault to', 'whole rollout'];
  const body = rows
    .sort((a, b) => a.scenario.localeCompare(b.scenario))
    .map((r) => [r.scenario, seconds(r.recoveryMs), r.measured, seconds(r.rolloutMs)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

export default async function teardown() {
  const file = resolve(results, 'fault-recovery.jsonl');
  const rows = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
  const table = recoveryTable(rows);
  process.stdout.write(`\nfault tier: recovery times (${rows.length} scenarios)\n${table}\n`);
  writeFileSync(resolve(results, 'fault-recovery.txt'), `${table}\n`);
  await clusterTeardown();
}
