// The CRI client of the cri tier: the agent's CriClient plus the sandbox and container lifecycle
// RPCs (RunPodSandbox, CreateContainer, StartContainer, RemoveContainer, ListPodSandbox,
// StopPodSandbox, RemovePodSandbox) a test needs to run a container of its own on a private
// containerd, where no kubelet creates one. The agent never creates or removes anything, so these
// live here and not in src/cri/.
// Owns: those RPCs' typed values and wire mappers. Must not: be imported by src/.
import { CriClient } from '../../../src/cri/client.js';
import type { LinuxContainerResources } from '../../../src/api/node.js';
import type { Labels } from '../../../src/api/wire.js';
import type { CallOptions } from '../../../src/cri/types.js';
import { big, resourcesToWire, type WireInt64, type WireMap } from '../../../src/cri/pure/wire.js';

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';

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
      readonly namespaceOptions?: {
        readonly network?: NamespaceMode;
        readonly pid?: NamespaceMode;
        readonly ipc?: NamespaceMode;
      };
    };
    readonly overhead?: Partial<LinuxContainerResources>;
    readonly resources?: Partial<LinuxContainerResources>;
  };
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

export interface PodSandboxFilter {
  readonly id?: string;
  readonly state?: PodSandboxState;
  readonly labelSelector?: Labels;
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
}

function sandboxConfigToWire(c: PodSandboxConfig): object {
  const linux = c.linux;
  return {
    metadata: {
      name: c.metadata.name,
      uid: c.metadata.uid,
      namespace: c.metadata.namespace,
      attempt: c.metadata.attempt ?? 0,
    },
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

function podSandboxFromWire(s: WirePodSandbox): PodSandbox {
  const m = s.metadata;
  return {
    id: s.id,
    metadata: m === null ? undefined : { name: m.name, uid: m.uid, namespace: m.namespace, attempt: m.attempt },
    state: s.state,
    createdAt: big(s.created_at),
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    runtimeHandler: s.runtime_handler,
  };
}

export class TestCriClient extends CriClient {
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
      {
        pod_sandbox_id: podSandboxId,
        config: containerConfigToWire(config),
        sandbox_config: sandboxConfigToWire(sandboxConfig),
      },
      { podSandboxId },
      options,
    );
    return r.container_id;
  }

  async startContainer(containerId: string, options?: CallOptions): Promise<void> {
    await this.call('StartContainer', { container_id: containerId }, { containerId }, options);
  }

  async removeContainer(containerId: string, options?: CallOptions): Promise<void> {
    await this.call('RemoveContainer', { container_id: containerId }, { containerId }, options);
  }
}
