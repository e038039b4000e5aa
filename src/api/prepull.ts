// The node's image pre-pull report (docs/decisions/0052-images-pulled-before-the-drain.md): the
// annotation `apps.tailor.dev/pulled-images` the node agent keeps on its own Node, listing the
// images CloneSet pods on that node are about to run and how far their pull is. Its presence says
// an agent pre-pulls on that node (the controller waits for it only there); an image it does not
// list is one the agent has not seen yet.
// Owns: the annotation's name, shape, bounds and parse/encode, and the shape of a pull's credentials. Must not: do I/O or decide how long
// a rollout waits (inplace/prepull.ts does).
import { z } from 'zod';
import { parseAnnotation, type AnnotationValue } from './schemas.js';

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

/** At most this many images are reported per node; beyond it the controller waits out the timeout. */
export const MAX_REPORTED_IMAGES = 128;
const MAX_MESSAGE = 256;

const ImagePullSchema = z.object({
  state: z.enum(['Pulling', 'Pulled', 'Failed']),
  /** When the agent began this pull (RFC 3339). */
  since: z.iso.datetime({ offset: true }),
  message: z.string().max(MAX_MESSAGE).optional(),
});

export const PulledImagesSchema = z
  .record(z.string().min(1).max(512), ImagePullSchema)
  .refine((r) => Object.keys(r).length <= MAX_REPORTED_IMAGES, { message: `at most ${MAX_REPORTED_IMAGES} images` });

export type ImagePull = z.infer<typeof ImagePullSchema>;
export type PulledImages = z.infer<typeof PulledImagesSchema>;

export const parsePulledImages = (
  annotations: Readonly<Record<string, string>> | undefined,
): AnnotationValue<PulledImages> => parseAnnotation(annotations, ANNOTATION_PULLED_IMAGES, PulledImagesSchema);

/** The annotation's value: images in name order, each message cut to the bound, at most MAX_REPORTED_IMAGES. */
export function encodePulledImages(images: ReadonlyMap<string, ImagePull>): string {
  const out: PulledImages = {};
  for (const name of [...images.keys()].sort().slice(0, MAX_REPORTED_IMAGES)) {
    const pull = images.get(name) as ImagePull;
    out[name] =
      pull.message === undefined
        ? { state: pull.state, since: pull.since }
        : { ...pull, message: pull.message.slice(0, MAX_MESSAGE) };
  }
  return JSON.stringify(out);
}
