// The CloneSet reconcile: reads one CloneSet and its pods and revisions from the informer caches,
// makes the world match the spec one step at a time, and writes status. Level-triggered and
// idempotent: it may run any number of times for the same state. Expectations stop it from
// acting on a cache that has not yet seen its own creates and deletes.
// Decisions live in pure modules (scale.ts, update.ts, revision.ts, status.ts, pods.ts,
// inplace/plan.ts); revision-store.ts and resizes.ts handle revisions and resizes; this module
// sequences them and performs the pod and status calls.
// Must not: keep state between reconciles other than expectations; PUT typed objects.
import { randomBytes } from 'node:crypto';
import { CONDITION_INPLACE_UPDATE_READY, LABEL_CONTROLLER_REVISION_HASH, type CloneSetStatus } from '../api/types.js';
import type { PodTemplate } from '../inplace/diff.js';
import type { InPlaceUpdater } from '../inplace/engine.js';
import type { InPlaceMetrics } from '../inplace/metrics.js';
import { planInPlaceUpdate, settleInPlaceUpdate, type InPlaceStep } from '../inplace/plan.js';
import type { ResizeMetrics } from '../resize/metrics.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.js';
import type { Informer } from '../runtime/informer.js';
import { isConflict, isNotFound, type KubeClient, type Pod } from '../runtime/kube-client.js';
import type { Logger } from '../runtime/logger.js';
import { mergePatch } from '../runtime/merge-patch.js';
import { countsAsAvailable, type PodSummary } from './pod-state.js';
import {
  availableAt,
  defaulted,
  needsReadinessGateCondition,
  newPod,
  summarizePod,
  type DefaultedWireCloneSet,
  type WireCloneSet,
} from './pods.js';
import { followResizes, resizeVia, type ResizeBackend } from './resizes.js';
import { OWNER_INDEX, RevisionStore, type ControllerRevision } from './revision-store.js';
import { planScale } from './scale.js';
import { matchesSelector, selectorString } from './selector.js';
import { computeStatus, progressDeadlineAt, sameStatus } from './status.js';
import { planUpdate, resolvePartition, resolveRolloutLimits, type RolloutInput } from './update.js';

export { CLONESET_LABEL, OWNER_INDEX, type ControllerRevision } from './revision-store.js';

export interface CloneSetReconcilerDeps {
  client: KubeClient;
  cloneSets: Informer<WireCloneSet>;
  pods: Informer<Pod>;
  revisions: Informer<ControllerRevision>;
  scaleExpectations: ScaleExpectations;
  podExpectations: ResourceVersionExpectations;
  events: EventRecorder;
  logger: Logger;
  inPlace: { updater: InPlaceUpdater; metrics?: InPlaceMetrics };
  resize: { backend: ResizeBackend; metrics?: ResizeMetrics };
  now?: () => number;
}


type ConditionWrites = Parameters<typeof computeStatus>[0]['conditions'];

export class CloneSetReconciler {
  private readonly now: () => number;

  private readonly store: RevisionStore;

  constructor(private readonly deps: CloneSetReconcilerDeps) {
    this.now = deps.now ?? Date.now;
    this.store = new RevisionStore(deps.client, deps.revisions);
  }

