// The fault tier's global setup: the full test bed, and an empty list of recovery rows (each
// scenario appends one; test/support/fault/teardown.js prints them as the tier's one table).
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { clusterSetup } from '../cluster/cluster-setup.js';

const rows = resolve(import.meta.dirname, '../../../.tailor/test-results/fault-recovery.jsonl');
const setupFull = clusterSetup('full');

export default async function setup() {
  rmSync(rows, { force: true });
  await setupFull();
}
