// Carries out the steps plan.ts decides for one pod, with the fewest API writes (drain: one status
// patch; apply, for the first container batch and each later one alike: its resize through
// pods/resize when it has one, then one pod patch; complete: one status patch), each recorded as a resourceVersion
// expectation so the next reconcile never acts on a cache that has not seen it. Emits an event
// and counts a metric per transition. Must not: decide what to do.
import { rfc3339Seconds } from '../api/time.js';
import { EventReasons, PodConditionReasons } from '../api/reasons.js';
import { ANNOTATION_RESIZE_REQUEST, ANNOTATION_RESIZE_STATUS } from '../api/types.js';
import type { EventRecorder } from '../runtime/events.js';
import type { ResourceVersionExpectations } from '../runtime/expectations.js';
import { KubeApiError } from '../runtime/pure/api-error.js';
import { isNotFound, type KubeClient } from '../runtime/kube-client.js';
import type { KubeObject, Pod } from '../api/wire.js';
import { infeasibleAtAdmission } from '../resize/admission.js';
import type { ResizeRefusal } from '../api/types.js';
import type { InPlaceMetrics } from './metrics.js';
import { readUpdateState, withResizeOutcome, type InPlaceStep, type Settlement } from './pure/plan.js';
import { readinessGateWrite } from './pure/readiness-gate.js';

export class InPlaceUpdater {
  constructor(
    private readonly client: KubeClient,
    private readonly events: EventRecorder,
    private readonly expectations: ResourceVersionExpectations,
    private readonly metrics: InPlaceMetrics | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the pod out of service before its containers restart: endpoints drop it now. */
  async drain(owner: KubeObject, pod: Pod, message: string): Promise<void> {
    const time = rfc3339Seconds(this.now());
    await this.patchStatus(pod, [
      readinessGateWrite('False', time, { reason: PodConditionReasons.InPlaceUpdateStarted, message }),
      {
        type: 'Ready',
        status: 'False',
        reason: PodConditionReasons.InPlaceUpdateStarted,
        message,
        lastTransitionTime: time,
      },
    ]);
    // No event here: the pod's InPlaceUpdateReady condition says it, and every write counts.
    this.metrics?.updates.inc({ result: 'started' });
  }

  async apply(owner: KubeObject, pod: Pod, step: Extract<InPlaceStep, { kind: 'patch' }>): Promise<void> {
    let patch = step.patch;
    if (step.resize) patch = withResizeOutcome(patch, await this.resize(pod, step.resize));
    const patched = await this.client.patchMetadata(podPath(pod), patch, 'strategic');
    this.expectations.expectResourceVersion(pod.metadata?.uid ?? '', patched.metadata?.resourceVersion ?? '');
    // No event per pod: the patch and the pod's InPlaceUpdateReady condition say it; the CloneSet
    // hears of it, batched, when the update completes (every write counts at 1,000 pods).
    // A later container batch is part of an update counted when it completes.
    if (!step.nextBatch && Object.keys(step.diff.images).length === 0)
      this.metrics?.updates.inc({ result: 'succeeded' });
  }

  /**
   * Cpu/memory go through the resize subresource (the only way to change them on a running pod).
   * A refusal for good at admission (Kubernetes ≥ 1.36: the node cannot fit it) is the resize's
   * outcome, recorded on the pod by the patch that follows; any other refusal fails the write.
   */
  private async resize(
    pod: Pod,
    resize: Record<string, unknown>,
  ): Promise<{ generation?: number; refusal?: ResizeRefusal }> {
    try {
      const resized = await this.client.patchMetadata(`${podPath(pod)}/resize`, resize, 'strategic');
      const generation = resized.metadata?.generation;
      return generation !== undefined ? { generation } : {};
    } catch (err) {
      const refusal = err instanceof KubeApiError ? infeasibleAtAdmission(err, this.now()) : undefined;
      if (!refusal) throw err;
      return { refusal };
    }
  }

  async settle(owner: KubeObject, pod: Pod, settlement: Exclude<Settlement, 'pending' | 'none'>): Promise<void> {
    const completed = settlement === 'complete';
    const time = rfc3339Seconds(this.now());
    // Only the gate: Ready is the kubelet's, and it re-syncs the pod as soon as it sees the gate
    // turn True. A Ready True written here flips back to False when the kubelet's status reconcile
    // finds it differs from the status it last computed, a second pod out of service (decision 0007).
    await this.patchStatus(pod, [
      readinessGateWrite('True', time, {
        reason: completed ? PodConditionReasons.InPlaceUpdateCompleted : PodConditionReasons.InPlaceUpdateCancelled,
        message: completed
          ? 'every changed container restarted with its new image'
          : 'the update no longer applies; nothing was restarted',
      }),
    ]);
    this.metrics?.updates.inc({ result: completed ? 'succeeded' : 'reverted' });
    const state = readUpdateState(pod);
    if (completed && state) this.metrics?.duration.observe((this.now() - Date.parse(state.updateTimestamp)) / 1000);
    const reason = completed ? EventReasons.InPlaceUpdateCompleted : EventReasons.InPlaceUpdateCancelled;
    const what = completed
      ? `updated in place to revision ${state?.revision}`
      : 'update withdrawn before it was applied, nothing restarted';
    this.events.batch(owner, 'Normal', reason, what, pod.metadata?.name ?? '');
  }

  /**
   * Sends to the kubelet (pods/resize) what the pod's request asked of the agent, then removes
   * the request and the agent's answer in one merge patch, so the pod's resize state is the
   * kubelet's from then on.
   */
  async rerouteToKubelet(pod: Pod, resize: Record<string, unknown> | undefined): Promise<void> {
    if (resize) await this.client.patchMetadata(`${podPath(pod)}/resize`, resize, 'strategic');
    const patched = await this.client.patchMetadata(
      podPath(pod),
      {
        metadata: {
          uid: pod.metadata?.uid,
          annotations: { [ANNOTATION_RESIZE_REQUEST]: null, [ANNOTATION_RESIZE_STATUS]: null },
        },
      },
      'merge',
    );
    this.expectations.expectResourceVersion(pod.metadata?.uid ?? '', patched.metadata?.resourceVersion ?? '');
  }

  /** A pod created with the readiness gate gets its condition True, so it can become Ready. */
  async markGateReady(pod: Pod): Promise<void> {
    await this.patchStatus(pod, [readinessGateWrite('True', rfc3339Seconds(this.now()))]);
  }

  private async patchStatus(pod: Pod, conditions: Record<string, string>[]): Promise<void> {
    try {
      const patched = await this.client.patchMetadata(
        `${podPath(pod)}/status`,
        { status: { conditions } },
        'strategic',
      );
      this.expectations.expectResourceVersion(pod.metadata?.uid ?? '', patched.metadata?.resourceVersion ?? '');
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

const podPath = (pod: Pod): string => `/api/v1/namespaces/${pod.metadata?.namespace}/pods/${pod.metadata?.name}`;