  private get inPlace(): CloneSetReconcilerDeps['inPlace'] {
    return this.deps.inPlace;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { cloneSets, scaleExpectations } = this.deps;
    const stored = cloneSets.get(key);
    if (!stored) {
      scaleExpectations.delete(key);
      return;
    }
    if (stored.metadata?.deletionTimestamp) return;
    const cs = defaulted(stored);
    const uid = cs.metadata?.uid ?? '';
    const log = this.deps.logger.child({ cloneset: key });

    if (!scaleExpectations.satisfied(key)) {
      const pending = scaleExpectations.pending(key);
      log.debug({ pending }, 'waiting for the cache to observe our creates/deletes');
      return { requeueAfterMs: Math.max(100, Math.min(pending?.expiresInMs ?? 1000, 5000)) };
    }

    const owned = this.deps.pods.byIndex(OWNER_INDEX, uid);
    const pods: Pod[] = [];
    for (const pod of owned) {
      // The watch may deliver our own write before its response arrives: compare with the cache.
      this.deps.podExpectations.observe(pod.metadata?.uid ?? '', pod.metadata?.resourceVersion ?? '');
      if (!this.deps.podExpectations.satisfied(pod.metadata?.uid ?? '')) {
        return { requeueAfterMs: 200 };
      }
      if (!pod.metadata?.deletionTimestamp && !matchesSelector(pod.metadata?.labels, cs.spec.selector)) {
        await this.release(cs, pod);
        continue;
      }
      pods.push(pod);
    }

    const revisions = await this.store.sync(cs);
    if (revisions === 'collision') return { requeue: true };
    const { updateRevision, currentRevision, templates } = revisions;

    const now = this.now();
    const minReadySeconds = cs.spec.minReadySeconds ?? 0;
    const strategy = cs.spec.updateStrategy;
    const summaries = pods.map((p) =>
      summarizePod(p, { minReadySeconds, now, podsToDelete: cs.spec.scaleStrategy?.podsToDelete ?? [] }),
    );
    const replicas = cs.spec.replicas ?? 1;
    const input: RolloutInput = {
      replicas,
      partition: strategy.partition,
      maxUnavailable: strategy.maxUnavailable,
      maxSurge: strategy.maxSurge,
      paused: strategy.paused,
      scaleMaxUnavailable: cs.spec.scaleStrategy?.maxUnavailable,
      podsToDelete: cs.spec.scaleStrategy?.podsToDelete ?? [],
      currentRevision,
      updateRevision,
      pods: summaries,
    };

    const conditions: ConditionWrites = {};
    const scale = planScale(input);
    let acted = false;
    try {
      if (scale.create > 0) {
        acted = true;
        await this.createPods(cs, key, scale.create, scale.createAtCurrentRevision, currentRevision, updateRevision, templates);
        if (scale.create < scale.missing) {
          this.deps.events.event(stored, 'Normal', 'ScaleUpLimited', `scaleStrategy.maxUnavailable holds back ${scale.missing - scale.create} of ${scale.missing} new pods`);
        }
      } else if (scale.delete.length > 0) {
        acted = true;
        await this.deletePods(cs, key, pods.filter((p) => scale.delete.includes(p.metadata?.name ?? '')), 'ScaledDown');
      }
      conditions['FailedScale'] = null;
    } catch (err) {
      conditions['FailedScale'] = { status: 'True', reason: 'ScaleFailed', message: errorMessage(err) };
      this.deps.events.event(stored, 'Warning', 'FailedScale', errorMessage(err));
      log.warn({ err }, 'scale failed');
    }

    const update = planUpdate(input);
    log.debug({ scale, toUpdate: update.toUpdate, target: update.targetRevision }, 'plan');
    let updateWakeup: number | undefined;
    if (!acted && !conditions['FailedScale']) {
      try {
        updateWakeup = await this.updatePods(stored, cs, key, pods, update, templates, conditions);
      } catch (err) {
        conditions['FailedUpdate'] = { status: 'True', reason: 'UpdateFailed', message: errorMessage(err) };
        this.deps.events.event(stored, 'Warning', 'FailedUpdate', errorMessage(err));
        log.warn({ err }, 'update failed');
      }
    }
    await this.settleInPlaceUpdates(stored, pods, new Set(update.toUpdate));
    this.reportBlockedRollout(stored, cs, summaries, update);
    const resizes = followResizes(stored, cs, pods, now, this.deps.events, this.deps.resize.metrics);
    await this.deletePods(cs, key, resizes.recreate, 'ResizeRecreate');
    conditions['ResizeBlocked'] = resizes.resizeBlocked;
    const resize = resizes.tracking;

    await this.markReadinessGates(pods);

    const status = computeStatus({
      generation: cs.metadata?.generation ?? 0,
      replicas,
      pods: summaries,
      currentRevision,
      updateRevision,
      collisionCount: cs.status?.collisionCount ?? 0,
      expectedUpdatedReplicas: replicas - resolvePartition(strategy.partition, replicas),
      labelSelector: selectorString(cs.spec.selector),
      previous: cs.status as CloneSetStatus | undefined,
      progressDeadlineSeconds: cs.spec.progressDeadlineSeconds,
      paused: !!strategy.paused,
      resize: resize.status,
      conditions,
      now,
    });
    await this.writeStatus(cs, status);
    await this.store.prune(cs, pods, status);

    // Wake up when a pod becomes available (minReadySeconds) or the progress deadline passes.
    const wakeups = [
      ...pods.map((p) => availableAt(p, minReadySeconds)).filter((t): t is number => t !== undefined && t > now),
      progressDeadlineAt(status, cs.spec.progressDeadlineSeconds),
      updateWakeup,
      resize.nextCheckAt,
    ].filter((t): t is number => t !== undefined);
    if (wakeups.length > 0) return { requeueAfterMs: Math.max(100, Math.min(...wakeups) - now) };
    return;
  }

