// Classifies every difference between two pod templates: what an in-place update can apply to a
// running pod (images of containers and native sidecars; pod labels and annotations), what a
// resize can apply (cpu/memory of containers, native sidecars and the pod itself), and everything
// else, named by field path, which only a recreate can apply (env, command, ports, volumes,
// probes, run-to-completion init containers, …). Native sidecars are init containers with
// `restartPolicy: Always`: the kubelet restarts one whose image changed and resizes it like a
// container. Pure. Must not: decide the strategy's outcome (plan.ts does) or look at pods.
import type * as k8s from '@kubernetes/client-node';
import type { PodTemplate, Wire } from '../../api/wire.js';
import { sameJSON } from '../../api/json.js';
import { isSidecar } from '../../api/pod.js';
import { isTailorOwnedAnnotation, isTailorOwnedLabel } from '../../api/types.js';

type Container = Wire<k8s.V1Container>;
type Resources = Wire<k8s.V1ResourceRequirements>;

export interface TemplateDiff {
  /** Container name → new image, for containers whose image changed. */
  images: Record<string, string>;
  /** Container name → new cpu/memory requests and limits, for containers whose cpu/memory changed. */
  resources: Record<string, Resources>;
  /** Label/annotation key → new value, or null to remove. */
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
  /** Fields that differ and cannot change on a running pod, e.g. "spec.containers[app].env". */
  recreateOnly: string[];
  /** Of the names in `images` and `resources`, those of native sidecars (spec.initContainers). */
  sidecars: string[];
  /** The pod-level cpu/memory (spec.resources) when only their values changed. */
  podResources?: Resources;
  /**
   * Container name → why it must restart although its image stays: the template's restart
   * annotation changed (a rolling restart), or its env reads a pod label or annotation through
   * the downward API that changed (the kubelet resolves env only when a container starts).
   */
  restarts: Record<string, string>;
}

/** The template annotation that asks for every container to restart (as `kubectl rollout restart` sets on a Deployment). */
export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

const same = sameJSON;

const RESIZABLE = ['cpu', 'memory'];

/**
 * Diffs by the pair of template objects. A rollout diffs the same two revisions' templates for
 * every pod of every round (half of a 1,000-pod round's CPU), and templates are values: they come
 * from ControllerRevisions, which nobody edits in place. Held weakly; the diffs are frozen.
 */
const diffs = new WeakMap<PodTemplate, WeakMap<PodTemplate, TemplateDiff>>();

export function diffTemplates(from: PodTemplate, to: PodTemplate): TemplateDiff {
  let byTarget = diffs.get(from);
  if (!byTarget) diffs.set(from, (byTarget = new WeakMap()));
  let diff = byTarget.get(to);
  if (!diff) {
    diff = freezeDiff(computeDiff(from, to));
    byTarget.set(to, diff);
  }
  return diff;
}

function freezeDiff(diff: TemplateDiff): TemplateDiff {
  for (const part of Object.values(diff)) Object.freeze(part);
  return Object.freeze(diff);
}

function computeDiff(from: PodTemplate, to: PodTemplate): TemplateDiff {
  const diff: TemplateDiff = {
    images: {},
    resources: {},
    labels: {},
    annotations: {},
    recreateOnly: [],
    sidecars: [],
    restarts: {},
  };
  // Tailor's own keys are never moved from a template to a pod (api/types.ts isTailorOwnedLabel).
  diff.labels = mapDiff(from.metadata?.labels, to.metadata?.labels, isTailorOwnedLabel);
  diff.annotations = mapDiff(from.metadata?.annotations, to.metadata?.annotations, isTailorOwnedAnnotation);

  const fromSpec = (from.spec ?? {}) as Record<string, unknown>;
  const toSpec = (to.spec ?? {}) as Record<string, unknown>;
  for (const key of new Set([...Object.keys(fromSpec), ...Object.keys(toSpec)])) {
    if (key === 'containers' || key === 'initContainers' || same(fromSpec[key], toSpec[key])) continue;
    if (key === 'resources') {
      const change = resourceChange(from.spec?.resources, to.spec?.resources);
      if (change === 'resize') diff.podResources = to.spec?.resources ?? {};
      else diff.recreateOnly.push(`spec.resources${change}`);
    } else {
      diff.recreateOnly.push(`spec.${key}`);
    }
  }
  diffContainerList('containers', from.spec?.containers ?? [], to.spec?.containers ?? [], diff);
  diffContainerList('initContainers', from.spec?.initContainers ?? [], to.spec?.initContainers ?? [], diff);
  if (diff.recreateOnly.length === 0) findRestarts(to, diff);
  return diff;
}

/** `metadata.labels['key']` / `metadata.annotations['key']` (or the whole map) a downward-API env reads. */
const FIELD_PATH = /^metadata\.(labels|annotations)(?:\['([^']+)'\])?$/;

/** Containers (and native sidecars) the change restarts although their image stays (see TemplateDiff.restarts). */
function findRestarts(to: PodTemplate, diff: TemplateDiff): void {
  const sidecars = (to.spec?.initContainers ?? []).filter(isSidecar);
  for (const container of [...(to.spec?.containers ?? []), ...sidecars]) {
    if (container.name in diff.images) continue;
    const why = restartReason(container, diff);
    if (why === undefined) continue;
    diff.restarts[container.name] = why;
    if (sidecars.includes(container) && !diff.sidecars.includes(container.name)) diff.sidecars.push(container.name);
  }
}

