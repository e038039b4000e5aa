// Which orphans an InPlaceStatefulSet may adopt: its own members by name, `<set>-<ordinal>` with
// that ordinal as the instance id, as the native controller tells its pods by name.
import { describe, expect, it } from '@jest/globals';
import { isSetMember } from '../../../../src/inplacestatefulset/pure/identity.js';
import type { Pod, WireCloneSet } from '../../../../src/api/wire.js';

const set = { metadata: { name: 'web', namespace: 'ns' } } as WireCloneSet;
const podNamed = (name: string, instanceId?: string): Pod => ({
  metadata: { name, ...(instanceId !== undefined ? { labels: { 'apps.tailor.dev/instance-id': instanceId } } : {}) },
});

describe('isSetMember', () => {
  it.each([
    ['web-0 with instance id 0', podNamed('web-0', '0'), true],
    ['web-12 with instance id 12', podNamed('web-12', '12'), true],
    ['another set’s pod, web-db-0', podNamed('web-db-0', '0'), false],
    ['a name without an ordinal', podNamed('web-x', 'x'), false],
    ['a leading zero, web-01', podNamed('web-01', '01'), false],
    ['an instance id that is not the ordinal', podNamed('web-1', '2'), false],
    ['no instance id', podNamed('web-1'), false],
  ])('%s: %s', (_what, pod, member) => {
    expect(isSetMember(pod, set)).toBe(member);
  });
});
