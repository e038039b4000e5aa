// CRI runtime.v1 client over a unix socket: the node agent's only way to talk to the container
// runtime. Owns: loading runtime.proto, the gRPC channel (reconnect with backoff is grpc-js'),
// a deadline on every call, the translation between the wire form (snake_case, int64 as decimal
// strings, enums as names) and typed TypeScript values (camelCase, every int64 as bigint, enums
// as their proto names), and turning every failure into a CriError that names the call, the
// container or sandbox and the runtime's own message.
// Must not: retry (callers own retry and backoff, e.g. the agent's work queue — CriError says
// whether a retry can help), decide anything about resources, or read cgroups.
//
// How runtime.proto is found: the .proto is not compiled by tsc, so the loader looks for it next
// to this module first (a build that copies it into dist/cri/) and then at
// <repo>/src/cri/runtime.proto, which is `../../src/cri/runtime.proto` from both src/cri/ (ts-jest,
// tsx) and dist/cri/ (tsc -p tsconfig.build.json): both directories sit two levels below the repo
// root. CriClientOptions.protoPath overrides both.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Labels, LinuxContainerResources } from '../api/node.js';

/** The test bed's containerd; production nodes usually use unix:///run/containerd/containerd.sock. */
export const DEFAULT_CRI_ENDPOINT = 'unix:///run/containerd/containerd.sock';
/** Deadline applied to every call unless the call or the client says otherwise. */
export const DEFAULT_CRI_TIMEOUT_MS = 5_000;

const SERVICES = ['runtime.v1.RuntimeService', 'runtime.v1.ImageService'];

// ------------------------------------------------------------------------------------------ errors

/** gRPC status codes, spelled as Go's codes.Code.String() (what kubelet logs show). */
export type CriCode =
  | 'OK'
  | 'Canceled'
  | 'Unknown'
  | 'InvalidArgument'
  | 'DeadlineExceeded'
  | 'NotFound'
  | 'AlreadyExists'
  | 'PermissionDenied'
  | 'ResourceExhausted'
  | 'FailedPrecondition'
  | 'Aborted'
  | 'OutOfRange'
  | 'Unimplemented'
  | 'Internal'
  | 'Unavailable'
  | 'DataLoss'
  | 'Unauthenticated';

const CODE_NAMES: readonly CriCode[] = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/** Codes after which the same call may succeed later: the runtime is down, slow or busy. */
const RETRYABLE: ReadonlySet<CriCode> = new Set<CriCode>(['Unavailable', 'DeadlineExceeded', 'ResourceExhausted', 'Aborted']);

export function criCodeName(code: number): CriCode {
  return CODE_NAMES[code] ?? 'Unknown';
}

/** A failed CRI call. `message` reads: `CRI <call> (container <id>) on <endpoint>: <Code>: <runtime message>`. */
export class CriError extends Error {
  override readonly name = 'CriError';
  /** The RPC, e.g. "UpdateContainerResources". */
  readonly call: string;
  /** The container the call was about, when it was about one. */
  readonly containerId: string | undefined;
  /** The sandbox the call was about, when it was about one. */
  readonly podSandboxId: string | undefined;
  readonly code: CriCode;
  /** What the runtime (or the channel) said, without our prefix. */
  readonly details: string;
  readonly endpoint: string;

  constructor(init: {
    call: string;
    code: CriCode;
    details: string;
    endpoint: string;
    containerId?: string | undefined;
    podSandboxId?: string | undefined;
    image?: string | undefined;
    cause?: unknown;
  }) {
    const subject =
      init.containerId !== undefined
        ? ` (container ${init.containerId})`
        : init.podSandboxId !== undefined
          ? ` (sandbox ${init.podSandboxId})`
          : init.image !== undefined
            ? ` (image ${init.image})`
            : '';
    const hint = RETRYABLE.has(init.code) ? ' (retryable)' : '';
    super(`CRI ${init.call}${subject} on ${init.endpoint}: ${init.code}: ${init.details}${hint}`, { cause: init.cause });
    this.call = init.call;
    this.code = init.code;
    this.details = init.details;
    this.endpoint = init.endpoint;
    this.containerId = init.containerId;
    this.podSandboxId = init.podSandboxId;
  }

  /** True when retrying the same call later can succeed (runtime unreachable, slow or busy). */
  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}

export function isCriError(err: unknown, code?: CriCode): err is CriError {
  return err instanceof CriError && (code === undefined || err.code === code);
}

// ------------------------------------------------------------------------------------------- types

// The resource shapes live in src/api/node.ts, so pure modules name them without this client.
export type { HugepageLimit, Labels, LinuxContainerResources } from '../api/node.js';

