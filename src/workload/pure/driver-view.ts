// A pod template as a driver built on older Kubernetes API types sees it (decision 97): the
// template decoded into the field tree of those types (generated from them:
// kruise-rollout-fields.generated.ts), so fields newer than its release drop out, and compared as
// apimachinery's semantic equality compares: absent, null and a zero value are alike unless the
// field is a pointer, nil and empty lists or maps are alike, quantities compare by value.
// Pure. Must not: know which driver drives a workload, or decide what a round does.
import { parseQuantity, toMilli } from '../../api/quantity.js';

/**
 * A type's fields by JSON name, each a form: a struct's name, `[]` or `map:` before an element's
 * form, `*` before a pointer's, or a leaf (`scalar`, `quantity`, `raw`).
 */
export interface FieldTree {
  readonly root: string;
  readonly structs: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

type Seen = unknown;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isZero = (v: unknown): boolean => v === undefined || v === null || v === '' || v === 0 || v === false;

/** A quantity by value (in milli-units), or the text itself when it does not parse. */
function quantityOf(v: unknown): Seen {
  if (typeof v === 'number') return String(BigInt(Math.round(v * 1000)));
  if (typeof v !== 'string') return v;
  try {
    return String(toMilli(parseQuantity(v)));
  } catch {
    return v;
  }
}

/** The value as the driver decodes it; undefined where it decodes to a zero value. */
function decode(tree: FieldTree, form: string, v: unknown): Seen {
  for (const [prefix, wrapped] of WRAPPERS)
    if (form.startsWith(prefix)) return wrapped(tree, form.slice(prefix.length), v);
  if (form === 'raw') return v ?? undefined;
  if (isZero(v)) return undefined;
  if (form === 'quantity') return quantityOf(v);
  return form === 'scalar' ? v : decodeStruct(tree, form, v);
}

/** A pointer is nil only when absent or null: a zero value it points to is still there. */
const decodePointer = (tree: FieldTree, inner: string, v: unknown): Seen =>
  v === undefined || v === null ? undefined : (decode(tree, inner, v) ?? null);

/** nil and empty alike; an element keeps its place (a zero one is null). */
function decodeList(tree: FieldTree, element: string, v: unknown): Seen {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  return v.map((e) => decode(tree, element, e) ?? null);
}

function decodeMap(tree: FieldTree, element: string, v: unknown): Seen {
  if (!isObject(v) || Object.keys(v).length === 0) return undefined;
  return Object.fromEntries(Object.entries(v).map(([k, e]) => [k, decode(tree, element, e) ?? null]));
}

const WRAPPERS: readonly (readonly [string, (tree: FieldTree, inner: string, v: unknown) => Seen])[] = [
  ['*', decodePointer],
  ['[]', decodeList],
  ['map:', decodeMap],
];

function decodeStruct(tree: FieldTree, name: string, v: unknown): Seen {
  const fields = tree.structs[name];
  if (fields === undefined || !isObject(v)) return undefined;
  const out: Record<string, Seen> = {};
  for (const [key, form] of Object.entries(fields)) {
    const seen = decode(tree, form, v[key]);
    if (seen !== undefined) out[key] = seen;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

function equal(a: Seen, b: Seen): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) && isObject(b)) {
    return keysOf(a, b).every((k) => equal(a[k], b[k]));
  }
  return false;
}

/** The template as `tree`'s types decode it, without `ignoredLabels` (a driver's own hash labels). */
export function driverView(tree: FieldTree, template: unknown, ignoredLabels: readonly string[] = []): Seen {
  if (!isObject(template) || ignoredLabels.length === 0) return decode(tree, tree.root, template);
  const metadata = isObject(template.metadata) ? template.metadata : {};
  const labels = isObject(metadata.labels) ? { ...metadata.labels } : undefined;
  for (const key of ignoredLabels) if (labels) delete labels[key];
  return decode(tree, tree.root, { ...template, metadata: { ...metadata, labels } });
}

/** True when a driver on `tree`'s types sees no difference between two templates. */
export const sameForDriver = (
  tree: FieldTree,
  a: unknown,
  b: unknown,
  ignoredLabels: readonly string[] = [],
): boolean => equal(driverView(tree, a, ignoredLabels), driverView(tree, b, ignoredLabels));

/**
 * Where two templates differ in fields `tree`'s types do not have (`spec.resources`,
 * `spec.containers[0].resizePolicy`): what such a driver cannot see of a change. At most `limit`.
 */
export function invisibleChanges(tree: FieldTree, a: unknown, b: unknown, limit = 5): string[] {
  const walk: Walk = { tree, out: [], limit };
  walkInvisible(walk, tree.root, [a, b], '');
  return walk.out;
}

interface Walk {
  readonly tree: FieldTree;
  readonly out: string[];
  readonly limit: number;
}
type Pair = readonly [unknown, unknown];

function walkInvisible(walk: Walk, form: string, [a, b]: Pair, path: string): void {
  const inner = form.replace(/^\*/, '');
  if (walk.out.length >= walk.limit) return;
  if (inner.startsWith('[]')) walkList(walk, inner.slice(2), [a, b], path);
  else if (inner.startsWith('map:')) walkMap(walk, inner.slice(4), [a, b], path);
  else if (isObject(a) && isObject(b)) walkStruct(walk, walk.tree.structs[inner] ?? {}, [a, b], path);
}

function walkList(walk: Walk, element: string, [a, b]: Pair, path: string): void {
  const [x, y] = [Array.isArray(a) ? a : [], Array.isArray(b) ? b : []];
  for (let i = 0; i < Math.max(x.length, y.length); i++) walkInvisible(walk, element, [x[i], y[i]], `${path}[${i}]`);
}

function walkMap(walk: Walk, element: string, [a, b]: Pair, path: string): void {
  const [x, y] = [isObject(a) ? a : {}, isObject(b) ? b : {}];
  for (const k of keysOf(x, y)) walkInvisible(walk, element, [x[k], y[k]], `${path}[${k}]`);
}

function walkStruct(
  walk: Walk,
  fields: Readonly<Record<string, string>>,
  [a, b]: readonly [Record<string, unknown>, Record<string, unknown>],
  path: string,
): void {
  for (const key of keysOf(a, b)) {
    const at = path ? `${path}.${key}` : key;
    const form = fields[key];
    if (form !== undefined) walkInvisible(walk, form, [a[key], b[key]], at);
    else if (!equal(a[key], b[key]) && walk.out.length < walk.limit) walk.out.push(at);
  }
}

const keysOf = (a: Record<string, unknown>, b: Record<string, unknown>): string[] =>
  [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
