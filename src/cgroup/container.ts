// Reads a container's actuated cpu/memory values from the node's cgroup filesystem (v1 and v2), so
// the agent can tell what is really applied, whatever the runtime reports. Owns: finding the
// container's cgroup and parsing its files, every file named through path.ts (so a path from the
// runtime cannot leave the cgroup root). Must not: write cgroups (resizes go through CRI
// UpdateContainerResources; the pod-level cgroup is the agent's), decide anything, or retry.
import { readFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import type { CgroupVersion } from '../api/node.js';
import type { Labels } from '../api/wire.js';
import type { CriClient } from '../cri/client.js';
import { cgroupDir, cgroupFile } from './path.js';

export const DEFAULT_CGROUP_ROOT = '/sys/fs/cgroup';
/** v1 reports "no limit" as the page-counter maximum (0x7FFFFFFFFFFFF000 with 4 KiB pages); anything this large is unlimited. */
const V1_UNLIMITED_FLOOR = 1n << 62n;

/** Values use the CRI/runc convention: -1 is unlimited (v1 cfs_quota_us -1 and the kernel's page-counter maximum, v2 "max"). */
export interface CgroupReading {
  readonly version: CgroupVersion;
  /** The cgroup below the hierarchy root, e.g. "/kubepods/pod<uid>/<id>". */
  readonly path: string;
  /** v1 cpu.shares; undefined on v2. */
  readonly cpuShares: bigint | undefined;
  /** v2 cpu.weight; undefined on v1. */
  readonly cpuWeight: bigint | undefined;
  /** CFS quota in µs, -1 = unlimited. */
  readonly cpuQuota: bigint;
  /** CFS period in µs. */
  readonly cpuPeriod: bigint;
  /** Memory limit in bytes, -1 = unlimited. */
  readonly memoryLimitInBytes: bigint;
  /** v1: memory+swap limit (memory.memsw.limit_in_bytes); v2: swap alone (memory.swap.max); -1 = unlimited; undefined when the node has no swap controller. */
  readonly memorySwapLimitInBytes: bigint | undefined;
  /** Current usage including page cache, as the kubelet reads it (v1 memory.usage_in_bytes, v2 memory.current). */
  readonly memoryUsageInBytes: bigint;
}

export interface CgroupFsOptions {
  /** Where the host's cgroup filesystem is mounted; DEFAULT_CGROUP_ROOT. */
  readonly root?: string;
  /** Skip detection. */
  readonly version?: CgroupVersion;
}

/** v2 when the root itself is a cgroup2 mount (it has cgroup.controllers); v1 (legacy or hybrid) otherwise. */
export async function detectCgroupVersion(root: string = DEFAULT_CGROUP_ROOT): Promise<CgroupVersion> {
  try {
    await access(join(root, 'cgroup.controllers'));
    return 2;
  } catch {
    return 1;
  }
}

/** runc's systemd ExpandSlice: "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice"; "-.slice" -> "/". */
export function expandSlice(slice: string): string {
  const suffix = '.slice';
  if (!slice.endsWith(suffix) || slice.length <= suffix.length || slice.includes('/')) {
    throw new Error(`cgroup: ${JSON.stringify(slice)} is not a systemd slice name`);
  }
  const name = slice.slice(0, -suffix.length);
  if (name === '-') return '/';
  let path = '';
  let prefix = '';
  for (const component of name.split('-')) {
    if (component === '') throw new Error(`cgroup: ${JSON.stringify(slice)} is not a valid systemd slice name`);
    path += `/${prefix}${component}${suffix}`;
    prefix += `${component}-`;
  }
  return path;
}

/**
 * The cgroup path for an OCI linux.cgroupsPath: cgroupfs paths ("/a/b") are used as they are;
 * systemd's "parent.slice:prefix:name" becomes "<expanded parent>/<prefix>-<name>.scope" (a name
 * that is itself a ".slice" is used as is), as runc does.
 */
export function cgroupPathFromSpec(cgroupsPath: string): string {
  if (cgroupsPath.startsWith('/')) return cgroupsPath;
  const parts = cgroupsPath.split(':');
  if (parts.length !== 3) {
    throw new Error(`cgroup: ${JSON.stringify(cgroupsPath)} is neither a cgroupfs path nor "slice:prefix:name"`);
  }
  const [parent = '', prefix = '', name = ''] = parts;
  const unit = name.endsWith('.slice') ? name : `${prefix}-${name}.scope`;
  const parentPath = expandSlice(parent === '' ? 'system.slice' : parent);
  return `${parentPath === '/' ? '' : parentPath}/${unit}`;
}

/** The cgroup of a process from /proc/<pid>/cgroup text: the v2 line ("0::/path") or the v1 cpu line. */
export function parseProcCgroup(text: string, version: CgroupVersion): string {
  for (const line of text.split('\n')) {
    const [id, controllers, ...rest] = line.split(':');
    const path = rest.join(':');
    if (id === undefined || controllers === undefined || path === '') continue;
    if (version === 2 && id === '0' && controllers === '') return path;
    if (version === 1 && controllers.split(',').includes('cpu')) return path;
  }
  throw new Error(`cgroup: no ${version === 2 ? 'unified' : 'cpu'} hierarchy in /proc/<pid>/cgroup`);
}

interface ContainerdInfo {
  readonly pid?: number;
  readonly runtimeSpec?: { readonly linux?: { readonly cgroupsPath?: string } };
}

/** containerd's verbose ContainerStatus info: info["info"] is JSON with pid and runtimeSpec. */
export function parseContainerdInfo(info: Labels): ContainerdInfo {
  const raw = info['info'];
  if (raw === undefined) {
    throw new Error('cgroup: the runtime returned no verbose info (is it containerd, and was verbose asked for?)');
  }
  try {
    return JSON.parse(raw) as ContainerdInfo;
  } catch (err) {
    throw new Error("cgroup: the runtime's verbose info is not JSON", { cause: err });
  }
}

async function readText(file: string): Promise<string> {
  return (await readFile(file, 'utf8')).trim();
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readText(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function parseInteger(text: string, file: string): bigint {
  if (!/^-?\d+$/.test(text)) throw new Error(`cgroup: ${file} holds ${JSON.stringify(text)}, not an integer`);
  return BigInt(text);
}

/** A v2 limit: "max" -> -1. */
function parseMax(text: string, file: string): bigint {
  return text === 'max' ? -1n : parseInteger(text, file);
}

/** A v1 byte limit: the page-counter maximum -> -1. */
function parseV1Limit(text: string, file: string): bigint {
  const value = parseInteger(text, file);
  return value >= V1_UNLIMITED_FLOOR ? -1n : value;
}

async function readV1(root: string, path: string): Promise<CgroupReading> {
  const cpu = cgroupDir(root, 'cpu', path);
  const memory = cgroupDir(root, 'memory', path);
  const file = (dir: string, name: string): string => cgroupFile(dir, name);
  const [shares, quota, period, limit, usage, memsw] = await Promise.all([
    readText(file(cpu, 'cpu.shares')),
    readText(file(cpu, 'cpu.cfs_quota_us')),
    readText(file(cpu, 'cpu.cfs_period_us')),
    readText(file(memory, 'memory.limit_in_bytes')),
    readText(file(memory, 'memory.usage_in_bytes')),
    readOptional(file(memory, 'memory.memsw.limit_in_bytes')),
  ]);
  return {
    version: 1,
    path,
    cpuShares: parseInteger(shares, file(cpu, 'cpu.shares')),
    cpuWeight: undefined,
    cpuQuota: parseInteger(quota, file(cpu, 'cpu.cfs_quota_us')),
    cpuPeriod: parseInteger(period, file(cpu, 'cpu.cfs_period_us')),
    memoryLimitInBytes: parseV1Limit(limit, file(memory, 'memory.limit_in_bytes')),
    memorySwapLimitInBytes:
      memsw === undefined ? undefined : parseV1Limit(memsw, file(memory, 'memory.memsw.limit_in_bytes')),
    memoryUsageInBytes: parseInteger(usage, file(memory, 'memory.usage_in_bytes')),
  };
}

async function readV2(root: string, path: string): Promise<CgroupReading> {
  const dir = cgroupDir(root, undefined, path);
  const file = (name: string): string => cgroupFile(dir, name);
  const [weight, max, memMax, current, swapMax] = await Promise.all([
    readText(file('cpu.weight')),
    readText(file('cpu.max')),
    readText(file('memory.max')),
    readText(file('memory.current')),
    readOptional(file('memory.swap.max')),
  ]);
  const [quota = '', period = ''] = max.split(/\s+/);
  return {
    version: 2,
    path,
    cpuShares: undefined,
    cpuWeight: parseInteger(weight, file('cpu.weight')),
    cpuQuota: parseMax(quota, file('cpu.max')),
    cpuPeriod: parseInteger(period, file('cpu.max')),
    memoryLimitInBytes: parseMax(memMax, file('memory.max')),
    memorySwapLimitInBytes: swapMax === undefined ? undefined : parseMax(swapMax, file('memory.swap.max')),
    memoryUsageInBytes: parseInteger(current, file('memory.current')),
  };
}

/** Read the cpu/memory files of the cgroup at `path` (below the hierarchy root). */
export async function readCgroup(path: string, options: CgroupFsOptions = {}): Promise<CgroupReading> {
  const root = options.root ?? DEFAULT_CGROUP_ROOT;
  const version = options.version ?? (await detectCgroupVersion(root));
  try {
    return version === 2 ? await readV2(root, path) : await readV1(root, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        `cgroup ${path} (v${version}) does not exist under ${root}: the container is not running, or the cgroup root is not the host's`,
        {
          cause: err,
        },
      );
    }
    throw err;
  }
}

export interface ContainerCgroupOptions extends CgroupFsOptions {
  /** Where the host's /proc is, for the pid fallback; "/proc". */
  readonly procRoot?: string;
}

/**
 * The cgroup path of a container, from the OCI runtime spec containerd created it with
 * (ContainerStatus(verbose) info["info"].runtimeSpec.linux.cgroupsPath), else from its pid. The
 * spec's path is the one runc was told to use, so it is right for both cgroup drivers: cgroupfs
 * gives "/<cgroup_parent>/<id>" (containerd joins the sandbox's cgroup_parent and the container
 * ID), systemd gives "<parent slice>:<prefix>:<name>", expanded the way runc does. It needs no
 * host PID namespace, unlike /proc/<pid>/cgroup, the fallback when the spec has no path (it also
 * gives the path the process is actually in; parseProcCgroup reads it).
 */
export async function containerCgroupPath(
  client: CriClient,
  containerId: string,
  options: ContainerCgroupOptions = {},
): Promise<string> {
  const { info } = await client.containerStatus(containerId, { verbose: true });
  const parsed = parseContainerdInfo(info);
  const specPath = parsed.runtimeSpec?.linux?.cgroupsPath;
  if (specPath !== undefined && specPath !== '') return cgroupPathFromSpec(specPath);
  if (parsed.pid !== undefined && parsed.pid > 0) {
    const version = options.version ?? (await detectCgroupVersion(options.root ?? DEFAULT_CGROUP_ROOT));
    const text = await readFile(join(options.procRoot ?? '/proc', String(parsed.pid), 'cgroup'), 'utf8');
    return parseProcCgroup(text, version);
  }
  throw new Error(`cgroup: container ${containerId} has neither a cgroupsPath in its runtime spec nor a running pid`);
}

/** A reader for applyContainerResources: the container's current cgroup values and usage. */
export function containerCgroupReader(
  client: CriClient,
  options: ContainerCgroupOptions = {},
): (containerId: string) => Promise<CgroupReading> {
  return async (containerId: string): Promise<CgroupReading> =>
    readCgroup(await containerCgroupPath(client, containerId, options), options);
}
