import { describe, expect, it } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { EventRecorder } from '../../../src/runtime/events.js';
import { KubeApiError, KubeClient } from '../../../src/runtime/kube-client.js';
import { silentLogger } from '../../../src/runtime/logger.js';

/** A client whose writes all fail, as in a namespace being deleted. */
class RefusingClient extends KubeClient {
  calls = 0;
  override async json<T>(method: string, path: string): Promise<T> {
    this.calls++;
    throw new KubeApiError(method, path, 403, { reason: 'Forbidden', message: 'namespace is being terminated' });
  }
}

function refusingClient(): RefusingClient {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  return new RefusingClient(kc);
}

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u1' } };

describe('EventRecorder', () => {
  it('survives event writes the API server refuses, without an unhandled rejection', async () => {
    const client = refusingClient();
    const recorder = new EventRecorder({ client, component: 'test', logger: silentLogger() });
    for (let i = 0; i < 5; i++) recorder.event(pod, 'Normal', 'Reason', `message ${i}`);
    await recorder.flush();
    expect(client.calls).toBe(5);
  });

  it('drops a flood of events for one object beyond the burst', async () => {
    const client = refusingClient();
    const recorder = new EventRecorder({ client, component: 'test', logger: silentLogger(), burst: 3, now: () => 0 });
    for (let i = 0; i < 10; i++) recorder.event(pod, 'Normal', 'Reason', `message ${i}`);
    await recorder.flush();
    expect(client.calls).toBe(3);
    expect(recorder.droppedEvents).toBe(7);
  });
});
