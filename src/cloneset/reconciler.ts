// The CloneSet reconcile: reads one CloneSet and its pods and revisions from the informer caches,
// makes the world match the spec one step at a time, and writes status. Level-triggered and
// idempotent: it may run any number of times for the same state. Expectations stop it from
// acting on a cache that has not yet seen its own creates and deletes.
// Decisions live in pure modules (scale.ts, update.ts, revision.ts, status.ts, pods.ts);
// this module only sequences them and performs the API calls.
// Must not: keep state between reconciles other than expectations; PUT typed objects.
import { randomBytes } from 'node:crypto';
import { LABEL_CONTROLLER_REVISION_HASH, type CloneSetStatus } from '../api/types.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.js';
import type { Informer } from '../runtime/informer.js';
import { isAlreadyExists, isConflict, isNotFound, type KubeClient, type Pod } from '../runtime/kube-client.js';
import type { Logger } from '../runtime/logger.js';
import { mergePatch } from '../runtime/merge-patch.js';
import { availableAt, controllerRef, defaulted, type DefaultedWireCloneSet, needsReadinessGateCondition, newPod, summarizePod, type WireCloneSet } from './pods.js';
import {
  canonicalJSON,
  findEqualRevision,
  nextRevisionNumber,
  revisionName,
  revisionsToPrune,
  templateHash,
  type RevisionSummary,
} from './revision.js';
import { planScale } from './scale.js';
import { matchesSelector, selectorString } from './selector.js';
import { computeStatus, progressDeadlineAt, sameStatus } from './status.js';
import { planUpdate, resolvePartition, resolveRolloutLimits, type RolloutInput } from './update.js';
import { countsAsAvailable, type PodSummary } from './pod-state.js';
import { CONDITION_INPLACE_UPDATE_READY } from '../api/types.js';
import type { PodTemplate } from '../inplace/diff.js';
import type { InPlaceUpdater } from '../inplace/engine.js';
import type { InPlaceMetrics } from '../inplace/metrics.js';
import { planInPlaceUpdate, readUpdateState, settleInPlaceUpdate, type InPlaceStep } from '../inplace/plan.js';
import type { ResizeMetrics } from '../resize/metrics.js';
import { kubeletCanResize } from '../resize/state.js';
import { trackResizes } from '../resize/track.js';

export interface ControllerRevision {
  apiVersion?: string;
  kind?: string;
  metadata?: Pod['metadata'];
  revision: number;
  data?: { template?: unknown };
}

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
  resize: { backend: 'auto' | 'kubelet' | 'agent'; metrics?: ResizeMetrics };
  now?: () => number;
}

export const OWNER_INDEX = 'controllerUid';
export const CLONESET_LABEL = 'apps.tailor.dev/cloneset';

type ConditionWrites = Parameters<typeof computeStatus>[0]['conditions'];

export class CloneSetReconciler {
  private readonly now: () => number;