  /**
   * Moves the pods the rollout arithmetic picked toward their target revision: in place where the
   * strategy and the change allow, by recreate otherwise. Returns when to look again, if a pod is
   * waiting (grace period, cache catching up).
   */
  private async updatePods(
    stored: WireCloneSet,
    cs: DefaultedWireCloneSet,
    key: string,
    pods: Pod[],
    update: ReturnType<typeof planUpdate>,
    templates: Map<string, unknown>,
    conditions: ConditionWrites,
  ): Promise<number | undefined> {
    const strategy = cs.spec.updateStrategy;
    const targetTemplate = templates.get(update.targetRevision) as PodTemplate | undefined;
    const recreate: Pod[] = [];
    const blocked = new Set<string>();
    let wakeup: number | undefined;
    const now = this.now();
    // Changes that restart nothing (labels, NotRequired cpu/memory resizes) do not take pods out of
    // service, so they are not held back by maxUnavailable: only the partition bounds them.
    const onTarget = pods.filter((p) => p.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] === update.targetRevision).length;
    let nonDisruptiveBudget = strategy.paused ? 0 : update.expectedUpdatedReplicas - onTarget - update.toUpdate.length;
    const candidates = pods.filter(
      (p) => !p.metadata?.deletionTimestamp && p.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] !== update.targetRevision,
    );
    for (const pod of candidates) {
      const selected = update.toUpdate.includes(pod.metadata?.name ?? '');
      if (!selected && nonDisruptiveBudget <= 0) continue;
      const podTemplate = templates.get(pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '') as PodTemplate | undefined;
      const step: InPlaceStep =
        !podTemplate || !targetTemplate
          ? strategy.type === 'InPlaceOnly'
            ? { kind: 'blocked', fields: ['metadata.labels[controller-revision-hash] (unknown revision)'] }
            : { kind: 'recreate', reason: 'the pod\'s revision is unknown' }
          : planInPlaceUpdate(pod, {
              strategy: strategy.type,
              gracePeriodSeconds: strategy.inPlaceUpdateStrategy.gracePeriodSeconds ?? 0,
              podTemplate,
              targetRevision: update.targetRevision,
              targetTemplate,
              resize: resizeVia(this.deps.resize.backend, pod),
              now,
            });
      this.deps.logger.debug({ cloneset: key, pod: pod.metadata?.name, selected, step: step.kind }, 'in-place step');
      if (!selected) {
        // Outside the arithmetic's pick: only a change that restarts nothing goes ahead.
        if (step.kind !== 'patch' || Object.keys(step.diff.images).length > 0) continue;
        nonDisruptiveBudget--;
      }
      switch (step.kind) {
        case 'recreate':
          if (strategy.type !== 'ReCreate') {
            this.deps.events.event(stored, 'Normal', 'RecreateFallback', `pod ${pod.metadata?.name} is recreated: ${step.reason}`);
            this.inPlace.metrics?.updates.inc({ result: 'recreated' });
          }
          recreate.push(pod);
          break;
        case 'blocked':
          for (const f of step.fields) blocked.add(f);
          break;
        case 'drain':
          await this.inPlace.updater.drain(stored, pod, step.message);
          break;
        case 'wait':
          wakeup = Math.min(wakeup ?? Infinity, step.untilMs ?? now + 500);
          break;
        case 'patch':
          await this.inPlace.updater.apply(stored, pod, step);
          break;
        case 'none':
          break;
      }
    }
    if (blocked.size > 0) {
      const fields = [...blocked].sort().join(', ');
      const message = `updateStrategy.type InPlaceOnly cannot apply these changes to running pods: ${fields}; revert them or use InPlaceIfPossible/ReCreate`;
      conditions['FailedUpdate'] = { status: 'True', reason: 'NotInPlaceUpdatable', message };
      this.deps.events.event(stored, 'Warning', 'NotInPlaceUpdatable', message);
      this.inPlace.metrics?.updates.inc({ result: 'blocked' });
    } else {
      conditions['FailedUpdate'] = null;
    }
    await this.deletePods(cs, key, recreate, 'RecreateUpdate');
    return wakeup;
  }

  /**
   * A rollout that cannot move because maxUnavailable pods are already unavailable (for example a
   * new image that never becomes ready) says so, naming the pods, instead of going quiet.
   */
  private reportBlockedRollout(
    stored: WireCloneSet,
    cs: DefaultedWireCloneSet,
    summaries: PodSummary[],
    update: ReturnType<typeof planUpdate>,
  ): void {
    const strategy = cs.spec.updateStrategy;
    const pending = summaries.filter((p) => !p.terminating && p.revision !== update.targetRevision).length;
    const wanted = update.expectedUpdatedReplicas - summaries.filter((p) => !p.terminating && p.revision === update.targetRevision).length;
    if (strategy.paused || update.toUpdate.length > 0 || pending === 0 || wanted <= 0) return;
    // Pods in the middle of our own in-place update are expected to be unavailable.
    const unavailable = summaries.filter((p) => !p.terminating && !p.inPlaceUpdating && !countsAsAvailable(p)).map((p) => p.name);
    const limit = resolveRolloutLimits({ replicas: cs.spec.replicas, maxUnavailable: strategy.maxUnavailable, maxSurge: strategy.maxSurge }).maxUnavailable;
    if (unavailable.length < limit || unavailable.length === 0) return;
    this.deps.events.event(
      stored,
      'Warning',
      'RolloutBlocked',
      `${unavailable.length} pod(s) unavailable (maxUnavailable ${limit}): ${unavailable.sort().join(', ')}; the rollout waits for them`,
    );
  }

  /** Finishes in-place updates whose containers restarted, and withdraws drains no longer needed. */
  private async settleInPlaceUpdates(owner: WireCloneSet, pods: Pod[], selected: Set<string>): Promise<void> {
    for (const pod of pods) {
      const settlement = settleInPlaceUpdate(pod, selected.has(pod.metadata?.name ?? ''));
      if (settlement === 'complete' || settlement === 'undrain') await this.inPlace.updater.settle(owner, pod, settlement);
    }
  }

  /** Creates pods in slow-start batches (1, 2, 4, …), stopping at the first failing batch. */
  private async createPods(
    cs: WireCloneSet,
    key: string,
    count: number,
    atCurrent: number,
    currentRevision: string,
    updateRevision: string,
    templates: Map<string, unknown>,
  ): Promise<void> {
    const ns = cs.metadata?.namespace ?? 'default';
    const planned = Array.from({ length: count }, (_, i) => {
      const revision = i < atCurrent ? currentRevision : updateRevision;
      const template = (templates.get(revision) ?? cs.spec.template) as Parameters<typeof newPod>[2];
      return newPod(cs, revision, template, instanceId());
    });
    const names = planned.map((p) => p.metadata?.name ?? '');
    this.deps.scaleExpectations.expectCreations(key, names);
    let next = 0;
    for (let batch = 1; next < planned.length; batch *= 2) {
      const slice = planned.slice(next, next + batch);
      next += slice.length;
      const results = await Promise.allSettled(slice.map((pod) => this.deps.client.create<Pod>(`/api/v1/namespaces/${ns}/pods`, pod)));
      const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ pod: slice[i]!, err: r.reason as unknown }] : []));
      if (failed.length > 0) {
        // The cache will never see pods that were not created: stop expecting them.
        for (const pod of [...failed.map((f) => f.pod), ...planned.slice(next)]) {
          this.deps.scaleExpectations.observeCreation(key, pod.metadata?.name ?? '');
        }
        throw new Error(`creating pods failed: ${errorMessage(failed[0]!.err)}`, { cause: failed[0]!.err });
      }
    }
    this.deps.events.event(cs, 'Normal', 'SuccessfulCreate', `created ${count} pod(s): ${names.join(', ')}`);
  }

  private async deletePods(cs: WireCloneSet, key: string, victims: Pod[], reason: string): Promise<void> {
    if (victims.length === 0) return;
    const names = victims.map((p) => p.metadata?.name ?? '');
    this.deps.scaleExpectations.expectDeletions(key, names);
    const errors: unknown[] = [];
    for (const pod of victims) {
      const name = pod.metadata?.name ?? '';
      try {
        await this.deps.client.delete(`/api/v1/namespaces/${pod.metadata?.namespace}/pods/${name}`, {
          preconditions: { uid: pod.metadata?.uid },
        });
        this.deps.events.event(cs, 'Normal', 'SuccessfulDelete', `${reason}: deleted pod ${name}`);
      } catch (err) {
        this.deps.scaleExpectations.observeDeletion(key, name);
        if (!isNotFound(err) && !isConflict(err)) errors.push(err);
      }
    }
    if (errors.length > 0) throw new Error(`deleting pods failed: ${errorMessage(errors[0])}`, { cause: errors[0] });
  }

  /** A pod whose labels stopped matching the selector is let go: its owner reference removed. */
  private async release(cs: WireCloneSet, pod: Pod): Promise<void> {
    try {
      await this.deps.client.patch(
        `/api/v1/namespaces/${pod.metadata?.namespace}/pods/${pod.metadata?.name}`,
        { metadata: { ownerReferences: [{ $patch: 'delete', uid: cs.metadata?.uid }], uid: pod.metadata?.uid } },
        'strategic',
      );
      this.deps.events.event(cs, 'Normal', 'ReleasedPod', `pod ${pod.metadata?.name} no longer matches the selector; released`);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** Pods created with the in-place readiness gate get its condition True so they can be Ready. */
  private async markReadinessGates(pods: Pod[]): Promise<void> {
    const stamp = new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await Promise.all(
      pods.filter((p) => !p.metadata?.deletionTimestamp && needsReadinessGateCondition(p)).map(async (pod) => {
        try {
          const patched = await this.deps.client.patch<Pod>(
            `/api/v1/namespaces/${pod.metadata?.namespace}/pods/${pod.metadata?.name}/status`,
            { status: { conditions: [{ type: CONDITION_INPLACE_UPDATE_READY, status: 'True', lastTransitionTime: stamp }] } },
            'strategic',
          );
          this.deps.podExpectations.expectResourceVersion(pod.metadata?.uid ?? '', patched.metadata?.resourceVersion ?? '');
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }),
    );
  }

  private async writeStatus(cs: WireCloneSet, status: CloneSetStatus): Promise<void> {
    if (sameStatus(cs.status as CloneSetStatus | undefined, status)) return;
    try {
      await this.deps.client.patch(
        `/apis/${cs.apiVersion}/namespaces/${cs.metadata?.namespace}/clonesets/${cs.metadata?.name}/status`,
        // Null out what disappeared (e.g. status.resize.pods once every resize finished).
        { status: mergePatch(cs.status ?? {}, status) },
        'merge',
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }


}

/** Kruise-style instance IDs: 5 lowercase alphanumerics, also the pod name suffix. */
function instanceId(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return Array.from(randomBytes(5), (b) => alphabet[b % alphabet.length]).join('');
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