/**
 * The changed labels and annotations (new values; a removed key is left out) that restart a
 * container named in `diff.restarts`: the rolling restart's annotation, or the keys its env reads.
 */
export function restartingMetadata(
  container: Container | undefined,
  diff: TemplateDiff,
): { labels?: Record<string, string>; annotations?: Record<string, string> } {
  const picked = { labels: {} as Record<string, string>, annotations: {} as Record<string, string> };
  const pick = (kind: 'labels' | 'annotations', key: string | undefined): void => {
    const changed = diff[kind];
    for (const [k, v] of Object.entries(changed))
      if ((key === undefined || k === key) && v !== null) picked[kind][k] = v;
  };
  if (RESTARTED_AT_ANNOTATION in diff.annotations) pick('annotations', RESTARTED_AT_ANNOTATION);
  else {
    for (const env of container?.env ?? []) {
      const match = FIELD_PATH.exec(env.valueFrom?.fieldRef?.fieldPath ?? '');
      if (match) pick(match[1] as 'labels' | 'annotations', match[2]);
    }
  }
  return {
    ...(Object.keys(picked.labels).length > 0 ? { labels: picked.labels } : {}),
    ...(Object.keys(picked.annotations).length > 0 ? { annotations: picked.annotations } : {}),
  };
}

function restartReason(container: Container, diff: TemplateDiff): string | undefined {
  if (RESTARTED_AT_ANNOTATION in diff.annotations) return `rolling restart (${RESTARTED_AT_ANNOTATION})`;
  for (const env of container.env ?? []) {
    const match = FIELD_PATH.exec(env.valueFrom?.fieldRef?.fieldPath ?? '');
    if (!match) continue;
    const changed = match[1] === 'labels' ? diff.labels : diff.annotations;
    if (match[2] === undefined ? Object.keys(changed).length > 0 : match[2] in changed) {
      return `env ${env.name} reads ${env.valueFrom?.fieldRef?.fieldPath}, which changed`;
    }
  }
  return undefined;
}

function diffContainerList(
  list: 'containers' | 'initContainers',
  prev: readonly Container[],
  next: readonly Container[],
  diff: TemplateDiff,
): void {
  const names = (cs: readonly Container[]): string[] =>
    cs.map((c) => `${c.name}${list === 'initContainers' && isSidecar(c) ? '/sidecar' : ''}`);
  if (!same(names(prev), names(next))) {
    // Added, removed, reordered, or turned into or out of a sidecar: the pod's shape changes.
    diff.recreateOnly.push(`spec.${list}[*].${list === 'initContainers' ? 'name or restartPolicy' : 'name'}`);
    return;
  }
  next.forEach((container, i) => {
    const before = prev[i]!;
    if (list === 'containers' || isSidecar(container)) diffContainer(list, before, container, diff);
    else if (!same(before, container)) diff.recreateOnly.push(`spec.initContainers[${container.name}]`);
  });
}

function diffContainer(
  list: 'containers' | 'initContainers',
  prev: Container,
  next: Container,
  diff: TemplateDiff,
): void {
  const keys = new Set([...Object.keys(prev), ...Object.keys(next)]) as Set<keyof Container>;
  for (const key of keys) {
    if (same(prev[key], next[key])) continue;
    if (key === 'image') {
      diff.images[next.name] = next.image ?? '';
    } else if (key === 'resources') {
      const change = resourceChange(prev.resources, next.resources);
      if (change === 'resize') diff.resources[next.name] = next.resources ?? {};
      else diff.recreateOnly.push(`spec.${list}[${next.name}].resources${change}`);
    } else {
      diff.recreateOnly.push(`spec.${list}[${next.name}].${key}`);
    }
  }
  const touched = next.name in diff.images || next.name in diff.resources;
  if (list === 'initContainers' && touched) diff.sidecars.push(next.name);
}

/**
 * A resources change is a resize when only cpu/memory values change and every request and limit
 * that was set stays set (removing one, or adding one, changes more than a value). QoS-class
 * changes are judged later, against the pod (resize/ module).
 */
/** 'resize' when cpu/memory values changed in place, else the field that makes a recreate necessary. */
function resourceChange(prev: Resources | undefined, next: Resources | undefined): string {
  for (const part of ['requests', 'limits'] as const) {
    const a = prev?.[part] ?? {};
    const b = next?.[part] ?? {};
    for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (a[name] === b[name]) continue;
      if (!RESIZABLE.includes(name)) return `.${part}.${name}`;
      if (a[name] === undefined) return `.${part}.${name} (added)`;
      if (b[name] === undefined) return `.${part}.${name} (removed)`;
    }
  }
  if (!same(prev?.claims, next?.claims)) return '.claims';
  return 'resize';
}

function mapDiff(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
  owned: (key: string) => boolean,
): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(b ?? {})) if (a?.[k] !== v && !owned(k)) out[k] = v;
  for (const k of Object.keys(a ?? {})) if (!(k in (b ?? {})) && !owned(k)) out[k] = null;
  return out;
}
