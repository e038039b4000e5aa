// CriClient against an in-process gRPC server on a temporary unix socket that serves our
// runtime.proto: wire form (int64 strings, enums), errors that name the call and container, deadlines,
// an absent socket, a closed client.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { CriClient, normalizeEndpoint, resolveProtoPath } from '../../../src/cri/client.js';
import { CriError } from '../../../src/cri/errors.js';

type Handler = (
  call: grpc.ServerUnaryCall<Record<string, unknown>, unknown>,
  callback: grpc.sendUnaryData<unknown>,
) => void;

describe('CriClient', () => {
  let dir: string;
  let server: grpc.Server;
  let client: CriClient;
  const received: Record<string, unknown>[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tailor-cri-client-'));
    const definition = protoLoader.loadSync(resolveProtoPath(), {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
    });
    const service = definition['runtime.v1.RuntimeService'] as grpc.ServiceDefinition;
    const handlers: Record<string, Handler> = {
      Version: (_call, cb) =>
        cb(null, { version: '0.1.0', runtime_name: 'fake', runtime_version: '1.0', runtime_api_version: 'v1' }),
      ContainerStatus: (call, cb) => {
        if (call.request['container_id'] === 'missing') {
          cb({
            code: grpc.status.NOT_FOUND,
            details: 'an error occurred when try to find container "missing": not found',
          });
          return;
        }
        cb(null, {
          status: {
            id: call.request['container_id'],
            metadata: { name: 'main', attempt: 3 },
            state: 'CONTAINER_RUNNING',
            created_at: '1795320492477469777',
            resources: { linux: { cpu_shares: '1024', cpu_quota: '-1', memory_limit_in_bytes: '9223372036854771712' } },
          },
          info: {},
        });
      },
      UpdateContainerResources: (call, cb) => {
        received.push(call.request);
        cb(null, {});
      },
      ListContainers: (call, cb) => {
        received.push(call.request);
        cb(null, {
          containers: [
            { id: 'c1', pod_sandbox_id: 's1', state: 'CONTAINER_EXITED', created_at: '1', labels: { a: 'b' } },
          ],
        });
      },
      StopContainer: () => {
        /* never answers: the deadline must fire */
      },
      ExecSync: (call, cb) => {
        received.push(call.request);
        if (call.request['container_id'] === 'hangs') return; // never answers: cancelled or timed out
        cb(null, { stdout: Buffer.from('out'), stderr: Buffer.from('err'), exit_code: 7 });
      },
    };
    const impl: grpc.UntypedServiceImplementation = {};
    for (const name of Object.keys(service)) {
      impl[name] =
        handlers[name] ??
        ((_call: unknown, cb: grpc.sendUnaryData<unknown>): void =>
          cb({ code: grpc.status.UNIMPLEMENTED, details: 'fake' }));
    }
    server = new grpc.Server();
    server.addService(service, impl);
    await new Promise<void>((resolve, reject) => {
      server.bindAsync(`unix://${join(dir, 'cri.sock')}`, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      );
    });
    client = new CriClient(join(dir, 'cri.sock'), { timeoutMs: 2_000 });
  });

  afterAll(async () => {
    client.close();
    server.forceShutdown();
    await rm(dir, { recursive: true, force: true });
  });

  test('a bare socket path becomes a unix:// endpoint', () => {
    expect([
      normalizeEndpoint('/run/x.sock'),
      normalizeEndpoint('unix:/run/x.sock'),
      normalizeEndpoint('unix:///run/x.sock'),
    ]).toEqual(['unix:///run/x.sock', 'unix:///run/x.sock', 'unix:///run/x.sock']);
  });

  test('Version returns the runtime name and versions', async () => {
    expect(await client.version()).toEqual({
      version: '0.1.0',
      runtimeName: 'fake',
      runtimeVersion: '1.0',
      runtimeApiVersion: 'v1',
    });
  });

  test('int64 values beyond 2^53 survive the round trip as bigints', async () => {
    const { status } = await client.containerStatus('c1');
    expect([
      status.createdAt,
      status.resources?.memoryLimitInBytes,
      status.resources?.cpuQuota,
      status.metadata?.attempt,
    ]).toEqual([1_795_320_492_477_469_777n, 9_223_372_036_854_771_712n, -1n, 3]);
  });

  test('UpdateContainerResources sends int64 fields as exact decimal strings', async () => {
    received.length = 0;
    await client.updateContainerResources('c1', {
      memoryLimitInBytes: 9_223_372_036_854_771_712n,
      cpuQuota: -1n,
      cpuShares: 2n,
    });
    expect(received[0]).toMatchObject({
      container_id: 'c1',
      linux: { memory_limit_in_bytes: '9223372036854771712', cpu_quota: '-1', cpu_shares: '2', cpu_period: '0' },
    });
  });

  test('ListContainers sends the filter and returns typed containers', async () => {
    received.length = 0;
    const list = await client.listContainers({
      podSandboxId: 's1',
      labelSelector: { 'tailor.dev/cri-test': 'true' },
      state: 'CONTAINER_RUNNING',
    });
    expect(received[0]).toMatchObject({
      filter: {
        pod_sandbox_id: 's1',
        label_selector: { 'tailor.dev/cri-test': 'true' },
        state: { state: 'CONTAINER_RUNNING' },
      },
    });
    expect(list).toEqual([
      {
        id: 'c1',
        podSandboxId: 's1',
        metadata: undefined,
        image: '',
        imageRef: '',
        imageId: '',
        state: 'CONTAINER_EXITED',
        createdAt: 1n,
        labels: { a: 'b' },
        annotations: {},
      },
    ]);
  });

  test('a runtime error names the call, the container and the runtime message', async () => {
    const err = await client.containerStatus('missing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CriError);
    const e = err as CriError;
    expect([e.call, e.containerId, e.code, e.retryable]).toEqual(['ContainerStatus', 'missing', 'NotFound', false]);
    expect(e.message).toBe(
      `CRI ContainerStatus (container missing) on unix://${join(dir, 'cri.sock')}: NotFound: an error occurred when try to find container "missing": not found`,
    );
    expect((e.cause as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);
  });

  test('a call the runtime does not answer ends at its deadline with a retryable error', async () => {
    const started = Date.now();
    const err = await client.stopContainer('slow', 0, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err).toMatchObject({
      name: 'CriError',
      call: 'StopContainer',
      containerId: 'slow',
      code: 'DeadlineExceeded',
      retryable: true,
    });
  });

  test('ExecSync sends the command and its timeout in seconds and returns the output and exit code', async () => {
    received.length = 0;
    const r = await client.execSync('c1', ['/bin/sh', '-c', 'drain'], 25);
    expect(received).toEqual([{ container_id: 'c1', cmd: ['/bin/sh', '-c', 'drain'], timeout: '25' }]);
    expect([Buffer.from(r.stdout).toString(), Buffer.from(r.stderr).toString(), r.exitCode]).toEqual(['out', 'err', 7]);
  });

  test("ExecSync's deadline is the runtime's timeout plus the call's, so the runtime's own timeout answers first", async () => {
    const started = Date.now();
    const err = await client.execSync('hangs', ['sleep', '9'], 1, { timeoutMs: 200 }).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(1_150);
    expect(took).toBeLessThan(3_000);
    expect(err).toMatchObject({ name: 'CriError', call: 'ExecSync', containerId: 'hangs', code: 'DeadlineExceeded' });
  });

  test('an aborted signal cancels a call at once as Canceled, and an already aborted one is never sent', async () => {
    const abort = new AbortController();
    const started = Date.now();
    const pending = client.execSync('hangs', ['sleep', '9'], 30, { signal: abort.signal }).catch((e: unknown) => e);
    setTimeout(() => abort.abort(new Error('the agent stops')), 50);
    expect(await pending).toMatchObject({
      name: 'CriError',
      call: 'ExecSync',
      containerId: 'hangs',
      code: 'Canceled',
      retryable: false,
    });
    expect(Date.now() - started).toBeLessThan(1_000);
    received.length = 0;
    const never = await client.stopContainer('c1', 0, { signal: abort.signal }).catch((e: unknown) => e);
    expect(never).toMatchObject({ name: 'CriError', call: 'StopContainer', code: 'Canceled' });
    expect(received).toEqual([]);
  });

  test('a socket that does not exist fails fast with a retryable Unavailable error', async () => {
    const absent = new CriClient(join(dir, 'absent.sock'), { timeoutMs: 5_000 });
    const started = Date.now();
    const err = await absent.updateContainerResources('c9', { cpuShares: 2n }).catch((e: unknown) => e);
    absent.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err).toMatchObject({
      name: 'CriError',
      call: 'UpdateContainerResources',
      containerId: 'c9',
      code: 'Unavailable',
      retryable: true,
    });
    expect((err as Error).message).toMatch(/absent\.sock/);
    expect((err as Error).message).not.toMatch(/Resolution note/);
  });

  test('the same client reconnects once the runtime listens on the socket again', async () => {
    const path = join(dir, 'late.sock');
    const late = new CriClient(path, { timeoutMs: 1_000, initialReconnectBackoffMs: 100, maxReconnectBackoffMs: 500 });
    const down = await late.version().catch((e: unknown) => e);
    expect(down).toMatchObject({ code: 'Unavailable' });

    const lateServer = new grpc.Server();
    const definition = protoLoader.loadSync(resolveProtoPath(), {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
    });
    lateServer.addService(definition['runtime.v1.RuntimeService'] as grpc.ServiceDefinition, {
      Version: (_call: unknown, cb: grpc.sendUnaryData<unknown>): void =>
        cb(null, { version: '0.1.0', runtime_name: 'late' }),
    });
    await new Promise<void>((resolve, reject) => {
      lateServer.bindAsync(`unix://${path}`, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      );
    });
    try {
      let name: string | undefined;
      for (let i = 0; i < 50 && name === undefined; i++) {
        name = await late.version().then(
          (v) => v.runtimeName,
          async () => new Promise<undefined>((r) => setTimeout(() => r(undefined), 100)),
        );
      }
      expect(name).toBe('late');
    } finally {
      late.close();
      lateServer.forceShutdown();
    }
  });

  test('a closed client refuses calls with a clear error', async () => {
    const closed = new CriClient(join(dir, 'cri.sock'));
    closed.close();
    await expect(closed.version()).rejects.toMatchObject({ code: 'Unavailable', details: 'the client is closed' });
  });
});