export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';

export interface VersionInfo {
  readonly version: string;
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly runtimeApiVersion: string;
}

export interface PodSandboxMetadata {
  readonly name: string;
  readonly uid: string;
  readonly namespace: string;
  readonly attempt?: number;
}

export interface PodSandboxConfig {
  readonly metadata: PodSandboxMetadata;
  readonly hostname?: string;
  readonly logDirectory?: string;
  readonly labels?: Labels;
  readonly annotations?: Labels;
  readonly linux?: {
    readonly cgroupParent?: string;
    readonly securityContext?: {
      readonly namespaceOptions?: { readonly network?: NamespaceMode; readonly pid?: NamespaceMode; readonly ipc?: NamespaceMode };
    };
    readonly overhead?: Partial<LinuxContainerResources>;
    readonly resources?: Partial<LinuxContainerResources>;
  };
}

export interface ContainerMetadata {
  readonly name: string;
  readonly attempt: number;
}

export interface ContainerConfig {
  readonly metadata: { readonly name: string; readonly attempt?: number };
  readonly image: { readonly image: string };
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly workingDir?: string;
  readonly labels?: Labels;
  readonly annotations?: Labels;
  /** Relative to the sandbox's logDirectory. */
  readonly logPath?: string;
  readonly linux?: { readonly resources?: Partial<LinuxContainerResources> };
}

export interface PodSandbox {
  readonly id: string;
  readonly metadata: PodSandboxMetadata | undefined;
  readonly state: PodSandboxState;
  /** Nanoseconds since the epoch. */
  readonly createdAt: bigint;
  readonly labels: Labels;
  readonly annotations: Labels;
  readonly runtimeHandler: string;
}

export interface PodSandboxStatus extends PodSandbox {
  readonly ip: string;
}

export interface PodSandboxStatusResult {
  readonly status: PodSandboxStatus;
  /** Only filled when asked for verbose; values are JSON. */
  readonly info: Labels;
}

export interface Container {
  readonly id: string;
  readonly podSandboxId: string;
  readonly metadata: ContainerMetadata | undefined;
  readonly image: string;
  readonly imageRef: string;
  readonly imageId: string;
  readonly state: ContainerState;
  readonly createdAt: bigint;
  readonly labels: Labels;
  readonly annotations: Labels;
}

export interface ContainerStatus {
  readonly id: string;
  readonly metadata: ContainerMetadata | undefined;
  readonly state: ContainerState;
  readonly createdAt: bigint;
  readonly startedAt: bigint;
  readonly finishedAt: bigint;
  readonly exitCode: number;
  readonly image: string;
  readonly imageRef: string;
  readonly imageId: string;
  readonly reason: string;
  readonly message: string;
  readonly labels: Labels;
  readonly annotations: Labels;
  readonly logPath: string;
  /** What the runtime reports as applied; undefined when the runtime does not report it. */
  readonly resources: LinuxContainerResources | undefined;
}

export interface ContainerStatusResult {
  readonly status: ContainerStatus;
  /** Only filled when asked for verbose; values are JSON (containerd: key "info"). */
  readonly info: Labels;
}

export interface ContainerFilter {
  readonly id?: string;
  readonly state?: ContainerState;
  readonly podSandboxId?: string;
  /** Exact matches, ANDed (CRI supports no expressions). */
  readonly labelSelector?: Labels;
}

export interface PodSandboxFilter {
  readonly id?: string;
  readonly state?: PodSandboxState;
  readonly labelSelector?: Labels;
}

export interface CallOptions {
  /** Overrides the client's deadline for this call. */
  readonly timeoutMs?: number;
}

export interface CriClientOptions {
  /** Default deadline of every call; DEFAULT_CRI_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /** First reconnect delay after the socket went away; grpc-js doubles it (with jitter) up to maxReconnectBackoffMs. */
  readonly initialReconnectBackoffMs?: number;
  readonly maxReconnectBackoffMs?: number;
  /** Where runtime.proto is; found automatically otherwise (see the header). */
  readonly protoPath?: string;
}

// ------------------------------------------------------------------------------ wire (proto-loader)

type WireInt64 = string; // longs: String
type WireMap = Record<string, string>;

