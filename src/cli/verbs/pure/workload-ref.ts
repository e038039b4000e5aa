// Which workload a verb's argument names: `web` or `cloneset/web` a CloneSet (the plugin's first
// kind, so a bare name stays one), `ipsts/db` or `inplacestatefulset/db` an InPlaceStatefulSet,
// with kubectl's spellings (singular, plural, short name, `<resource>.apps.tailor.dev`). Pure.
// Must not: read the cluster.
import { CLONESET } from '../../../cloneset/kind.js';
import { INPLACESTATEFULSET } from '../../../inplacestatefulset/kind.js';
import type { WorkloadKind } from '../../../workload/pure/kind.js';

export interface WorkloadRef {
  readonly kind: WorkloadKind;
  readonly name: string;
}

const KINDS: Readonly<Record<string, WorkloadKind>> = {
  clone: CLONESET,
  cloneset: CLONESET,
  clonesets: CLONESET,
  ipsts: INPLACESTATEFULSET,
  inplacestatefulset: INPLACESTATEFULSET,
  inplacestatefulsets: INPLACESTATEFULSET,
};

/** The workload `arg` names; a message that says what to write instead when its kind is unknown. */
export function parseWorkloadRef(arg: string): WorkloadRef | { error: string } {
  const slash = arg.indexOf('/');
  if (slash < 0) return { kind: CLONESET, name: arg };
  const resource = arg
    .slice(0, slash)
    .toLowerCase()
    .replace(/\.apps\.tailor\.dev$/, '');
  const kind = KINDS[resource];
  const name = arg.slice(slash + 1);
  if (!kind || name === '' || name.includes('/'))
    return {
      error: `"${arg}" names no workload of Tailor's: write web or cloneset/web for a CloneSet, ipsts/db for an InPlaceStatefulSet`,
    };
  return { kind, name };
}

/** The kind of a workload object read from the cluster (by its `kind`; a CloneSet when it says none). */
export const kindOfObject = (object: { kind?: string }): WorkloadKind =>
  object.kind === INPLACESTATEFULSET.owner.kind ? INPLACESTATEFULSET : CLONESET;

/** What `kubectl tailor` calls the workload in its messages: `clone "web"`, `InPlaceStatefulSet "db"`. */
export const describeRef = (ref: WorkloadRef): string =>
  `${ref.kind === CLONESET ? 'clone' : ref.kind.owner.kind} "${ref.name}"`;
