// Where a cgroup file lives on disk, checked. Every file the agent reads or writes in the cgroup
// tree is named here from three parts: the configured root (--cgroup-root), an optional v1
// hierarchy ("cpu", "memory"), the cgroup path below it (from the runtime, /proc or the kubelet's
// naming) and a file name. A cgroup path comes from outside the agent (a container's runtime
// spec, a pod UID), so it is refused when it has a ".." or "." segment, a NUL, or is not absolute,
// and the joined result is checked to stay below the root.
// Owns: that check. Must not: touch the filesystem (no realpath: cgroupfs has no symlinks, and a
// root that is a symlink is the operator's choice).
import { isAbsolute, join, relative, sep } from 'node:path';

export class CgroupPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CgroupPathError';
  }
}

const HIERARCHIES = new Set(['cpu', 'memory']);

function checkCgroupPath(path: string): void {
  if (path.includes('\0')) throw new CgroupPathError(`cgroup path ${JSON.stringify(path)} contains a NUL byte`);
  if (!path.startsWith('/')) throw new CgroupPathError(`cgroup path ${JSON.stringify(path)} is not absolute`);
  for (const segment of path.split('/')) {
    if (segment === '..' || segment === '.')
      throw new CgroupPathError(`cgroup path ${JSON.stringify(path)} has a "${segment}" segment`);
  }
}

/** Throws CgroupPathError unless `resolved` is `root` or below it. */
export function assertUnderRoot(root: string, resolved: string): void {
  const rel = relative(root, resolved);
  if (rel === '') return;
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new CgroupPathError(`${resolved} is outside the cgroup root ${root}`);
  }
}

/**
 * The directory of cgroup `path` under `root` (in v1 `hierarchy` when given). Throws
 * CgroupPathError when the path is not a plain absolute cgroup path or would leave the root.
 */
export function cgroupDir(root: string, hierarchy: string | undefined, path: string): string {
  checkCgroupPath(path);
  if (hierarchy !== undefined && !HIERARCHIES.has(hierarchy))
    throw new CgroupPathError(`unknown cgroup v1 hierarchy ${JSON.stringify(hierarchy)}`);
  const dir = hierarchy === undefined ? join(root, path) : join(root, hierarchy, path);
  assertUnderRoot(root, dir);
  return dir;
}

/** A file (a plain name, no "/") in the cgroup directory `dir` from cgroupDir. */
export function cgroupFile(dir: string, name: string): string {
  if (name === '' || name.includes('/') || name.includes('\0') || name === '..' || name === '.') {
    throw new CgroupPathError(`${JSON.stringify(name)} is not a cgroup file name`);
  }
  return join(dir, name);
}
