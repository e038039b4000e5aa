// What the node agent pulls ahead of a rollout (imagesToPrePull), with which credentials
// (registryAuthFor), and the node's report of it (nextReport)
// (docs/decisions/0052-images-pulled-before-the-drain.md).
// Pure. Must not: do I/O (agent/prepull.ts pulls, reads secrets and writes the report).
import { z } from 'zod';
import type { ImagePull, RegistryAuth } from '../../api/prepull.js';
import type { Pod } from '../../api/wire.js';
import { isLivePod } from '../../api/pod.js';
import { ownedIndexValue, workloadControllerOf } from '../../api/owner.js';
import { workloadOwner } from './authorize.js';
import type { ControllerRevision } from '../../api/revision.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../api/types.js';

export interface ImageWanted {
  readonly image: string;
  /** Where to find credentials: the first pod that wants the image. */
  readonly namespace: string;
  readonly pullSecrets: readonly string[];
}

// A revision counts only in its own namespace and only under a CloneSet controller reference
// (api/owner.ts), as the resize path checks it: anyone who can create a ControllerRevision elsewhere
// could otherwise name a victim's UID, number it 999, and have the victim's nodes pull images of
// their choice with the victim's pull secrets.

/** The newest revision of each CloneSet (by namespace and controller UID) among the cached revisions. */
function newestRevisions(revisions: readonly ControllerRevision[]): Map<string, ControllerRevision> {
  const newest = new Map<string, ControllerRevision>();
  for (const r of revisions) {
    const owner = workloadControllerOf(r);
    if (owner === undefined) continue;
    const key = ownedIndexValue(r.metadata?.namespace, owner.uid);
    const known = newest.get(key);
    if (known === undefined || (r.revision ?? 0) > (known.revision ?? 0)) newest.set(key, r);
  }
  return newest;
}

/** The revision a pod of a CloneSet will move to, when it is not on it already. */
function targetOf(pod: Pod, newest: ReadonlyMap<string, ControllerRevision>): ControllerRevision | undefined {
  const owner = workloadOwner(pod);
  const target = owner ? newest.get(ownedIndexValue(pod.metadata?.namespace, owner.uid)) : undefined;
  if (target === undefined || !isLivePod(pod)) return undefined;
  return target.metadata?.name === pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ? undefined : target;
}

/** The images of `target` that the pod's containers of the same names do not run. */
function changedImages(pod: Pod, target: ControllerRevision): string[] {
  const running = new Map(
    [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].map((c) => [c.name, c.image]),
  );
  const spec = target.data?.template?.spec;
  return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].flatMap((c) =>
    c.image && running.has(c.name) && running.get(c.name) !== c.image ? [c.image] : [],
  );
}

/**
 * Images the pods of this node will run once their CloneSets' rollouts reach them, by image: for
 * every CloneSet pod on this node that is not on its CloneSet's newest revision (the
 * highest-numbered one: a rollback renumbers the revision it reuses), the newest revision's images
 * that differ from the pod's, with the pod's namespace and imagePullSecrets; pods held back by
 * partition included.
 */
export function imagesToPrePull(
  pods: readonly Pod[],
  revisions: readonly ControllerRevision[],
): Map<string, ImageWanted> {
  const newest = newestRevisions(revisions);
  const wanted = new Map<string, ImageWanted>();
  for (const pod of pods) {
    const target = targetOf(pod, newest);
    if (target === undefined) continue;
    for (const image of changedImages(pod, target)) {
      if (wanted.has(image)) continue;
      const pullSecrets = (pod.spec?.imagePullSecrets ?? []).flatMap((s) => (s.name ? [s.name] : []));
      wanted.set(image, { image, namespace: pod.metadata?.namespace ?? '', pullSecrets });
    }
  }
  return wanted;
}

/** The next report: every wanted image with its pull's state; images no longer wanted leave it. */
export function nextReport(wanted: Iterable<string>, pulls: ReadonlyMap<string, ImagePull>): Map<string, ImagePull> {
  const report = new Map<string, ImagePull>();
  for (const image of wanted) {
    const pull = pulls.get(image);
    if (pull !== undefined) report.set(image, pull);
  }
  return report;
}

// ------------------------------------------------------------------ credentials

