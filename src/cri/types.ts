// The CRI runtime.v1 values the node agent reads and sends, typed: camelCase, every int64 a
// bigint, enums as their proto names. The resource shapes live in src/api/node.ts, so pure
// modules name them without the CRI layer.
// Owns: type declarations only. Must not: hold code or know the wire form (wire.ts does).
import type { LinuxContainerResources } from '../api/node.js';
import type { Labels } from '../api/wire.js';

export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

export interface VersionInfo {
  readonly version: string;
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly runtimeApiVersion: string;
}

export interface ContainerMetadata {
  readonly name: string;
  readonly attempt: number;
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

export interface CallOptions {
  /** Overrides the client's deadline for this call. */
  readonly timeoutMs?: number;
  /** Cancels the call when it aborts (a CriError with code Canceled). */
  readonly signal?: AbortSignal;
}

/** What a command run in a container by ExecSync printed and how it ended. */
export interface ExecSyncResult {
  readonly stdout: Uint8Array;
  readonly stderr: Uint8Array;
  readonly exitCode: number;
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
