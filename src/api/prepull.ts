// The node's image pre-pull report (docs/decisions/0052-images-pulled-before-the-drain.md): the
// annotation `apps.tailor.dev/pulled-images` the node agent keeps on its own Node, listing the
// images CloneSet pods on that node are about to run and how far their pull is. Its presence says
// an agent pre-pulls on that node (the controller waits for it only there); an image it does not
// list is one the agent has not seen yet. Its bounds (docs/decisions/0073-prepull-report-bounds.md):
// an entry for any image the CRD allows (MAX_IMAGE_LENGTH), at most MAX_REPORTED_IMAGES entries and
// MAX_REPORT_BYTES in all; the reader keeps every entry it can read and counts the others, so one
// bad entry never voids the report. Writer and reader check an entry with the same function.
// Owns: the annotation's name, shape, bounds and parse/encode, and the shape of a pull's credentials. Must not: do I/O or decide how long
// a rollout waits (inplace/pure/prepull.ts does).
import { z } from 'zod';
import { parseAnnotation } from './schemas.js';

/**
 * Registry credentials for one pull (CRI AuthConfig). No server address: the runtime parses one
 * as a URL and compares hosts (containerd refuses a bare `host:port`), and a pull's credentials
 * serve only the registry of that one image anyway.
 */
export interface RegistryAuth {
  readonly username: string;
  readonly password: string;
}

export const ANNOTATION_PULLED_IMAGES = 'apps.tailor.dev/pulled-images';

/** At most this many images are reported per node; beyond it the controller waits out the ack grace. */
export const MAX_REPORTED_IMAGES = 128;
/**
 * The longest image name an entry carries: the CRD's bound on a container's image
 * (crds/apps.tailor.dev_clonesets.yaml, `maxLength: 1024`), counted as the API server counts it,
 * in characters (Unicode code points), not UTF-16 units.
 */
export const MAX_IMAGE_LENGTH = 1024;
/**
 * The report's bound in bytes (UTF-8 of the annotation's value). A Node's annotations share 256 KiB
 * in all. An entry the agent writes (a name of up to 1,024 characters, a message of up to 256, a
 * time to the second) takes under 8 KiB even with every character escaped, so one always fits;
 * 128 entries naming 400-character images, without messages, fit together.
 */
export const MAX_REPORT_BYTES = 64 * 1024;
const MAX_MESSAGE = 256;

const ImagePullSchema = z.object({
  state: z.enum(['Pulling', 'Pulled', 'Failed']),
  /** When the agent began this pull (RFC 3339). */
  since: z.iso.datetime({ offset: true }),
  message: z.string().max(MAX_MESSAGE).optional(),
});

export type ImagePull = z.infer<typeof ImagePullSchema>;
/** The pulls by image name. The reader's objects have no prototype: an image named `constructor` is an entry like any other. */
export type PulledImages = Record<string, ImagePull>;

/** A report as read: the entries that could be read, how many could not, and why the first could not. */
export type PulledImagesValue =
  | { ok: true; value: PulledImages; dropped: number; droppedReason: string | undefined }
  | { ok: false; error: string }
  | { ok: false; error: undefined };

/** Whether `image` is a name an entry may carry: 1 to MAX_IMAGE_LENGTH code points. */
export function isReportableImage(image: string): boolean {
  if (image.length === 0) return false;
  // A code point is one or two UTF-16 units: count only when the units leave it open.
  if (image.length <= MAX_IMAGE_LENGTH) return true;
  if (image.length > 2 * MAX_IMAGE_LENGTH) return false;
  let codePoints = 0;
  for (const _ of image) codePoints++;
  return codePoints <= MAX_IMAGE_LENGTH;
}

/** A name for people: the first characters of an image, which may be 1,024 long. */
const shown = (image: string): string => JSON.stringify(image.length > 80 ? `${image.slice(0, 80)}…` : image);