interface WireResources {
  cpu_period?: WireInt64;
  cpu_quota?: WireInt64;
  cpu_shares?: WireInt64;
  memory_limit_in_bytes?: WireInt64;
  oom_score_adj?: WireInt64;
  cpuset_cpus?: string;
  cpuset_mems?: string;
  hugepage_limits?: { page_size: string; limit: WireInt64 }[];
  unified?: WireMap;
  memory_swap_limit_in_bytes?: WireInt64;
}
interface WireSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}
interface WirePodSandbox {
  id: string;
  metadata: WireSandboxMetadata | null;
  state: PodSandboxState;
  created_at: WireInt64;
  labels: WireMap;
  annotations: WireMap;
  runtime_handler: string;
  network?: { ip: string } | null;
}
interface WireContainerMetadata {
  name: string;
  attempt: number;
}
interface WireImageSpec {
  image: string;
}
interface WireContainer {
  id: string;
  pod_sandbox_id: string;
  metadata: WireContainerMetadata | null;
  image: WireImageSpec | null;
  image_ref: string;
  image_id: string;
  state: ContainerState;
  created_at: WireInt64;
  labels: WireMap;
  annotations: WireMap;
}
interface WireContainerStatus {
  id: string;
  metadata: WireContainerMetadata | null;
  state: ContainerState;
  created_at: WireInt64;
  started_at: WireInt64;
  finished_at: WireInt64;
  exit_code: number;
  image: WireImageSpec | null;
  image_ref: string;
  image_id: string;
  reason: string;
  message: string;
  labels: WireMap;
  annotations: WireMap;
  log_path: string;
  resources: { linux: Required<WireResources> | null } | null;
}

const big = (v: WireInt64 | undefined | null): bigint => (v === undefined || v === null || v === '' ? 0n : BigInt(v));

export function resourcesToWire(r: Partial<LinuxContainerResources>): WireResources {
  const wire: WireResources = {};
  if (r.cpuPeriod !== undefined) wire.cpu_period = r.cpuPeriod.toString();
  if (r.cpuQuota !== undefined) wire.cpu_quota = r.cpuQuota.toString();
  if (r.cpuShares !== undefined) wire.cpu_shares = r.cpuShares.toString();
  if (r.memoryLimitInBytes !== undefined) wire.memory_limit_in_bytes = r.memoryLimitInBytes.toString();
  if (r.oomScoreAdj !== undefined) wire.oom_score_adj = r.oomScoreAdj.toString();
  if (r.cpusetCpus !== undefined) wire.cpuset_cpus = r.cpusetCpus;
  if (r.cpusetMems !== undefined) wire.cpuset_mems = r.cpusetMems;
  if (r.hugepageLimits !== undefined) {
    wire.hugepage_limits = r.hugepageLimits.map((h) => ({ page_size: h.pageSize, limit: h.limit.toString() }));
  }
  if (r.unified !== undefined) wire.unified = { ...r.unified };
  if (r.memorySwapLimitInBytes !== undefined) wire.memory_swap_limit_in_bytes = r.memorySwapLimitInBytes.toString();
  return wire;
}

export function resourcesFromWire(w: WireResources): LinuxContainerResources {
  return {
    cpuPeriod: big(w.cpu_period),
    cpuQuota: big(w.cpu_quota),
    cpuShares: big(w.cpu_shares),
    memoryLimitInBytes: big(w.memory_limit_in_bytes),
    oomScoreAdj: big(w.oom_score_adj),
    cpusetCpus: w.cpuset_cpus ?? '',
    cpusetMems: w.cpuset_mems ?? '',
    hugepageLimits: (w.hugepage_limits ?? []).map((h) => ({ pageSize: h.page_size, limit: big(h.limit) })),
    unified: { ...(w.unified ?? {}) },
    memorySwapLimitInBytes: big(w.memory_swap_limit_in_bytes),
  };
}

function sandboxConfigToWire(c: PodSandboxConfig): object {
  const linux = c.linux;
  return {
    metadata: { name: c.metadata.name, uid: c.metadata.uid, namespace: c.metadata.namespace, attempt: c.metadata.attempt ?? 0 },
    hostname: c.hostname ?? '',
    log_directory: c.logDirectory ?? '',
    labels: { ...(c.labels ?? {}) },
    annotations: { ...(c.annotations ?? {}) },
    linux:
      linux === undefined
        ? undefined
        : {
            cgroup_parent: linux.cgroupParent ?? '',
            security_context:
              linux.securityContext?.namespaceOptions === undefined
                ? undefined
                : { namespace_options: { ...linux.securityContext.namespaceOptions } },
            overhead: linux.overhead === undefined ? undefined : resourcesToWire(linux.overhead),
            resources: linux.resources === undefined ? undefined : resourcesToWire(linux.resources),
          },
  };
}