  constructor(private readonly deps: CloneSetReconcilerDeps) {
    this.now = deps.now ?? Date.now;
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

    const revisions = await this.syncRevisions(cs);
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
    const resize = await this.followResizes(stored, cs, key, pods, conditions);

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
    await this.pruneRevisions(cs, pods, status);

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
              resize: this.resizeSupport(pod),
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
   * How a pod is resized. `auto` uses the kubelet when its running containers report their actual
   * resources (the kubelet's in-place resize is on) and Tailor's node agent otherwise; a node with
   * no agent shows the resize Proposed with reason NoAgentResponse.
   */
  private resizeSupport(pod: Pod): { supported: boolean; reason?: string; via: 'kubelet' | 'agent' } {
    const backend = this.deps.resize.backend;
    if (backend === 'kubelet' || (backend === 'auto' && kubeletCanResize(pod))) return { supported: true, via: 'kubelet' };
    return { supported: true, via: 'agent' };
  }

  /**
   * Reports every pod's resize in status.resize, emits an event per state change, and applies the
   * resize strategy to resizes that cannot finish: recreate the pod, or wait with ResizeBlocked.
   */
  private async followResizes(
    stored: WireCloneSet,
    cs: DefaultedWireCloneSet,
    key: string,
    pods: Pod[],
    conditions: ConditionWrites,
  ): Promise<ReturnType<typeof trackResizes>> {
    const rs = cs.spec.updateStrategy.resizeStrategy;
    const now = this.now();
    const tracking = trackResizes(
      pods.filter((p) => !p.metadata?.deletionTimestamp),
      cs.status?.resize,
      { type: cs.spec.updateStrategy.type, ...rs },
      now,
    );
    for (const { pod, from, view } of tracking.transitions) {
      const name = pod.metadata?.name ?? '';
      if (view.state) {
        const type = view.state === 'Infeasible' || view.reason === 'Error' ? 'Warning' : 'Normal';
        const message = `resize ${view.state}${view.message ? `: ${view.message}` : ''}`;
        this.deps.events.event(pod, type, `Resize${view.state}`, message);
        this.deps.events.event(stored, type, `Resize${view.state}`, `pod ${name}: ${message}`);
      } else if (from) {
        this.deps.events.event(pod, 'Normal', 'ResizeCompleted', 'the node actuated the new resources');
        this.deps.events.event(stored, 'Normal', 'ResizeCompleted', `pod ${name}`);
        const started = readUpdateState(pod)?.updateTimestamp;
        if (started) this.deps.resize.metrics?.duration.observe(Math.max(0, now - Date.parse(started)) / 1000);
      }
    }
    // A pod that cannot be scheduled (for example a replacement with resources no node fits) is
    // said so on the CloneSet too, where the user looks.
    for (const pod of pods) {
      const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
      if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
        this.deps.events.event(stored, 'Warning', 'PodUnschedulable', `pod ${pod.metadata?.name} cannot be scheduled: ${scheduled.message ?? ''}`);
      }
    }
    const recreate = tracking.recreate.map((r) => r.pod);
    for (const { pod, reason } of tracking.recreate) {
      this.deps.events.event(stored, 'Warning', 'ResizeRecreate', `pod ${pod.metadata?.name} is recreated with its new resources: ${reason}`);
    }
    await this.deletePods(cs, key, recreate, 'ResizeRecreate');
    conditions['ResizeBlocked'] =
      tracking.blocked.length > 0
        ? {
            status: 'True',
            reason: tracking.blocked.some((b) => b.reason === 'Infeasible') ? 'Infeasible' : 'Timeout',
            message: tracking.blocked.map((b) => `${b.pod.metadata?.name}: ${b.reason}${b.message ? ` (${b.message})` : ''}`).join('; ').slice(0, 2000),
          }
        : null;
    this.deps.resize.metrics?.record(cs.metadata?.namespace ?? '', cs.metadata?.name ?? '', tracking.status);
    return tracking;
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

  /** Finds or creates the revision for the current template; returns both revisions in use. */
  private async syncRevisions(cs: WireCloneSet): Promise<
    | { updateRevision: string; currentRevision: string; templates: Map<string, unknown> }
    | 'collision'
  > {
    const { client } = this.deps;
    const ns = cs.metadata?.namespace ?? 'default';
    const owned = this.deps.revisions.byIndex(OWNER_INDEX, cs.metadata?.uid ?? '');
    const summaries: RevisionSummary[] = owned.map((r) => ({
      name: r.metadata?.name ?? '',
      revision: r.revision,
      data: canonicalJSON(r.data?.template ?? {}),
    }));
    const templates = new Map<string, unknown>(owned.map((r) => [r.metadata?.name ?? '', r.data?.template]));
    const data = canonicalJSON(cs.spec.template);
    const equal = findEqualRevision(summaries, data);
    let updateRevision: string;
    if (equal) {
      updateRevision = equal.name;
      const next = nextRevisionNumber(summaries);
      if (equal.revision !== next - 1) {
        // Rollback to an earlier template: reuse its revision and make it the newest.
        await client.patch(`/apis/apps/v1/namespaces/${ns}/controllerrevisions/${equal.name}`, { revision: next }, 'merge');
      }
    } else {
      const collisionCount = cs.status?.collisionCount ?? 0;
      updateRevision = revisionName(cs.metadata?.name ?? '', templateHash(cs.spec.template, collisionCount));
      try {
        await client.create(`/apis/apps/v1/namespaces/${ns}/controllerrevisions`, {
          apiVersion: 'apps/v1',
          kind: 'ControllerRevision',
          metadata: {
            name: updateRevision,
            namespace: ns,
            labels: { ...(cs.spec.selector.matchLabels ?? {}), [CLONESET_LABEL]: cs.metadata?.name ?? '' },
            ownerReferences: [controllerRef(cs)],
          },
          revision: nextRevisionNumber(summaries),
          data: { template: cs.spec.template },
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const existing = await client.get<ControllerRevision>(`/apis/apps/v1/namespaces/${ns}/controllerrevisions/${updateRevision}`);
        if (canonicalJSON(existing.data?.template ?? {}) !== data) {
          // A different template already holds this name: bump collisionCount and try again.
          await client.patch(
            `/apis/${cs.apiVersion}/namespaces/${ns}/clonesets/${cs.metadata?.name}/status`,
            { status: { collisionCount: collisionCount + 1 } },
            'merge',
          );
          return 'collision';
        }
      }
      templates.set(updateRevision, cs.spec.template);
    }
    const stored = cs.status?.currentRevision;
    const currentRevision = stored && templates.has(stored) ? stored : updateRevision;
    return { updateRevision, currentRevision, templates };
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

  private async pruneRevisions(cs: WireCloneSet, pods: Pod[], status: CloneSetStatus): Promise<void> {
    const owned = this.deps.revisions.byIndex(OWNER_INDEX, cs.metadata?.uid ?? '');
    const live = new Set<string>([status.currentRevision ?? '', status.updateRevision ?? '']);
    for (const p of pods) live.add(p.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '');
    const summaries = owned.map((r) => ({ name: r.metadata?.name ?? '', revision: r.revision, data: '' }));
    for (const name of revisionsToPrune(summaries, live, cs.spec.revisionHistoryLimit ?? 10)) {
      try {
        await this.deps.client.delete(`/apis/apps/v1/namespaces/${cs.metadata?.namespace}/controllerrevisions/${name}`);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
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
