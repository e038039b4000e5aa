import { describe, expect, it } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { EventRecorder } from '../../../src/runtime/events.js';
import type { BatchTiming } from '../../../src/runtime/pure/event-batch.js';
import { KubeApiError } from '../../../src/runtime/pure/api-error.js';
import { KubeClient } from '../../../src/runtime/kube-client.js';
import { silentLogger } from '../../../src/runtime/logger.js';

/** A client whose writes all fail, as in a namespace being deleted. */
class RefusingClient extends KubeClient {
  calls = 0;
  override json<T>(method: string, path: string): Promise<T> {
    this.calls++;
    return Promise.reject(
      new KubeApiError(method, path, 403, { reason: 'Forbidden', message: 'namespace is being terminated' }),
    );
  }
}

/** A kubeconfig for a server nobody listens on: the fake clients never dial it. */
function unusedKubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const refusingClient = (): RefusingClient => new RefusingClient(unusedKubeConfig());

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u1' } };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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

/** A client that records what it is asked to create. */
class RecordingClient extends KubeClient {
  readonly messages: string[] = [];
  override json<T>(_method: string, _path: string, options?: { body?: unknown }): Promise<T> {
    const body = options?.body as { message?: string } | undefined;
    if (body?.message) this.messages.push(body.message);
    return Promise.resolve({} as T);
  }
}

const cs = {
  apiVersion: 'apps.tailor.dev/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: 'ns', uid: 'cs' },
};

function batching(batchTiming: BatchTiming): { client: RecordingClient; recorder: EventRecorder } {
  const client = new RecordingClient(unusedKubeConfig());
  return { client, recorder: new EventRecorder({ client, component: 'test', logger: silentLogger(), batchTiming }) };
}

describe('EventRecorder.batch', () => {
  it('writes the first pod at once and the rest of the batch as one summary', async () => {
    const { client, recorder } = batching({ quietMs: 60_000, maxMs: 60_000 });
    for (const name of ['a', 'b', 'c', 'b', 'a', 'd'])
      recorder.batch(cs, 'Normal', 'InPlaceUpdateCompleted', 'updated in place to revision r2', name);
    await recorder.flush();
    expect(client.messages).toEqual([
      'updated in place to revision r2: a',
      'updated in place to revision r2: 3 pods: b, c, d',
    ]);
    recorder.batch(cs, 'Normal', 'InPlaceUpdateCompleted', 'updated in place to revision r2', 'e');
    await recorder.flush();
    expect(client.messages.at(-1)).toBe('updated in place to revision r2: e');
  });

  it('holds the summary while pods keep joining, and writes it once the news goes quiet', async () => {
    const { client, recorder } = batching({ quietMs: 150, maxMs: 60_000 });
    // One pod every 50 ms for 400 ms: longer than the quiet time in all, never quiet that long.
    for (let i = 0; i < 8; i++) {
      recorder.batch(cs, 'Normal', 'InPlaceUpdateCompleted', 'updated', `p${i}`);
      await sleep(50);
    }
    expect(client.messages).toEqual(['updated: p0']);
    await sleep(400);
    expect(client.messages).toEqual(['updated: p0', 'updated: 7 pods: p1, p2, p3, p4, p5, p6, p7']);
    await recorder.flush();
  });

  it("writes a busy batch's summary once it has been open the longest time allowed", async () => {
    const { client, recorder } = batching({ quietMs: 60_000, maxMs: 200 });
    recorder.batch(cs, 'Normal', 'InPlaceUpdateCompleted', 'updated', 'a');
    recorder.batch(cs, 'Normal', 'InPlaceUpdateCompleted', 'updated', 'b');
    await sleep(600);
    expect(client.messages).toEqual(['updated: a', 'updated: 1 pod: b']);
    await recorder.flush();
  });
});

/** A client whose writes each take a few milliseconds, counting how many are in flight at once. */
class SlowClient extends KubeClient {
  inFlight = 0;
  maxInFlight = 0;
  written = 0;
  override async json<T>(): Promise<T> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.inFlight--;
    this.written++;
    return {} as T;
  }
}

const podNamed = (i: number): typeof pod => ({ ...pod, metadata: { name: `p${i}`, namespace: 'ns', uid: `u${i}` } });

describe('EventRecorder write concurrency', () => {
  it('writes a burst of events a few at a time, and every one in the end', async () => {
    const client = new SlowClient(unusedKubeConfig());
    const recorder = new EventRecorder({ client, component: 'test', logger: silentLogger(), maxConcurrentWrites: 3 });
    for (let i = 0; i < 40; i++) recorder.event(podNamed(i), 'Normal', 'Reason', 'message');
    await recorder.flush();
    expect(client.written).toBe(40);
    expect(client.maxInFlight).toBe(3);
  });

  it('drops and counts events beyond its backlog instead of queueing them without end', async () => {
    const client = new SlowClient(unusedKubeConfig());
    const recorder = new EventRecorder({
      client,
      component: 'test',
      logger: silentLogger(),
      maxConcurrentWrites: 2,
      maxQueuedWrites: 5,
    });
    for (let i = 0; i < 20; i++) recorder.event(podNamed(i), 'Normal', 'Reason', 'message');
    await recorder.flush();
    expect(client.written).toBe(7);
    expect(recorder.droppedEvents).toBe(13);
  });
});
