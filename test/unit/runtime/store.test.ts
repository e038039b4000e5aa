// The informer's store and the handler mappings: indexes follow every write, a full replace
// yields exactly the changes from the old contents to the new, and events map to the keys
// controller-runtime's EnqueueRequestForObject / EnqueueRequestForOwner would wake.
import { describe, expect, test } from '@jest/globals';
import { ownedIndexValue } from '../../../src/api/owner.js';
import { byControllerOf, enqueueObject, enqueueOwner, ownerKey } from '../../../src/runtime/handlers.js';
import type { KubeObject } from '../../../src/api/wire.js';
import { Store } from '../../../src/runtime/store.js';

const pod = (name: string, rv: string, owner?: string, tier?: string): KubeObject => ({
  metadata: {
    namespace: 'ns',
    name,
    resourceVersion: rv,
    labels: tier ? { tier } : {},
    ownerReferences: owner
      ? [
          {
            apiVersion: 'apps.tailor.dev/v1alpha1',
            kind: 'CloneSet',
            name: owner,
            uid: `uid-${owner}`,
            controller: true,
          },
        ]
      : [],
  },
});
const byTier = (o: KubeObject): string[] => (o.metadata?.labels?.['tier'] ? [o.metadata.labels['tier']] : []);
const names = (objs: KubeObject[]): string[] => objs.map((o) => o.metadata?.name ?? '').sort();

describe('Store', () => {
  test('an index follows adds, label changes and deletes, and an index added later covers what is stored', () => {
    const store = new Store<KubeObject>();
    store.upsert(pod('a', '1', undefined, 'web'));
    store.addIndex('tier', byTier);
    store.upsert(pod('b', '1', undefined, 'web'));
    expect(names(store.byIndex('tier', 'web'))).toEqual(['a', 'b']);
    expect(store.countByIndex('tier', 'web')).toBe(2);
    store.upsert(pod('a', '2', undefined, 'db'));
    store.remove(pod('b', '2'));
    expect(names(store.byIndex('tier', 'web'))).toEqual([]);
    expect(names(store.byIndex('tier', 'db'))).toEqual(['a']);
    expect([store.countByIndex('tier', 'web'), store.countByIndex('tier', 'db')]).toEqual([0, 1]);
    expect(() => store.byIndex('nope', 'x')).toThrow('no index "nope"');
    expect(() => store.countByIndex('nope', 'x')).toThrow('no index "nope"');
  });

  test('writing the resourceVersion already held changes nothing', () => {
    const store = new Store<KubeObject>();
    expect(store.upsert(pod('a', '1'))?.type).toBe('added');
    expect(store.upsert(pod('a', '1'))).toBeUndefined();
    expect(store.upsert(pod('a', '2'))?.type).toBe('updated');
  });

  test('replace yields the deletions, additions and updates from the old contents to the new', () => {
    const store = new Store<KubeObject>();
    for (const p of [pod('same', '1'), pod('changed', '1'), pod('gone', '1')]) store.upsert(p);
    const changes = store.replace([pod('same', '1'), pod('changed', '2'), pod('new', '1')]);
    expect(changes.map((c) => `${c.type} ${c.obj.metadata?.name}`)).toEqual([
      'deleted gone',
      'updated changed',
      'added new',
    ]);
    expect(names(store.list())).toEqual(['changed', 'new', 'same']);
  });
});

describe('handlers', () => {
  test("enqueueOwner wakes the controller owner's key, and on an update the old owner's too", () => {
    const keys: string[] = [];
    const h = enqueueOwner({ add: (k) => void keys.push(k) }, { group: 'apps.tailor.dev', kind: 'CloneSet' });
    h.onAdd?.(pod('p', '1', 'web'));
    h.onUpdate?.(pod('p', '1', 'web'), pod('p', '2', 'api'));
    h.onDelete?.(pod('orphan', '1'));
    expect(keys).toEqual(['ns/web', 'ns/web', 'ns/api']);
    expect(ownerKey(pod('p', '1', 'web'), { group: 'apps', kind: 'ReplicaSet' })).toBeUndefined();
  });

  test("enqueueObject wakes the object's own key on every change", () => {
    const keys: string[] = [];
    const h = enqueueObject({ add: (k) => void keys.push(k) });
    h.onAdd?.(pod('a', '1'));
    h.onUpdate?.(pod('a', '1'), pod('a', '2'));
    h.onDelete?.(pod('a', '2'));
    expect(keys).toEqual(['ns/a', 'ns/a', 'ns/a']);
  });

  // Issue 20.1: owner references never cross namespaces, and only our group's CloneSet owns.
  test.each([
    ['the owner in its own namespace', 'ns', 'apps.tailor.dev/v1alpha1', 'CloneSet', true, ['ns/uid-web']],
    [
      'a pod in another namespace naming the same UID',
      'tenant-b',
      'apps.tailor.dev/v1alpha1',
      'CloneSet',
      true,
      ['tenant-b/uid-web'],
    ],
    ["OpenKruise's CloneSet with the same UID", 'ns', 'apps.kruise.io/v1alpha1', 'CloneSet', true, []],
    ['a ReplicaSet of the same UID', 'ns', 'apps/v1', 'ReplicaSet', true, []],
    ['a non-controlling owner reference', 'ns', 'apps.tailor.dev/v1alpha1', 'CloneSet', false, []],
  ])(
    'the owned index files %s under namespace/uid only when group and kind match',
    (_, namespace, apiVersion, kind, controller, expected) => {
      const obj: KubeObject = {
        metadata: {
          namespace,
          name: 'p',
          ownerReferences: [{ apiVersion, kind, name: 'web', uid: 'uid-web', controller }],
        },
      };
      const index = byControllerOf({ group: 'apps.tailor.dev', kind: 'CloneSet' });
      expect(index(obj)).toEqual(expected);
      const store = new Store<KubeObject>();
      store.addIndex('owner', index);
      store.upsert(obj);
      // The victim's lookup is by its own namespace: another namespace's pod is never among its pods.
      expect(store.byIndex('owner', ownedIndexValue('ns', 'uid-web')).length).toBe(
        namespace === 'ns' && expected.length > 0 ? 1 : 0,
      );
    },
  );
});
