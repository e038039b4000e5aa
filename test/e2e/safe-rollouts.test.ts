// One disruption budget on a real kubelet: a cpu typo (64 instead of 64m) that no node can fit
// makes every pod's resize Infeasible, and the default onInfeasible Recreate replaces them one at
// a time within maxUnavailable — the replacement cannot be scheduled, so the rest stay serving and
// ResizeBlocked says why. Reverting the template heals the CloneSet in place.
import { describe, expect, it } from '@jest/globals';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  trueCondition as condition,
  patchTemplateAndWait,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import { PodWatch } from '../support/cluster/pod-watch.js';
import { RESIZE_WITHOUT_RESTART, sizedContainer } from '../support/cluster/testbed.js';

const { client, ns } = controllerTestBed('safe-rollouts');

const notRequired = { resizePolicy: RESIZE_WITHOUT_RESTART };
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

describe('an Infeasible resize on 4 pods with maxUnavailable 1', () => {
  it('never has more than 1 pod out of service, says ResizeBlocked, and heals in place when reverted', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'typo',
        { replicas: 4, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          containers: [sizedContainer('50m', '32Mi', notRequired)],
        },
      ),
    );
    await waitForReady(client, ns, 'typo', 4, 120_000);
    const original = new Set((await activePods(client, ns, 'typo')).map((p) => p.metadata?.uid));
    const watch = await PodWatch.start(client, ns, 'app=typo', 4);
    try {
      // The typo: 64 CPUs instead of 64m.
      const blocked = await patchTemplateAndWait(client, ns, 'typo', {
        template: { spec: { containers: [sizedContainer('64', '32Mi', notRequired)] } },
        what: 'ResizeBlocked naming pods that wait for maxUnavailable',
        until: (cs) => /recreate waits for maxUnavailable 1/.test(condition(cs, 'ResizeBlocked')?.message ?? ''),
        timeoutMs: 120_000,
      });
      expect(condition(blocked, 'ResizeBlocked')?.reason).toBe('Infeasible');
      // Give a runaway controller time to show itself.
      await sleep(10_000);
      const during = await activePods(client, ns, 'typo');
      expect(during.filter((p) => original.has(p.metadata?.uid)).length).toBe(3);
      watch.expectUnavailableAtMost(1);
      process.stdout.write(
        `[safe-rollouts] worst moment while Infeasible: ${watch.maxUnavailable} of 4 pods out of service\n`,
      );

      // The fix: back to 50m. The three original pods resize back in place; the replacement that
      // never ran is replaced at no cost.
      const healed = await patchTemplateAndWait(client, ns, 'typo', {
        template: { spec: { containers: [sizedContainer('50m', '32Mi', notRequired)] } },
        what: '4 ready pods on the reverted template, nothing blocked',
        until: (cs, pods) =>
          pods.length === 4 &&
          cs.status?.updatedReadyReplicas === 4 &&
          (cs.status?.resize?.resizing ?? 1) === 0 &&
          (cs.status?.resize?.infeasible ?? 1) === 0 &&
          !condition(cs, 'ResizeBlocked'),
        timeoutMs: 180_000,
      });
      expect(healed.status?.readyReplicas).toBe(4);
      const after = await activePods(client, ns, 'typo');
      expect(after.filter((p) => original.has(p.metadata?.uid)).length).toBe(3);
      watch.expectUnavailableAtMost(1);
      process.stdout.write(
        `[safe-rollouts] worst moment overall (typo, then revert): ${watch.maxUnavailable} of 4 pods out of service\n`,
      );
    } finally {
      watch.stop();
    }
  });
});
