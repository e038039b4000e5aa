// Schemas for the JSON annotations Tailor reads back from pods (docs/architecture.md §4.5 Pod-level names): anyone who can
// patch a pod can write them, so they are parsed, never cast. A value that does not fit is an
// error naming the annotation and the first field that is wrong; callers treat it as absent and
// report it on the pod. Owns the shapes only. Must not: do I/O or decide what an invalid value
// means for a rollout.
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { parseQuantity } from './quantity.js';
import {
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_RESIZE_REQUEST,
  ANNOTATION_RESIZE_STATUS,
  ANNOTATION_RESTART_REQUEST,
} from './types.js';
import { errorMessage } from './errors.js';

const nonNegativeInt = z.number().int().nonnegative();

/** `apps.tailor.dev/inplace-update-state`: the last in-place update applied to a pod. */
export const InPlaceUpdateStateSchema = z.object({
  revision: z.string().min(1),
  updateTimestamp: z.iso.datetime({ offset: true }),
  lastContainerImageIDs: z.record(z.string(), z.string()).optional(),
  lastRestartCounts: z.record(z.string(), nonNegativeInt).optional(),
  changed: z.record(z.string(), z.array(z.enum(['image', 'resources', 'restart']))).optional(),
  resizeGeneration: nonNegativeInt.optional(),
  resizeRefused: z
    .object({ cause: z.string().min(1).max(64), message: z.string().max(1024), at: z.iso.datetime({ offset: true }) })
    .optional(),
  containerBatchesRecord: z
    .array(z.object({ timestamp: z.iso.datetime({ offset: true }), containers: z.array(z.string()) }))
    .optional(),
  nextContainerImages: z.record(z.string(), z.string()).optional(),
  nextContainerResources: z
    .record(
      z.string(),
      z.object({
        requests: z.record(z.string(), z.string()).optional(),
        limits: z.record(z.string(), z.string()).optional(),
        claims: z.array(z.object({ name: z.string(), request: z.string().optional() })).optional(),
      }),
    )
    .optional(),
  nextContainerRefMetadata: z
    .record(
      z.string(),
      z.object({
        labels: z.record(z.string(), z.string()).optional(),
        annotations: z.record(z.string(), z.string()).optional(),
      }),
    )
    .optional(),
});

const isQuantity = (value: string): boolean => {
  try {
    parseQuantity(value);
    return true;
  } catch {
    return false;
  }
};
const quantity = z
  .string()
  .min(1)
  .refine(isQuantity, {
    error: (issue) => `${JSON.stringify(issue.input)} is not a Kubernetes quantity (such as 250m or 128Mi)`,
  });
const cpuMemory = z.strictObject({ cpu: quantity.optional(), memory: quantity.optional() });
const containerResources = z.strictObject({ requests: cpuMemory.optional(), limits: cpuMemory.optional() });

/** `apps.tailor.dev/resize-request`: the cpu/memory the controller asks the node agent for. */
export const ResizeRequestSchema = z.object({
  revision: z.string().min(1),
  containers: z
    .record(z.string(), containerResources)
    .refine((c) => Object.keys(c).length > 0, { message: 'must name at least one container' }),
});

/** `apps.tailor.dev/restart-request`: containers the node agent stops once so the kubelet restarts them. */
export const RestartRequestSchema = z.object({
  revision: z.string().min(1),
  containers: z
    .record(z.string().max(63), z.string().min(1).max(256))
    .refine((c) => Object.keys(c).length > 0 && Object.keys(c).length <= 64, {
      message: 'must name 1 to 64 containers',
    }),
});

/** `apps.tailor.dev/resize-status`: the node agent's answer. */
export const ResizeStatusSchema = z.object({
  revision: z.string(),
  state: z.enum(['', 'Proposed', 'InProgress', 'Deferred', 'Infeasible']),
  reason: z.string().optional(),
  message: z.string().optional(),
  since: z.string().min(1),
  applied: z.record(z.string(), containerResources.extend({ containerID: z.string().optional() })).optional(),
});

/** The outcome of reading one annotation: absent, a value that fits, or why it does not. */
export type AnnotationValue<T> =
  { ok: true; value: T } | { ok: false; error: string } | { ok: false; error: undefined };

/**
 * Reads annotation `name` as JSON checked against `schema`. Absent → `{ok: false, error:
 * undefined}`; unparseable or the wrong shape → `{ok: false, error}` with a message for people.
 */