/** One `auths` entry of a kubernetes.io/dockerconfigjson (or the older dockercfg) secret. */
export interface DockerConfigEntry {
  readonly auth?: string;
  readonly username?: string;
  readonly password?: string;
}

export type DockerConfig = Readonly<Record<string, DockerConfigEntry>>;

const EntrySchema = z.object({
  auth: z.string().max(4096).optional(),
  username: z.string().max(1024).optional(),
  password: z.string().max(4096).optional(),
});
const AuthsSchema = z.record(z.string().max(512), EntrySchema);
const SecretSchema = z.object({
  type: z.string().optional(),
  data: z.record(z.string(), z.string()).optional(),
});

/**
 * The registry credentials of an image pull secret (kubernetes.io/dockerconfigjson: `{"auths": …}`
 * under `.dockerconfigjson`; kubernetes.io/dockercfg: the entries under `.dockercfg`); undefined
 * for any other secret or a value that does not parse.
 */
export function parseDockerConfigSecret(secret: unknown): DockerConfig | undefined {
  const parsed = SecretSchema.safeParse(secret);
  if (!parsed.success) return undefined;
  const data = parsed.data.data ?? {};
  const json = data['.dockerconfigjson'] ?? data['.dockercfg'];
  if (json === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(json, 'base64').toString('utf8'));
    const auths = AuthsSchema.safeParse(
      data['.dockerconfigjson'] !== undefined ? (value as { auths?: unknown } | null)?.auths : value,
    );
    return auths.success ? auths.data : undefined;
  } catch {
    return undefined;
  }
}

interface Location {
  readonly host: string;
  readonly port: string;
  readonly path: string;
}

/** The registry location of an image reference: docker.io for a bare name, as the runtime resolves it. */
export function imageLocation(image: string): Location {
  const name = image.split('@')[0] ?? '';
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  const hasRegistry = first.includes('.') || first.includes(':') || first === 'localhost';
  const registry = hasRegistry ? first : 'docker.io';
  let path = hasRegistry ? name.slice(slash + 1) : name;
  path = path.replace(/:[^/]*$/, ''); // the tag
  if (!hasRegistry && !path.includes('/')) path = `library/${path}`;
  const [host = '', port = ''] = registry.split(':');
  return { host: host.toLowerCase(), port, path };
}

/** A dockerconfig key as a location: scheme and trailing slash dropped; Docker Hub's legacy key is docker.io. */
function keyLocation(key: string): Location {
  let k = key.replace(/^[a-z]+:\/\//, '').replace(/\/+$/, '');
  if (k === 'index.docker.io/v1' || k === 'index.docker.io' || k === 'registry-1.docker.io') k = 'docker.io';
  const slash = k.indexOf('/');
  const registry = slash < 0 ? k : k.slice(0, slash);
  const [host = '', port = ''] = registry.split(':');
  return { host: host.toLowerCase(), port, path: slash < 0 ? '' : k.slice(slash + 1) };
}

function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.split('.');
  const h = host.split('.');
  return (
    p.length === h.length &&
    p.every((label, i) => label === h[i] || (label.startsWith('*') && h[i]?.endsWith(label.slice(1))))
  );
}

function matches(key: Location, image: Location): boolean {
  if (!hostMatches(key.host, image.host) || key.port !== image.port) return false;
  return key.path === '' || image.path === key.path || image.path.startsWith(`${key.path}/`);
}

/**
 * The credential for `image` from the pod's pull secrets in order, the most specific key first;
 * none when nothing matches. Keys match as the kubelet matches them: registry host, a `*.`
 * wildcard label, port, path prefix; docker.io for a bare name.
 */
export function registryAuthFor(image: string, configs: readonly DockerConfig[]): RegistryAuth | undefined {
  const target = imageLocation(image);
  for (const config of configs) {
    const keys = Object.keys(config)
      .filter((k) => matches(keyLocation(k), target))
      .sort((a, b) => keyLocation(b).path.length - keyLocation(a).path.length || b.length - a.length);
    const entry = keys[0] === undefined ? undefined : config[keys[0]];
    if (entry === undefined) continue;
    if (entry.username !== undefined || entry.password !== undefined) {
      return { username: entry.username ?? '', password: entry.password ?? '' };
    }
    if (entry.auth !== undefined) {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
  }
  return undefined;
}