function containerConfigToWire(c: ContainerConfig): object {
  return {
    metadata: { name: c.metadata.name, attempt: c.metadata.attempt ?? 0 },
    image: { image: c.image.image },
    command: [...(c.command ?? [])],
    args: [...(c.args ?? [])],
    working_dir: c.workingDir ?? '',
    labels: { ...(c.labels ?? {}) },
    annotations: { ...(c.annotations ?? {}) },
    log_path: c.logPath ?? '',
    linux: c.linux?.resources === undefined ? undefined : { resources: resourcesToWire(c.linux.resources) },
  };
}

function sandboxMetadataFromWire(m: WireSandboxMetadata | null): PodSandboxMetadata | undefined {
  return m === null ? undefined : { name: m.name, uid: m.uid, namespace: m.namespace, attempt: m.attempt };
}

function podSandboxFromWire(s: WirePodSandbox): PodSandbox {
  return {
    id: s.id,
    metadata: sandboxMetadataFromWire(s.metadata),
    state: s.state,
    createdAt: big(s.created_at),
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    runtimeHandler: s.runtime_handler,
  };
}

function containerMetadataFromWire(m: WireContainerMetadata | null): ContainerMetadata | undefined {
  return m === null ? undefined : { name: m.name, attempt: m.attempt };
}

function containerFromWire(c: WireContainer): Container {
  return {
    id: c.id,
    podSandboxId: c.pod_sandbox_id,
    metadata: containerMetadataFromWire(c.metadata),
    image: c.image?.image ?? '',
    imageRef: c.image_ref,
    imageId: c.image_id,
    state: c.state,
    createdAt: big(c.created_at),
    labels: { ...c.labels },
    annotations: { ...c.annotations },
  };
}

function containerStatusFromWire(s: WireContainerStatus): ContainerStatus {
  const linux = s.resources?.linux ?? null;
  return {
    id: s.id,
    metadata: containerMetadataFromWire(s.metadata),
    state: s.state,
    createdAt: big(s.created_at),
    startedAt: big(s.started_at),
    finishedAt: big(s.finished_at),
    exitCode: s.exit_code,
    image: s.image?.image ?? '',
    imageRef: s.image_ref,
    imageId: s.image_id,
    reason: s.reason,
    message: s.message,
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    logPath: s.log_path,
    resources: linux === null ? undefined : resourcesFromWire(linux),
  };
}

// ---------------------------------------------------------------------------------------- loading

