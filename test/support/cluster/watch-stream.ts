// One watch request read as it streams: each newline-delimited event handed to `onEvent` as it
// arrives. For tests that record what happened during a rollout (PodWatch, the fault tier's
// rollout recorder, a Node's annotations). Owns the request; the caller's signal ends it.
import type { KubeClient } from '../../../src/runtime/kube-client.js';

export type WatchStream = Awaited<ReturnType<KubeClient['request']>>;

/** Starts a watch of `path` with `query` (watch=true added); resolves once the stream is open. */
export async function streamWatch<T>(
  client: KubeClient,
  path: string,
  query: NonNullable<Parameters<KubeClient['list']>[1]>,
  signal: AbortSignal,
  onEvent: (event: { type: string; object: T }) => void,
): Promise<WatchStream> {
  const response = await client.request('GET', path, { query: { ...query, watch: true }, signal });
  let buffered = '';
  response.body.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let i: number;
    while ((i = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      onEvent(JSON.parse(line) as { type: string; object: T });
    }
  });
  response.body.on('error', () => undefined);
  return response;
}
