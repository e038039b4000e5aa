// A TCP proxy in front of the API server that a test can partition: `freeze()` makes every
// connection, open or new, a black hole (bytes are dropped, nothing is closed — what a hung
// server or a dead network path looks like to a client); `freeze('open')` does that only to the
// connections open now (a watch that silently stops delivering, while new requests still work);
// `thaw()` closes what was frozen and forwards again. Plus a kubeconfig that points at the proxy
// with the same credentials.
// Owns: its listening socket and the connections through it. Must not: touch the API server.
import type * as k8s from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface FaultProxy {
  readonly kubeConfig: k8s.KubeConfig;
  freeze(which?: 'all' | 'open'): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: k8s.KubeConfig): Promise<FaultProxy> {
  const upstream = new URL(target.getCurrentCluster()!.server);
  const sockets = new Set<Socket>();
  const frozenSockets = new WeakSet<Socket>();
  let frozen = false;
  const server: Server = createServer((client) => {
    const server_ = createConnection({ host: upstream.hostname, port: Number(upstream.port || 443) });
    for (const s of [client, server_]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    const blocked = (): boolean => frozen || frozenSockets.has(client);
    client.on('data', (chunk) => void (blocked() ? undefined : server_.write(chunk)));
    server_.on('data', (chunk) => void (blocked() ? undefined : client.write(chunk)));
    client.on('close', () => server_.destroy());
    server_.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fault proxy: no port');

  // Same credentials; the API server's certificate names 127.0.0.1 too.
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: target.clusters.map((c) => ({ ...c, server: `https://127.0.0.1:${address.port}` })),
    users: target.users,
    contexts: target.contexts,
    currentContext: target.currentContext,
  });
  return {
    kubeConfig,
    freeze: (which = 'all') => {
      if (which === 'all') frozen = true;
      else for (const s of sockets) frozenSockets.add(s);
    },
    thaw: () => {
      for (const s of sockets) s.destroy();
      frozen = false;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
