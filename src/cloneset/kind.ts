// The CloneSet as a workload kind (workload/pure/kind.ts): its API names, the label on its
// revisions, the pods its controller caches, and its defaults. Its pods have no identity beyond a
// random instance id, so it brings no identity rules: the engine's own scale arithmetic (Kruise's
// CloneSet) is the CloneSet's. Pure. Must not: perform I/O.
import { CLONESET_OWNER } from '../api/owner.js';
import { CLONESET_PLURAL, LABEL_CLONESET, LABEL_INSTANCE_ID } from '../api/types.js';
import { LABEL_INPLACESTATEFULSET } from '../api/stateful-types.js';
import { defaulted } from '../workload/pure/pods.js';
import type { WorkloadKind } from '../workload/pure/kind.js';

export const CLONESET: WorkloadKind = {
  owner: CLONESET_OWNER,
  plural: CLONESET_PLURAL,
  controllerName: 'cloneset',
  informerPrefix: '',
  revisionLabel: LABEL_CLONESET,
  // Every pod Tailor creates has an instance id; the stateful kind's carry its label too.
  podSelector: `${LABEL_INSTANCE_ID},!${LABEL_INPLACESTATEFULSET}`,
  view: defaulted,
};