/** One entry as the reader takes it (the writer checks what it writes the same way): its pull, or why not. */
export function readReportEntry(image: string, value: unknown): { pull: ImagePull } | { error: string } {
  if (!isReportableImage(image)) {
    return { error: `entry ${shown(image)}: an image name has 1 to ${MAX_IMAGE_LENGTH} characters` };
  }
  const parsed = ImagePullSchema.safeParse(value);
  if (parsed.success) return { pull: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  return { error: `entry ${shown(image)}${where}: ${issue?.message ?? 'invalid value'}` };
}

interface ReadReport {
  readonly value: PulledImages;
  readonly dropped: number;
  readonly droppedReason: string | undefined;
}

/** Every entry that can be read, up to MAX_REPORTED_IMAGES; the others are counted, never fatal. */
function readEntries(json: Readonly<Record<string, unknown>>): ReadReport {
  const value = Object.create(null) as PulledImages;
  let kept = 0;
  let dropped = 0;
  let droppedReason: string | undefined;
  for (const [image, entry] of Object.entries(json)) {
    const read =
      kept < MAX_REPORTED_IMAGES
        ? readReportEntry(image, entry)
        : { error: `entry ${shown(image)}: more than ${MAX_REPORTED_IMAGES} images` };
    if ('pull' in read) {
      value[image] = read.pull;
      kept++;
    } else {
      dropped++;
      droppedReason ??= read.error;
    }
  }
  return { value, dropped, droppedReason };
}

const isObject = (json: unknown): json is Record<string, unknown> =>
  typeof json === 'object' && json !== null && !Array.isArray(json);

/** The report as a whole: a JSON object (anything else is unreadable), read entry by entry. */
const ReportSchema = z
  .custom<Record<string, unknown>>(isObject, { message: 'must be a JSON object of images' })
  .transform(readEntries);

/**
 * Reads a node's report. Absent, not JSON, or not an object: not ok, as any annotation (the
 * controller then waits for nothing on that node). Otherwise ok, with every entry that can be read;
 * `dropped` counts those that cannot (a name over MAX_IMAGE_LENGTH, a value of the wrong shape, an
 * entry past MAX_REPORTED_IMAGES), which the controller treats as images not listed yet.
 */
export function parsePulledImages(annotations: Readonly<Record<string, string>> | undefined): PulledImagesValue {
  const read = parseAnnotation(annotations, ANNOTATION_PULLED_IMAGES, ReportSchema);
  return read.ok ? { ok: true, ...read.value } : read;
}

/** The pull a report lists for `image`, if any (own entries only, whatever object the report is). */
export const reportedPull = (report: PulledImages, image: string): ImagePull | undefined =>
  Object.hasOwn(report, image) ? report[image] : undefined;

/** One entry's JSON (`"image":{…}`), message cut to the bound; undefined when the reader would not take it. */
function encodeEntry(image: string, pull: ImagePull): string | undefined {
  const value: ImagePull =
    pull.message === undefined
      ? { state: pull.state, since: pull.since }
      : { state: pull.state, since: pull.since, message: pull.message.slice(0, MAX_MESSAGE) };
  if (!('pull' in readReportEntry(image, value))) return undefined;
  return `${JSON.stringify(image)}:${JSON.stringify(value)}`;
}

/**
 * The annotation's value: entries in image name order, each message cut to the bound, at most
 * MAX_REPORTED_IMAGES entries and MAX_REPORT_BYTES bytes. An entry the reader would refuse, or
 * one that no longer fits, is left out and the next is tried: the controller treats an image left
 * out as one the agent has not listed (it waits the ack grace, then drains).
 */
export function encodePulledImages(images: ReadonlyMap<string, ImagePull>): string {
  const entries: string[] = [];
  let bytes = 2; // the braces
  for (const image of [...images.keys()].sort()) {
    if (entries.length === MAX_REPORTED_IMAGES) break;
    const entry = encodeEntry(image, images.get(image) as ImagePull);
    if (entry === undefined) continue;
    const size = Buffer.byteLength(entry, 'utf8') + (entries.length > 0 ? 1 : 0); // and its comma
    if (bytes + size > MAX_REPORT_BYTES) continue;
    entries.push(entry);
    bytes += size;
  }
  return `{${entries.join(',')}}`;
}
