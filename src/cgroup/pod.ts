// The pod-level cgroup the kubelet created for a pod (kubepods[/burstable|/besteffort]/pod<uid>),
// which the agent must resize itself because the kubelet will not: read its cpu/memory values and
// write new ones, on cgroup v1 and v2, under the configurable root (--cgroup-root).
// Owns: the pod cgroup's path (cgroupfs and systemd drivers, or the parent of a container's
// cgroup, checked to be named for the pod's UID) and its files, each named through path.ts.
// Must not: decide values or order (agent/pure/order.ts), touch container cgroups (those go through
// CRI), or retry.
import { access, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { cgroupDir, cgroupFile } from './path.js';
import type { CgroupVersion, PodCgroupValues } from '../api/node.js';
import type { QosClass } from '../api/pod.js';
import { readCgroup, type CgroupReading } from './container.js';
import { cpuMaxValue, cpuWeightToShares, memoryMaxValue, sharesToCpuWeight } from './pure/values.js';
import { errorMessage } from '../api/errors.js';

export type CgroupDriver = 'cgroupfs' | 'systemd';

export interface PodCgroupOptions {
  readonly root: string;
  readonly version: CgroupVersion;
}

/** The pod's cgroup below the hierarchy root, as the kubelet names it for its QoS class and driver. */
export function podCgroupPath(uid: string, qos: QosClass, driver: CgroupDriver = 'cgroupfs'): string {
  if (driver === 'cgroupfs') {
    return qos === 'Guaranteed' ? `/kubepods/pod${uid}` : `/kubepods/${qos.toLowerCase()}/pod${uid}`;
  }
  const id = uid.replaceAll('-', '_');
  if (qos === 'Guaranteed') return `/kubepods.slice/kubepods-pod${id}.slice`;
  const q = qos.toLowerCase();
  return `/kubepods.slice/kubepods-${q}.slice/kubepods-${q}-pod${id}.slice`;
}

/** The names the kubelet gives a pod's own cgroup: pod<uid> (cgroupfs), kubepods[-<qos>]-pod<uid_>.slice (systemd). */
function podCgroupNames(uid: string): string[] {
  const id = uid.replaceAll('-', '_');
  return [
    `pod${uid}`,
    `kubepods-pod${id}.slice`,
    `kubepods-burstable-pod${id}.slice`,
    `kubepods-besteffort-pod${id}.slice`,
  ];
}

/**
 * A pod's cgroup from one of its containers' cgroups (the kubelet nests containers directly in
 * it). The parent must be named for this pod's UID, as the kubelet names it: a container path
 * from the runtime that points elsewhere (another pod's cgroup, a QoS or node-level cgroup) is
 * refused with an Error rather than resized as if it were the pod's.
 */
export function podCgroupFromContainer(containerCgroupPath: string, podUid: string): string {
  const parent = dirname(containerCgroupPath);
  const name = basename(parent);
  if (podUid === '' || !podCgroupNames(podUid).includes(name)) {
    throw new Error(
      `pod cgroup: the parent ${parent} of container cgroup ${containerCgroupPath} is not the cgroup of pod ${podUid || '(no UID)'}`,
    );
  }
  return parent;
}

/** A pod cgroup's values and memory usage. */
export interface PodCgroupReading extends PodCgroupValues {
  readonly memoryUsageInBytes: bigint;
  readonly raw: CgroupReading;
}

export async function readPodCgroup(path: string, options: PodCgroupOptions): Promise<PodCgroupReading> {
  const raw = await readCgroup(path, options);
  return {
    cpuShares: raw.cpuShares ?? cpuWeightToShares(raw.cpuWeight ?? 1n),
    cpuQuota: raw.cpuQuota,
    cpuPeriod: raw.cpuPeriod,
    memoryLimitInBytes: raw.memoryLimitInBytes,
    memoryUsageInBytes: raw.memoryUsageInBytes,
    raw,
  };
}

async function write(file: string, text: string): Promise<void> {
  try {
    await writeFile(file, text);
  } catch (err) {
    throw new Error(`pod cgroup: writing ${JSON.stringify(text)} to ${file}: ${errorMessage(err)}`, { cause: err });
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** v1: the memsw limit, when the node has one and it is set (-1 / page-counter max = none). */
async function readMemsw(file: string): Promise<bigint | undefined> {
  try {
    const value = BigInt((await readFile(file, 'utf8')).trim());
    return value >= 1n << 62n ? undefined : value;
  } catch {
    return undefined;
  }
}

/**
 * Write the given values (others are left alone) to the pod cgroup at `path`. -1 is unlimited.
 * v1: cpu.shares, cpu.cfs_quota_us, cpu.cfs_period_us, memory.limit_in_bytes under
 * <root>/<controller>/…; v2: cpu.weight (the kubelet's linear shares map), cpu.max, memory.max
 * under <root>/….
 * Throws an Error naming the file (cause: the fs error) when the kernel refuses a value.
 */
export async function writePodCgroup(
  path: string,
  values: Partial<PodCgroupValues>,
  options: PodCgroupOptions,
): Promise<void> {
  if (options.version === 2) await writeV2(path, values, options);
  else await writeV1(path, values, options.root);
}

async function writeV2(path: string, values: Partial<PodCgroupValues>, options: PodCgroupOptions): Promise<void> {
  const dir = cgroupDir(options.root, undefined, path);
  if (values.memoryLimitInBytes !== undefined)
    await write(cgroupFile(dir, 'memory.max'), memoryMaxValue(values.memoryLimitInBytes));
  if (values.cpuShares !== undefined)
    await write(cgroupFile(dir, 'cpu.weight'), sharesToCpuWeight(values.cpuShares).toString());
  if (values.cpuQuota !== undefined || values.cpuPeriod !== undefined) {
    const current =
      values.cpuQuota === undefined || values.cpuPeriod === undefined ? await readCgroup(path, options) : undefined;
    await write(
      cgroupFile(dir, 'cpu.max'),
      cpuMaxValue(values.cpuQuota ?? current?.cpuQuota ?? -1n, values.cpuPeriod ?? current?.cpuPeriod),
    );
  }
}

async function writeV1(path: string, values: Partial<PodCgroupValues>, root: string): Promise<void> {
  const cpu = cgroupDir(root, 'cpu', path);
  if (values.memoryLimitInBytes !== undefined)
    await writeV1MemoryLimit(cgroupDir(root, 'memory', path), values.memoryLimitInBytes);
  if (values.cpuShares !== undefined) await write(cgroupFile(cpu, 'cpu.shares'), values.cpuShares.toString());
  if (values.cpuPeriod !== undefined) await write(cgroupFile(cpu, 'cpu.cfs_period_us'), values.cpuPeriod.toString());
  if (values.cpuQuota !== undefined)
    await write(cgroupFile(cpu, 'cpu.cfs_quota_us'), (values.cpuQuota <= 0n ? -1n : values.cpuQuota).toString());
}

/** A set memsw limit must stay >= the memory limit: raise it first, lower it after. */
async function writeV1MemoryLimit(memory: string, value: bigint): Promise<void> {
  const limit = value <= 0n ? -1n : value;
  const memswFile = cgroupFile(memory, 'memory.memsw.limit_in_bytes');
  const memsw = (await exists(memswFile)) ? await readMemsw(memswFile) : undefined;
  const growing = memsw !== undefined && (limit === -1n || limit > memsw);
  if (growing) await write(memswFile, limit.toString());
  await write(cgroupFile(memory, 'memory.limit_in_bytes'), limit.toString());
  if (memsw !== undefined && !growing && limit !== -1n && limit < memsw) await write(memswFile, limit.toString());
}

/**
 * Whether the node's kubelet gives containers a swap limit (the swap controller is present): v1
 * memory.memsw.limit_in_bytes at the root's memory hierarchy, v2 memory.swap.max in kubepods.
 */
export async function detectSwapController(root: string, version: CgroupVersion): Promise<boolean> {
  if (version === 1) return exists(join(root, 'memory', 'memory.memsw.limit_in_bytes'));
  return (
    (await exists(join(root, 'kubepods', 'memory.swap.max'))) || exists(join(root, 'kubepods.slice', 'memory.swap.max'))
  );
}
