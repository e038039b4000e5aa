// Jest's test order, with the bed's own smoke tests first: `test/*/testbed.test.ts` checks the
// cluster the tier runs on (nodes, runtimes, pod networking, storage) before any other file changes
// it. Jest's default order (largest or slowest file first) had put the e2e testbed after
// nodes-rollout, whose lost-node spec leaves cross-node pod traffic from tailor-node to
// tailor-node-2 unanswered (issue 47's note). And the RBAC audit last: it reads what every other
// file's requests left in the API server's audit log (test/e2e/rbac-audit.test.ts). Plain JS: Jest loads it outside the ts-jest transform.
import sequencerModule from '@jest/test-sequencer';

// A CommonJS module: its class is the default export's `default`.
const DefaultSequencer = sequencerModule.default ?? sequencerModule;

const BED = /[/\\]testbed\.test\.ts$/;
const AUDIT = /[/\\]rbac-audit\.test\.ts$/;

export default class BedFirstSequencer extends DefaultSequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    const middle = sorted.filter((t) => !BED.test(t.path) && !AUDIT.test(t.path));
    return [...sorted.filter((t) => BED.test(t.path)), ...middle, ...sorted.filter((t) => AUDIT.test(t.path))];
  }
}
