// CRI runtime.v1 client over a unix socket: the node agent's only way to talk to the container
// runtime, with the RPCs the agent uses (Version, ListContainers, ContainerStatus,
// UpdateContainerResources, StopContainer, ExecSync, ImageStatus, PullImage). Owns: loading
// runtime.proto, the gRPC channel (reconnect with backoff is grpc-js'), a deadline on every call
// (and its cancellation when the caller's AbortSignal aborts), and turning
// every failure into a CriError (errors.ts) that names the call, the container or sandbox and the
// runtime's own message. The typed values are types.ts, their wire form and mappers wire.ts; the
// sandbox and container lifecycle RPCs only the cri tier needs extend this class in
// test/cri/support/.
// Must not: retry (callers own retry and backoff, e.g. the agent's work queue — CriError says
// whether a retry can help), decide anything about resources, or read cgroups.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { CriError, criCodeName, type CriCode } from './errors.js';
import type {
  CallOptions,
  Container,
  ContainerFilter,
  ContainerStatusResult,
  CriClientOptions,
  ExecSyncResult,
  VersionInfo,
} from './types.js';
import type { RegistryAuth } from '../api/prepull.js';
import type { LinuxContainerResources } from '../api/node.js';
import type { Labels } from '../api/wire.js';
import {
  containerFilterToWire,
  containerFromWire,
  containerStatusFromWire,
  resourcesToWire,
  type WireContainer,
  type WireContainerStatus,
  type WireMap,
} from './pure/wire.js';
import { errorMessage } from '../api/errors.js';

/** The test bed's containerd; production nodes usually use unix:///run/containerd/containerd.sock. */
export const DEFAULT_CRI_ENDPOINT = 'unix:///run/containerd/containerd.sock';
/** Deadline applied to every call unless the call or the client says otherwise. */
export const DEFAULT_CRI_TIMEOUT_MS = 5_000;

const SERVICES = ['runtime.v1.RuntimeService', 'runtime.v1.ImageService'];

// ---------------------------------------------------------------------------------------- loading

/**
 * Where runtime.proto is. The .proto is not compiled by tsc, so the loader looks for it next to
 * this module first (a build that copies it into dist/cri/) and then at <repo>/src/cri/runtime.proto,
 * which is `../../src/cri/runtime.proto` from both src/cri/ (ts-jest, tsx) and dist/cri/
 * (tsc -p tsconfig.build.json): both directories sit two levels below the repo root.
 * CriClientOptions.protoPath (`override`) overrides both.
 */
export function resolveProtoPath(override?: string): string {
  const candidates =
    override !== undefined
      ? [override]
      : [
          fileURLToPath(new URL('./runtime.proto', import.meta.url)),
          fileURLToPath(new URL('../../src/cri/runtime.proto', import.meta.url)),
        ];
  const found = candidates.find((p) => existsSync(p));
  if (found === undefined) {
    throw new Error(`CRI: runtime.proto not found; looked at ${candidates.join(', ')}`);
  }
  return found;
}

const serviceCache = new Map<string, protoLoader.ServiceDefinition>();

