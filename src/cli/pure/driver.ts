// Which progressive-delivery controller drives a workload's batches, as `kubectl tailor status`
// shows it (issue 44, decision 95): an OpenKruise Rollout (rollouts.kruise.io/v1beta1) whose
// workloadRef names the workload, read with a schema and bounded, and the line that says where its
// canary stands. Pure. Must not: read the cluster (verbs/status.ts lists the Rollouts), or judge
// the workload's own rollout (status-view.ts does).
import { z } from 'zod';

export const ROLLOUTS_PATH = (namespace: string): string =>
  `/apis/rollouts.kruise.io/v1beta1/namespaces/${encodeURIComponent(namespace)}/rollouts`;

export interface RolloutDriver {
  readonly name: string;
  readonly phase: string;
  /** 1-based, as Kruise Rollout counts its steps; 0 before the first. */
  readonly step: number;
  readonly steps: number;
  /** The step's share: a count or a percentage of replicas. */
  readonly stepReplicas: string | undefined;
  readonly state: string;
}

const Name = z.string().max(253);
const Step = z.object({ replicas: z.union([z.number(), z.string().max(16)]).optional() }).loose();
const RolloutSchema = z
  .object({
    metadata: z.object({ name: Name }),
    spec: z
      .object({
        workloadRef: z.object({ apiVersion: z.string().max(253), kind: z.string().max(63), name: Name }),
        strategy: z
          .object({
            canary: z
              .object({ steps: z.array(Step).max(100).default([]) })
              .loose()
              .default({ steps: [] }),
          })
          .loose()
          .default({ canary: { steps: [] } }),
      })
      .loose(),
    status: z
      .object({
        phase: z.string().max(64).default('Initial'),
        canaryStatus: z
          .object({
            currentStepIndex: z.number().int().default(0),
            currentStepState: z.string().max(64).default(''),
          })
          .loose()
          .default({ currentStepIndex: 0, currentStepState: '' }),
      })
      .loose()
      .default({ phase: 'Initial', canaryStatus: { currentStepIndex: 0, currentStepState: '' } }),
  })
  .loose();

/** The Rollout among `rollouts` whose workloadRef names `kind` `name` of Tailor's API group, if any. */
export function driverOf(rollouts: readonly unknown[], kind: string, name: string): RolloutDriver | undefined {
  const names = (ref: { apiVersion: string; kind: string; name: string }): boolean =>
    ref.kind === kind && ref.name === name && ref.apiVersion.startsWith('apps.tailor.dev/');
  const found = rollouts
    .map((item) => RolloutSchema.safeParse(item))
    .find((parsed) => parsed.success && names(parsed.data.spec.workloadRef));
  if (!found?.success) return undefined;
  const { metadata, spec, status } = found.data;
  const steps = spec.strategy.canary.steps;
  const step = status.canaryStatus.currentStepIndex;
  const replicas = steps[step - 1]?.replicas;
  return {
    name: metadata.name,
    phase: status.phase,
    step,
    steps: steps.length,
    stepReplicas: replicas === undefined ? undefined : String(replicas),
    state: status.canaryStatus.currentStepState,
  };
}

/** "Kruise Rollout web: Progressing, batch 1 of 3 (1 pod), StepPaused: approve it to go on". */
export function driverLine(d: RolloutDriver): string {
  const count = d.stepReplicas;
  const share = count === undefined ? '' : ` (${/%$/.test(count) ? count : `${count} pod${count === '1' ? '' : 's'}`})`;
  const batch = d.phase === 'Progressing' && d.step > 0 ? `, batch ${d.step} of ${d.steps}${share}, ${d.state}` : '';
  const next = d.phase === 'Progressing' && d.state === 'StepPaused' ? ': approve it to go on' : '';
  return `Kruise Rollout ${d.name}: ${d.phase}${batch}${next}`;
}
