// Holding a release the canary driver cannot see (issue 44 item 3, decision 97). An unmodified
// Kruise Rollout v0.6.2 holds a labelled workload's new template at partition 32767 from its
// admission webhook, which compares the old and new templates decoded into Kubernetes 1.26 types.
// A change only in newer fields (pod-level `resources`, a container's `resizePolicy`) looks like
// no change there, so the webhook lets it through and the workload would roll it to every pod at
// once. When that is what happened, the update is held as if paused, and the UpdateHeld condition
// says why and how to release it.
// Pure. Must not: read anything but its input, or decide anything else of the round.
import type { ConditionWrite } from './intents.js';
import type { PodTemplate } from '../../api/wire.js';
import { invisibleChanges, sameForDriver } from './driver-view.js';
import { KRUISE_ROLLOUT_V0_6_2 } from './kruise-rollout-fields.generated.js';
import { ConditionReasons } from '../../api/reasons.js';

/** The names Kruise Rollout v0.6.2 reads and writes on a workload it drives. */
export const KruiseRollout = {
  release: 'Kruise Rollout v0.6.2',
  /** Its webhook's object selector; `statefulset` selects its generic path, the one that drives Tailor's kinds. */
  workloadTypeLabel: 'rollouts.kruise.io/workload-type',
  /** Set by its webhook when it takes a release, removed when the release ends. */
  inProgressingAnnotation: 'rollouts.kruise.io/in-progressing',
  /** A new value starts a release even when the template looks unchanged to it. */
  rolloutIdAnnotation: 'rollouts.kruise.io/rollout-id',
  /** Its template comparison ignores this label (a Deployment's hash). */
  ignoredLabels: ['pod-template-hash'],
  fields: KRUISE_ROLLOUT_V0_6_2,
} as const;

export interface DriverHoldInput {
  labels?: Readonly<Record<string, string>>;
  annotations?: Readonly<Record<string, string>>;
  currentRevision: string;
  updateRevision: string;
  templates: ReadonlyMap<string, PodTemplate>;
}

/**
 * The UpdateHeld condition when the workload is labelled for Kruise Rollout's generic path, the
 * driver has not taken the release, and the current and update templates differ only where the
 * driver cannot see; undefined otherwise (a template not held this round counts as visible).
 */
export function driverHold(input: DriverHoldInput): ConditionWrite | undefined {
  const { currentRevision, updateRevision, templates } = input;
  if (input.labels?.[KruiseRollout.workloadTypeLabel] !== 'statefulset') return undefined;
  if (input.annotations?.[KruiseRollout.inProgressingAnnotation] !== undefined) return undefined;
  if (currentRevision === updateRevision) return undefined;
  const [current, update] = [templates.get(currentRevision), templates.get(updateRevision)];
  if (current === undefined || update === undefined) return undefined;
  if (!sameForDriver(KruiseRollout.fields, current, update, KruiseRollout.ignoredLabels)) return undefined;
  const fields = invisibleChanges(KruiseRollout.fields, current, update);
  const where = fields.length > 0 ? ` (${fields.join(', ')})` : '';
  return {
    status: 'True',
    reason: ConditionReasons.ChangeInvisibleToDriver,
    message:
      `revision ${updateRevision} changes the template only in fields ${KruiseRollout.release} cannot see${where}: ` +
      'its webhook let the change through without a canary, so no pod is updated; to release it in batches, ' +
      `change a field it sees as well or set a new ${KruiseRollout.rolloutIdAnnotation} annotation on the workload; ` +
      `to roll it out without Kruise Rollout, remove the ${KruiseRollout.workloadTypeLabel} label`,
  };
}