export function parseAnnotation<T>(
  annotations: Readonly<Record<string, string>> | undefined,
  name: string,
  schema: z.ZodType<T>,
): AnnotationValue<T> {
  const raw = annotations?.[name];
  if (annotations === undefined || raw === undefined) return { ok: false, error: undefined };
  // Every reconcile reads every pod's annotations, mostly unchanged since the last round: a cached
  // pod's annotations are one object per version, never written (decision 32), so its values are
  // parsed once per object; and each distinct text once across objects (one schema per annotation
  // name). Callers never mutate the values.
  const ofRecord = parsedByRecord.get(annotations);
  const here = ofRecord?.get(name);
  // The text is compared too: a record someone did write must not answer for its old text.
  if (here?.raw === raw) return here.parsed as AnnotationValue<T>;
  const key = `${name}\u0000${raw}`;
  let parsed = parsedTexts.get(key) as AnnotationValue<T> | undefined;
  if (!parsed) {
    parsed = parseText(name, raw, schema);
    parsedTexts.set(key, parsed);
  }
  if (ofRecord) ofRecord.set(name, { raw, parsed });
  else parsedByRecord.set(annotations, new Map([[name, { raw, parsed }]]));
  return parsed;
}

const parsedByRecord = new WeakMap<object, Map<string, { raw: string; parsed: AnnotationValue<unknown> }>>();

/**
 * Parsed annotation texts by name and text; bounded by count and by the characters of the texts
 * it keys on (an annotation value may be 256 KiB), so forged or churning values cannot grow it.
 */
const parsedTexts = new LRUCache<string, AnnotationValue<unknown>>({
  max: 20_000,
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (_value, key) => Math.max(1, key.length),
});

/** Starts what a cache keeps of an annotation value beyond its bound (notKeptAnnotation); never valid JSON. */
const NOT_KEPT = '\u0000not kept:';

/**
 * What a cache keeps in place of an annotation value longer than it keeps (`bound` characters):
 * its length, never part of it. Read back, it is an error that says so (parseAnnotation), so a
 * value nobody kept is refused, never guessed from a part (decision 74).
 */
export const notKeptAnnotation = (chars: number, bound: number): string => `${NOT_KEPT}${chars}/${bound}`;

function notKeptError(name: string, raw: string): string | undefined {
  if (!raw.startsWith(NOT_KEPT)) return undefined;
  const [chars = '?', bound = '?'] = raw.slice(NOT_KEPT.length).split('/');
  return `${name} is ${chars} characters, more than the ${bound} kept of it`;
}

function parseText<T>(name: string, raw: string, schema: z.ZodType<T>): AnnotationValue<T> {
  const notKept = notKeptError(name, raw);
  if (notKept !== undefined) return { ok: false, error: notKept };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    return { ok: false, error: `${name} is not JSON: ${errorMessage(err)}` };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  return { ok: false, error: `${name}${where}: ${issue?.message ?? 'invalid value'}` };
}

type Annotations = Readonly<Record<string, string>> | undefined;

export type ParsedInPlaceUpdateState = z.infer<typeof InPlaceUpdateStateSchema>;
export type ParsedResizeRequest = z.infer<typeof ResizeRequestSchema>;
export type ParsedResizeStatus = z.infer<typeof ResizeStatusSchema>;
export type ParsedRestartRequest = z.infer<typeof RestartRequestSchema>;

export const parseInPlaceUpdateState = (annotations: Annotations): AnnotationValue<ParsedInPlaceUpdateState> =>
  parseAnnotation(annotations, ANNOTATION_INPLACE_UPDATE_STATE, InPlaceUpdateStateSchema);
export const parseResizeRequest = (annotations: Annotations): AnnotationValue<ParsedResizeRequest> =>
  parseAnnotation(annotations, ANNOTATION_RESIZE_REQUEST, ResizeRequestSchema);
export const parseRestartRequest = (annotations: Annotations): AnnotationValue<ParsedRestartRequest> =>
  parseAnnotation(annotations, ANNOTATION_RESTART_REQUEST, RestartRequestSchema);
export const parseResizeStatus = (annotations: Annotations): AnnotationValue<ParsedResizeStatus> =>
  parseAnnotation(annotations, ANNOTATION_RESIZE_STATUS, ResizeStatusSchema);
