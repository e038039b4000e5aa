// Which workload a verb's argument names, as kubectl spells resources, and the pause patch each
// kind takes.
import { describe, expect, it } from '@jest/globals';
import { describeRef, kindOfObject, parseWorkloadRef } from '../../../../../src/cli/verbs/pure/workload-ref.js';
import { pausePatch } from '../../../../../src/cli/verbs/pure/revisions.js';

describe('the workload a verb argument names', () => {
  it.each([
    ['web', 'CloneSet', 'web', 'clone "web"'],
    ['cloneset/web', 'CloneSet', 'web', 'clone "web"'],
    ['clonesets.apps.tailor.dev/web', 'CloneSet', 'web', 'clone "web"'],
    ['clone/web', 'CloneSet', 'web', 'clone "web"'],
    ['ipsts/db', 'InPlaceStatefulSet', 'db', 'InPlaceStatefulSet "db"'],
    ['InPlaceStatefulSet/db', 'InPlaceStatefulSet', 'db', 'InPlaceStatefulSet "db"'],
    ['inplacestatefulsets.apps.tailor.dev/db', 'InPlaceStatefulSet', 'db', 'InPlaceStatefulSet "db"'],
  ])('%s is the %s %s', (arg, kind, name, called) => {
    const ref = parseWorkloadRef(arg);
    if ('error' in ref) throw new Error(ref.error);
    expect(ref.kind.owner.kind).toBe(kind);
    expect(ref.name).toBe(name);
    expect(describeRef(ref)).toBe(called);
  });

  it.each(['statefulset/db', 'sts/db', 'deployment/web', 'ipsts/', 'ipsts/db/x'])(
    '%s is refused with what to write',
    (arg) => {
      expect(parseWorkloadRef(arg)).toEqual({ error: expect.stringContaining('ipsts/db for an InPlaceStatefulSet') });
    },
  );
});

describe('the pause patch', () => {
  it.each([
    ['CloneSet', { spec: { updateStrategy: { paused: true } } }],
    ['InPlaceStatefulSet', { spec: { updateStrategy: { rollingUpdate: { paused: true } } } }],
  ])("writes a %s's paused where its kind keeps it", (kind, patch) => {
    expect(pausePatch(true, kind)).toEqual(patch);
  });
});

describe('the kind of a workload read from the cluster', () => {
  it.each([
    [{ kind: 'InPlaceStatefulSet' }, 'apps.tailor.dev/inplacestatefulset'],
    [{ kind: 'CloneSet' }, 'apps.tailor.dev/cloneset'],
    [{}, 'apps.tailor.dev/cloneset'],
  ])('%j selects its revisions by %s', (object, label) => {
    expect(kindOfObject(object).revisionLabel).toBe(label);
  });
});