function loadService(protoPath: string): protoLoader.ServiceDefinition {
  const cached = serviceCache.get(protoPath);
  if (cached !== undefined) return cached;
  const definition = protoLoader.loadSync(protoPath, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  // One method table for both services: their rpc names do not overlap.
  let service: protoLoader.ServiceDefinition = {};
  for (const name of SERVICES) {
    const part = definition[name];
    if (part === undefined || !isServiceDefinition(part))
      throw new Error(`CRI: ${protoPath} does not define service ${name}`);
    service = { ...service, ...part };
  }
  serviceCache.set(protoPath, service);
  return service;
}

function isServiceDefinition(d: protoLoader.AnyDefinition): d is protoLoader.ServiceDefinition {
  return !('format' in d) && Object.values(d).every((m) => typeof m === 'object' && m !== null && 'path' in m);
}

/** "unix:///run/x.sock" stays; a bare "/run/x.sock" becomes "unix:///run/x.sock". */
export function normalizeEndpoint(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return endpoint;
  if (endpoint.startsWith('unix:')) return `unix://${endpoint.slice('unix:'.length)}`;
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  return endpoint;
}

// ----------------------------------------------------------------------------------------- client

/** What a call is about, for its error message. */
export interface CallSubject {
  readonly containerId?: string;
  readonly podSandboxId?: string;
  readonly image?: string;
}

/** A CRI RuntimeService and ImageService client. One channel per instance; close() releases it. */
export class CriClient {
  readonly endpoint: string;
  private readonly client: grpc.Client;
  private readonly service: protoLoader.ServiceDefinition;
  private readonly timeoutMs: number;
  private closed = false;

  constructor(endpoint: string = DEFAULT_CRI_ENDPOINT, options: CriClientOptions = {}) {
    this.endpoint = normalizeEndpoint(endpoint);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CRI_TIMEOUT_MS;
    this.service = loadService(resolveProtoPath(options.protoPath));
    this.client = new grpc.Client(this.endpoint, grpc.credentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': options.initialReconnectBackoffMs ?? 250,
      'grpc.max_reconnect_backoff_ms': options.maxReconnectBackoffMs ?? 10_000,
      // The kubelet allows 16 MiB: ListContainers on a busy node exceeds the 4 MiB default.
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
    });
  }

  async version(options?: CallOptions): Promise<VersionInfo> {
    const r = await this.call<{
      version: string;
      runtime_name: string;
      runtime_version: string;
      runtime_api_version: string;
    }>('Version', { version: 'v1' }, {}, options);
    return {
      version: r.version,
      runtimeName: r.runtime_name,
      runtimeVersion: r.runtime_version,
      runtimeApiVersion: r.runtime_api_version,
    };
  }

  /** Stop with a grace period in seconds (0 = kill at once). The call's deadline grows by the grace period. */
  async stopContainer(containerId: string, graceSeconds = 0, options?: CallOptions): Promise<void> {
    const timeoutMs = (options?.timeoutMs ?? this.timeoutMs) + graceSeconds * 1000;
    await this.call(
      'StopContainer',
      { container_id: containerId, timeout: String(graceSeconds) },
      { containerId },
      { ...options, timeoutMs },
    );
  }

  /**
   * Run a command in a running container and wait for it (the kubelet's exec probes and hooks). The
   * runtime ends the command after `timeoutSeconds` (0: never); the call's deadline is that plus the
   * client's (or the call's) deadline, so the runtime's own timeout answers first. A command that
   * ran resolves whatever its exit code.
   */
  async execSync(
    containerId: string,
    cmd: readonly string[],
    timeoutSeconds: number,
    options?: CallOptions,
  ): Promise<ExecSyncResult> {
    const timeoutMs = (options?.timeoutMs ?? this.timeoutMs) + timeoutSeconds * 1000;
    const r = await this.call<{ stdout: Uint8Array; stderr: Uint8Array; exit_code: number }>(
      'ExecSync',
      { container_id: containerId, cmd: [...cmd], timeout: String(timeoutSeconds) },
      { containerId },
      { ...options, timeoutMs },
    );
    return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exit_code };
  }

  async listContainers(filter?: ContainerFilter, options?: CallOptions): Promise<Container[]> {
    const r = await this.call<{ containers: WireContainer[] }>(
      'ListContainers',
      { filter: containerFilterToWire(filter) },
      {},
      options,
    );
    return r.containers.map(containerFromWire);
  }

  async containerStatus(
    containerId: string,
    options: CallOptions & { verbose?: boolean } = {},
  ): Promise<ContainerStatusResult> {
    const r = await this.call<{ status: WireContainerStatus | null; info: WireMap }>(
      'ContainerStatus',
      { container_id: containerId, verbose: options.verbose ?? false },
      { containerId },
      options,
    );
    if (r.status === null) {
      throw this.emptyReply('ContainerStatus', { containerId });
    }
    return { status: containerStatusFromWire(r.status), info: { ...r.info } };
  }

  /** Apply cpu/memory to a running container. Fields left undefined (or 0) are not changed by containerd. */
  async updateContainerResources(
    containerId: string,
    linux: Partial<LinuxContainerResources>,
    options: CallOptions & { annotations?: Labels } = {},
  ): Promise<void> {
    await this.call(
      'UpdateContainerResources',
      { container_id: containerId, linux: resourcesToWire(linux), annotations: { ...(options.annotations ?? {}) } },
      { containerId },
      options,
    );
  }

  /** The image's ID when the runtime has it, else undefined. */
  async imageStatus(image: string, options?: CallOptions): Promise<string | undefined> {
    const r = await this.call<{ image: { id: string } | null }>(
      'ImageStatus',
      { image: { image } },
      { image },
      options,
    );
    return r.image?.id || undefined;
  }

  /** Pull an image with the given registry credentials; resolves to the image reference the runtime stored. */
  async pullImage(image: string, auth?: RegistryAuth, options?: CallOptions): Promise<string> {
    const r = await this.call<{ image_ref: string }>(
      'PullImage',
      { image: { image }, ...(auth ? { auth: { username: auth.username, password: auth.password } } : {}) },
      { image },
      options,
    );
    return r.image_ref;
  }

  /** Release the channel. Calls made afterwards fail with a CriError (Unavailable). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.close();
  }

  protected emptyReply(call: string, subject: CallSubject): CriError {
    return new CriError({
      call,
      code: 'Internal',
      details: 'the runtime replied without a status',
      endpoint: this.endpoint,
      ...subject,
    });
  }

  /** One unary RPC with the client's deadline and error mapping; the cri tier's test client adds its RPCs through it. */
  protected call<Res = object>(
    name: string,
    request: object,
    subject: CallSubject,
    options?: CallOptions,
  ): Promise<Res> {
    const fail = (code: CriCode, details: string, cause?: unknown): CriError =>
      new CriError({ call: name, code, details, endpoint: this.endpoint, cause, ...subject });
    if (this.closed) return Promise.reject(fail('Unavailable', 'the client is closed'));
    const method = this.service[name];
    if (method === undefined) return Promise.reject(fail('Unimplemented', `runtime.proto has no rpc ${name}`));
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(fail('Canceled', 'canceled before it was sent', signal.reason));
    const deadline = Date.now() + (options?.timeoutMs ?? this.timeoutMs);
    return new Promise<Res>((resolve, reject) => {
      let cancel: (() => void) | undefined;
      try {
        const call = this.client.makeUnaryRequest<object, object>(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          request,
          new grpc.Metadata(),
          { deadline },
          (err, value) => {
            if (cancel !== undefined) signal?.removeEventListener('abort', cancel);
            if (err !== null) {
              // grpc-js ends a connection failure with "Resolution note: " even when it has none.
              const details = (err.details || err.message).replace(/ Resolution note: *$/, '');
              reject(fail(criCodeName(err.code), details, err));
            } else if (value === undefined) {
              reject(fail('Internal', 'empty reply'));
            } else {
              resolve(value as Res);
            }
          },
        );
        // grpc-js ends a cancelled call through the callback above, with code CANCELLED.
        cancel = () => call.cancel();
        signal?.addEventListener('abort', cancel, { once: true });
      } catch (err) {
        // Serialization of a malformed request, or a channel closed under us.
        reject(fail('InvalidArgument', errorMessage(err), err));
      }
    });
  }
}
