// Running a preStop hook: an HTTP GET reaches the server with the hook's path and headers and is
// done once the answer's head arrives, whatever its status; a server that does not answer is cut
// off by the signal; an exec hook that exits non-zero fails with its output; a sleep ends early
// when aborted; an invalid hook fails with its reason.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runPreStopHook, type RunHookOptions } from '../../../src/agent/prestop.js';
import { HOOK_USER_AGENT, type HttpGetHook } from '../../../src/agent/pure/prestop-plan.js';
import type { ExecSyncResult } from '../../../src/cri/types.js';

const seen: Array<{ url: string | undefined; headers: IncomingHttpHeaders }> = [];
let server: Server;
let port = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url, headers: req.headers });
    if (req.url === '/hang') return; // never answers
    res.writeHead(req.url === '/broken' ? 500 : 200).end('bye');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const options = (over: Partial<RunHookOptions> = {}): RunHookOptions => ({
  cri: { execSync: () => Promise.resolve({ stdout: new Uint8Array(), stderr: new Uint8Array(), exitCode: 0 }) },
  containerId: 'c1',
  boundSeconds: 30,
  signal: new AbortController().signal,
  ...over,
});
const get = (
  path: string,
  headers: HttpGetHook['headers'] = { 'user-agent': HOOK_USER_AGENT, accept: '*/*' },
): HttpGetHook => ({
  kind: 'httpGet',
  scheme: 'http',
  host: '127.0.0.1',
  port,
  path,
  headers,
});

describe('runPreStopHook', () => {
  it("an HTTP hook GETs the hook's path with its headers and Host", async () => {
    seen.length = 0;
    await runPreStopHook(
      get('/drain?now=1', { 'user-agent': HOOK_USER_AGENT, accept: '*/*', host: 'svc.local', 'x-a': ['1', '2'] }),
      options(),
    );
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url).toBe('/drain?now=1');
    expect(seen[0]?.headers).toMatchObject({
      'user-agent': HOOK_USER_AGENT,
      accept: '*/*',
      host: 'svc.local',
      'x-a': '1, 2',
    });
  });

  it('an HTTP hook answered with an error status is done: the kubelet does not check the status either', async () => {
    await expect(runPreStopHook(get('/broken'), options())).resolves.toBeUndefined();
  });

  it('an HTTP hook whose server does not answer ends when the signal aborts, as a failure', async () => {
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('time is up')), 100);
    await expect(runPreStopHook(get('/hang'), options({ signal: abort.signal }))).rejects.toThrow(
      /httpGet hook GET http:\/\/127\.0\.0\.1:\d+\/hang failed/,
    );
  });

  it('an HTTP hook to a port nothing listens on fails', async () => {
    await expect(runPreStopHook({ ...get('/'), port: 1 }, options())).rejects.toThrow(/failed/);
  });

  it('an exec hook runs the command through ExecSync within the bound and fails on a non-zero exit with its output', async () => {
    const calls: unknown[] = [];
    const cri = {
      execSync: (id: string, cmd: readonly string[], timeout: number): Promise<ExecSyncResult> => {
        calls.push([id, cmd, timeout]);
        return Promise.resolve({ stdout: Buffer.from('draining\n'), stderr: Buffer.from('refused'), exitCode: 2 });
      },
    };
    await expect(
      runPreStopHook({ kind: 'exec', command: ['drain'] }, options({ cri, boundSeconds: 12 })),
    ).rejects.toThrow('the exec hook ["drain"] exited with 2: "draining\\nrefused"');
    expect(calls).toEqual([['c1', ['drain'], 12]]);
  });

  it('a sleep hook sleeps, and ends early as a failure when aborted', async () => {
    const started = Date.now();
    await runPreStopHook({ kind: 'sleep', seconds: 0.05 }, options());
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('agent stops')), 50);
    await expect(runPreStopHook({ kind: 'sleep', seconds: 60 }, options({ signal: abort.signal }))).rejects.toThrow(
      'cut short',
    );
  });

  it('an invalid hook fails with its reason', async () => {
    await expect(runPreStopHook({ kind: 'invalid', reason: 'no such port' }, options())).rejects.toThrow(
      'no such port',
    );
  });
});
