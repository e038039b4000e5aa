// Views derived from one object alone, computed once per object. The informers hand out one object
// per resourceVersion and nothing writes a cached object (decision 32), so a view computed for an
// object stays the view of that version; a reconcile that reads every pod of a CloneSet then costs
// a lookup for each pod that did not change since the last round (decision 33).
// Pure in effect: a memoized function answers what it would compute. Must not: memoize a
// computation that reads anything but its one argument, or hand out a view its callers may write.
export function perObject<K extends object, V>(compute: (key: K) => V): (key: K) => V {
  const views = new WeakMap<K, V>();
  return (key) => {
    const known = views.get(key);
    if (known !== undefined || views.has(key)) return known as V;
    const view = compute(key);
    views.set(key, view);
    return view;
  };
}
