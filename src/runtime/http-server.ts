// The process's HTTP endpoints: /metrics (Prometheus text) and /healthz, /readyz (named checks,
// each failing check listed in the body like controller-runtime's healthz). One server per
// address; controller and agent bind metrics and probes separately. Must not: compute health
// itself; callers register checks.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export type Check = () => boolean | string;

export interface EndpointOptions {
  address: string; // host:port; port 0 picks a free one
  registry?: Registry;
  healthz?: Record<string, Check>;
  readyz?: Record<string, Check>;
}

export class HttpEndpoints {
  private server: http.Server | undefined;

  constructor(private readonly options: EndpointOptions) {}

  async start(): Promise<AddressInfo> {
    const [host, port] = splitAddress(this.options.address);
    const server = http.createServer((req, res) => {
      this.handle(req.url ?? '/').then(
        ({ status, body, type }) => {
          res.writeHead(status, { 'Content-Type': type });
          res.end(body);
        },
        (err: unknown) => {
          res.writeHead(500, { 'Content-Type': 'text/plain' });
          res.end(String(err));
        },
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return server.address() as AddressInfo;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(url: string): Promise<{ status: number; body: string; type: string }> {
    const path = url.split('?')[0] ?? '/';
    if (path === '/metrics' && this.options.registry) {
      return { status: 200, body: await this.options.registry.metrics(), type: this.options.registry.contentType };
    }
    const checks = path === '/healthz' ? this.options.healthz : path === '/readyz' ? this.options.readyz : undefined;
    if (!checks) return { status: 404, body: 'not found\n', type: 'text/plain' };
    const lines: string[] = [];
    let ok = true;
    for (const [name, check] of Object.entries(checks)) {
      const result = safeCheck(check);
      if (result === true) lines.push(`[+]${name} ok`);
      else {
        ok = false;
        lines.push(`[-]${name} failed: ${result === false ? 'not ready' : result}`);
      }
    }
    lines.push(ok ? `${path.slice(1)} check passed` : `${path.slice(1)} check failed`);
    return { status: ok ? 200 : 503, body: lines.join('\n') + '\n', type: 'text/plain' };
  }
}

function safeCheck(check: Check): boolean | string {
  try {
    return check();
  } catch (err) {
    return String(err);
  }
}

export function splitAddress(address: string): [string, number] {
  const i = address.lastIndexOf(':');
  const host = i > 0 ? address.slice(0, i) : '0.0.0.0';
  const port = Number(address.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad address "${address}": want host:port`);
  return [host.replace(/^\[|\]$/g, ''), port];
}
