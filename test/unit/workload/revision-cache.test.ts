import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { trimRevision } from '../../../src/workload/revision-store.js';
import type { ControllerRevision } from '../../../src/api/revision.js';
import { findEqualRevision, templateDigest } from '../../../src/workload/pure/revision.js';
import type { PodTemplate } from '../../../src/api/wire.js';

const template = (image: string, env: number): PodTemplate => ({
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [
      { name: 'app', image, env: Array.from({ length: env }, (_, i) => ({ name: `E${i}`, value: 'x'.repeat(100) })) },
    ],
  },
});
const revision = (name: string, number: number, t: PodTemplate): ControllerRevision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: {
    name,
    namespace: 'ns',
    uid: `uid-${name}`,
    creationTimestamp: '2026-11-26T00:00:00Z',
    managedFields: [{ manager: 'tailor', operation: 'Update' }],
    ownerReferences: [
      { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs', controller: true },
    ],
  },
  revision: number,
  data: { template: t },
});

// Issue 31.2: the controller's revision cache keeps digests, not templates.
describe('the revision cache keeps a digest and the size of each template, never the template', () => {
  it('drops the template and managed fields, keeping identity, owner, number, creation time and the template size', () => {
    const r = revision('web-1', 3, template('app:v1', 1000));
    const cached = trimRevision(r);
    expect(cached).toEqual({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name: 'web-1',
        namespace: 'ns',
        uid: 'uid-web-1',
        creationTimestamp: '2026-11-26T00:00:00Z',
        ownerReferences: r.metadata?.ownerReferences,
      },
      revision: 3,
      templateDigest: templateDigest(r.data?.template),
      // Its size, so a round knows what a template weighs before it fetches it (decision 81).
      templateChars: JSON.stringify(r.data?.template).length,
    });
    expect(JSON.stringify(cached).length).toBeLessThan(600);
  });

  it('is idempotent: a cached revision trimmed again keeps its digest', () => {
    const cached = trimRevision(revision('web-1', 1, template('app:v1', 1)));
    expect(trimRevision(cached)).toEqual(cached);
    // One trimmed before sizes were kept keeps its digest, its size unknown (a round takes the largest).
    const { templateChars: _size, ...digestOnly } = cached;
    expect(trimRevision(digestOnly)).toEqual(digestOnly);
  });

  it('finds the revision equal to a template by digest, whatever the key order, and no other', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a:v1', 'a:v2', 'b:v1'), { minLength: 1, maxLength: 6 }),
        fc.constantFrom('a:v1', 'a:v2', 'b:v1', 'c:v9'),
        (images, wanted) => {
          const summaries = images.map((image, i) => ({
            name: `r${i}`,
            revision: i + 1,
            data: trimRevision(revision(`r${i}`, i + 1, template(image, 2))).templateDigest ?? '',
          }));
          // The CloneSet's template, built with its keys in another order.
          const { spec, metadata } = template(wanted, 2);
          const found = findEqualRevision(summaries, templateDigest({ spec, metadata }));
          const newest = (images as string[]).lastIndexOf(wanted);
          expect(found?.name).toBe(newest < 0 ? undefined : `r${newest}`);
        },
      ),
    );
  });
});