/** Where runtime.proto is: next to this module, else <repo>/src/cri/ (see the header). */
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
  const definition = protoLoader.loadSync(protoPath, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  // One method table for both services: their rpc names do not overlap.
  let service: protoLoader.ServiceDefinition = {};
  for (const name of SERVICES) {
    const part = definition[name];
    if (part === undefined || !isServiceDefinition(part)) throw new Error(`CRI: ${protoPath} does not define service ${name}`);
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

interface Subject {
  readonly containerId?: string;
  readonly podSandboxId?: string;
  readonly image?: string;
}

/** Registry credentials for one pull, as a dockerconfigjson entry gives them (CRI AuthConfig). */
export interface RegistryAuth {
  readonly username?: string;
  readonly password?: string;
  /** base64 of "username:password", when the entry gives that instead. */
  readonly auth?: string;
  readonly serverAddress?: string;
}

/** A CRI RuntimeService client. One channel per instance; close() releases it. */
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
    const r = await this.call<{ version: string; runtime_name: string; runtime_version: string; runtime_api_version: string }>(
      'Version',
      { version: 'v1' },
      {},
      options,
    );
    return { version: r.version, runtimeName: r.runtime_name, runtimeVersion: r.runtime_version, runtimeApiVersion: r.runtime_api_version };
  }

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = '', options?: CallOptions): Promise<string> {
    const r = await this.call<{ pod_sandbox_id: string }>(
      'RunPodSandbox',
      { config: sandboxConfigToWire(config), runtime_handler: runtimeHandler },
      {},
      options,
    );
    return r.pod_sandbox_id;
  }

  async stopPodSandbox(podSandboxId: string, options?: CallOptions): Promise<void> {
    await this.call('StopPodSandbox', { pod_sandbox_id: podSandboxId }, { podSandboxId }, options);
  }

  async removePodSandbox(podSandboxId: string, options?: CallOptions): Promise<void> {
    await this.call('RemovePodSandbox', { pod_sandbox_id: podSandboxId }, { podSandboxId }, options);
  }

  async podSandboxStatus(podSandboxId: string, options: CallOptions & { verbose?: boolean } = {}): Promise<PodSandboxStatusResult> {
    const r = await this.call<{ status: WirePodSandbox | null; info: WireMap }>(
      'PodSandboxStatus',
      { pod_sandbox_id: podSandboxId, verbose: options.verbose ?? false },
      { podSandboxId },
      options,
    );
    if (r.status === null) {
      throw this.emptyReply('PodSandboxStatus', { podSandboxId });
    }
    return { status: { ...podSandboxFromWire(r.status), ip: r.status.network?.ip ?? '' }, info: { ...r.info } };
  }

  async listPodSandbox(filter?: PodSandboxFilter, options?: CallOptions): Promise<PodSandbox[]> {
    const wireFilter =
      filter === undefined
        ? undefined
        : {
            id: filter.id ?? '',
            state: filter.state === undefined ? undefined : { state: filter.state },
            label_selector: { ...(filter.labelSelector ?? {}) },
          };
    const r = await this.call<{ items: WirePodSandbox[] }>('ListPodSandbox', { filter: wireFilter }, {}, options);
    return r.items.map(podSandboxFromWire);
  }

  async createContainer(
    podSandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
    options?: CallOptions,
  ): Promise<string> {
    const r = await this.call<{ container_id: string }>(
      'CreateContainer',
      { pod_sandbox_id: podSandboxId, config: containerConfigToWire(config), sandbox_config: sandboxConfigToWire(sandboxConfig) },
      { podSandboxId },
      options,
    );
    return r.container_id;
  }

  async startContainer(containerId: string, options?: CallOptions): Promise<void> {
    await this.call('StartContainer', { container_id: containerId }, { containerId }, options);
  }

  /** Stop with a grace period in seconds (0 = kill at once). The call's deadline grows by the grace period. */
  async stopContainer(containerId: string, graceSeconds = 0, options?: CallOptions): Promise<void> {
    const timeoutMs = (options?.timeoutMs ?? this.timeoutMs) + graceSeconds * 1000;
    await this.call('StopContainer', { container_id: containerId, timeout: String(graceSeconds) }, { containerId }, { timeoutMs });
  }

  async removeContainer(containerId: string, options?: CallOptions): Promise<void> {
    await this.call('RemoveContainer', { container_id: containerId }, { containerId }, options);
  }

  async listContainers(filter?: ContainerFilter, options?: CallOptions): Promise<Container[]> {
    const wireFilter =
      filter === undefined
        ? undefined
        : {
            id: filter.id ?? '',
            state: filter.state === undefined ? undefined : { state: filter.state },
            pod_sandbox_id: filter.podSandboxId ?? '',
            label_selector: { ...(filter.labelSelector ?? {}) },
          };
    const r = await this.call<{ containers: WireContainer[] }>('ListContainers', { filter: wireFilter }, {}, options);
    return r.containers.map(containerFromWire);
  }

  async containerStatus(containerId: string, options: CallOptions & { verbose?: boolean } = {}): Promise<ContainerStatusResult> {
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
    const r = await this.call<{ image: { id: string } | null }>('ImageStatus', { image: { image } }, { image }, options);
    return r.image?.id || undefined;
  }

  /** Pull an image with the given registry credentials; resolves to the image reference the runtime stored. */
  async pullImage(image: string, auth?: RegistryAuth, options?: CallOptions): Promise<string> {
    const r = await this.call<{ image_ref: string }>(
      'PullImage',
      {
        image: { image },
        ...(auth
          ? {
              auth: {
                username: auth.username ?? '',
                password: auth.password ?? '',
                auth: auth.auth ?? '',
                server_address: auth.serverAddress ?? '',
              },
            }
          : {}),
      },
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

  private emptyReply(call: string, subject: Subject): CriError {
    return new CriError({ call, code: 'Internal', details: 'the runtime replied without a status', endpoint: this.endpoint, ...subject });
  }

  private call<Res = object>(name: string, request: object, subject: Subject, options?: CallOptions): Promise<Res> {
    const fail = (code: CriCode, details: string, cause?: unknown): CriError =>
      new CriError({ call: name, code, details, endpoint: this.endpoint, cause, ...subject });
    if (this.closed) return Promise.reject(fail('Unavailable', 'the client is closed'));
    const method = this.service[name];
    if (method === undefined) return Promise.reject(fail('Unimplemented', `runtime.proto has no rpc ${name}`));
    const deadline = Date.now() + (options?.timeoutMs ?? this.timeoutMs);
    return new Promise<Res>((resolve, reject) => {
      try {
        this.client.makeUnaryRequest<object, object>(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          request,
          new grpc.Metadata(),
          { deadline },
          (err, value) => {
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
      } catch (err) {
        // Serialization of a malformed request, or a channel closed under us.
        reject(fail('InvalidArgument', err instanceof Error ? err.message : String(err), err));
      }
    });
  }
}
