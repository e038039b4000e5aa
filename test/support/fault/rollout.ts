// What the fault tier needs to say "nothing lost" about an in-place image rollout: a CloneSet of
// pods that become Ready a little after each restart (so a rollout lasts long enough to be hit
// mid-way), a recorder that watches the pods for the whole scenario (every UID ever seen, each
// pod's image history and restart count), the end-state checks — no pod updated twice, none
// recreated, no orphan, the rollout complete, the status converged — and each scenario's recovery row.
// Owns: its watch. Must not: write to the cluster.
import { expect } from '@jest/globals';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { KubeClient } from '../../../src/runtime/kube-client.js';
import type { Pod } from '../../../src/api/wire.js';
import { streamWatch } from '../cluster/watch-stream.js';
import { activePods, cloneSetManifest, readCloneSet, type TestCloneSet } from '../fixtures/cloneset.js';

export const IMAGE_V1 = 'tailor.local/busybox:v1';
export const IMAGE_V2 = 'tailor.local/busybox:v2';

/** A CloneSet whose pods restart in place on an image change and turn Ready ~2 s after starting. */
export function slowReadyCloneSet(name: string, replicas: number): TestCloneSet {
  return cloneSetManifest(
    name,
    { replicas, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
    {
      containers: [
        {
          name: 'main',
          image: IMAGE_V1,
          imagePullPolicy: 'Never',
          command: ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
          readinessProbe: { exec: { command: ['/bin/true'] }, initialDelaySeconds: 2, periodSeconds: 1 },
        },
      ],
    },
  );
}

interface PodHistory {
  name: string;
  /** Each distinct spec image in the order seen. */
  images: string[];
  firstRestartCount: number;
  lastRestartCount: number;
  deleted: boolean;
}

/**
 * Watches a CloneSet's pods from a list onwards and keeps each pod's history by UID. When its
 * watch ends (the API server restarted) it lists and watches again; a UID missing from that list
 * counts as deleted.
 */
export class RolloutRecorder {
  readonly pods = new Map<string, PodHistory>();
  private readonly abort = new AbortController();

  private constructor(
    private readonly client: KubeClient,
    private readonly path: string,
    private readonly labelSelector: string,
  ) {}

  static async start(client: KubeClient, ns: string, app: string): Promise<RolloutRecorder> {
    const r = new RolloutRecorder(client, `/api/v1/namespaces/${ns}/pods`, `app=${app}`);
    const { ended } = await r.listAndWatch();
    void r.follow(ended);
    return r;
  }

  /** Lists, then opens a watch; `ended` settles when the watch ends. */
  private async listAndWatch(): Promise<{ ended: Promise<void> }> {
    const { client, path, labelSelector } = this;
    const initial = await client.list<Pod>(path, { labelSelector });
    const listed = new Set(initial.items.map((p) => p.metadata?.uid));
    for (const [uid, h] of this.pods) if (!listed.has(uid)) h.deleted = true;
    for (const pod of initial.items) this.record('ADDED', pod);
    const response = await streamWatch<Pod>(
      client,
      path,
      { labelSelector, resourceVersion: initial.metadata?.resourceVersion },
      this.abort.signal,
      (event) => this.record(event.type, event.object),
    );
    const ended = new Promise<void>((resolve) => {
      response.body.on('end', resolve);
      response.body.on('error', () => resolve());
      response.body.on('close', resolve);
    });
    return { ended };
  }

  /** Re-lists and re-watches whenever the watch ends, until stop(). */
  private async follow(ended: Promise<void>): Promise<void> {
    for (;;) {
      await ended;
      if (this.abort.signal.aborted) return;
      await new Promise((r) => setTimeout(r, 500));
      try {
        ({ ended } = await this.listAndWatch());
      } catch {
        ended = Promise.resolve();
      }
    }
  }

  stop(): void {
    this.abort.abort();
  }

  /** Pods whose spec already asks for `image`. */
  podsAt(image: string): string[] {
    return [...this.pods.values()]
      .filter((p) => !p.deleted && p.images[p.images.length - 1] === image)
      .map((p) => p.name);
  }

  private record(type: string, pod: Pod): void {
    const uid = pod.metadata?.uid;
    if (!uid || type === 'BOOKMARK' || type === 'ERROR') return;
    const image = pod.spec?.containers?.[0]?.image ?? '';
    const restarts = pod.status?.containerStatuses?.[0]?.restartCount ?? 0;
    let h = this.pods.get(uid);
    if (!h) {
      h = {
        name: pod.metadata?.name ?? '',
        images: [],
        firstRestartCount: restarts,
        lastRestartCount: restarts,
        deleted: false,
      };
      this.pods.set(uid, h);
    }
    if (h.images[h.images.length - 1] !== image) h.images.push(image);
    h.lastRestartCount = Math.max(h.lastRestartCount, restarts);
    if (type === 'DELETED' || pod.metadata?.deletionTimestamp) h.deleted = true;
  }
}

export interface NothingLostExpectation {
  replicas: number;
  /** UIDs of the pods before the rollout. */
  before: Set<string>;
  /** Pods deleted on purpose by the scenario (their replacements are expected new UIDs). */
  deletedOnPurpose?: number;
}

/**
 * The end state every scenario must reach: the rollout complete and the status converged; every
 * original pod that was not deleted on purpose updated in place exactly once (one image change,
 * one container restart, same UID); replacements created at the new image; no orphan.
 */
export async function expectNothingLost(
  client: KubeClient,
  ns: string,
  name: string,
  recorder: RolloutRecorder,
  want: NothingLostExpectation,
): Promise<void> {
  const cs = await readCloneSet(client, ns, name);
  const pods = await activePods(client, ns, name);
  const deletedOnPurpose = want.deletedOnPurpose ?? 0;
  // Rollout complete, status converged.
  expect(pods).toHaveLength(want.replicas);
  expect(pods.every((p) => p.spec?.containers?.[0]?.image === IMAGE_V2)).toBe(true);
  expect(cs.status?.observedGeneration).toBe(cs.metadata?.generation);
  expect(cs.status).toMatchObject({
    replicas: want.replicas,
    readyReplicas: want.replicas,
    updatedReplicas: want.replicas,
    updatedReadyReplicas: want.replicas,
  });
  expect(cs.status?.currentRevision).toBe(cs.status?.updateRevision);
  // No orphan: every pod with the app's label is controlled by this CloneSet.
  for (const pod of pods) {
    const owner = pod.metadata?.ownerReferences?.find((o) => o.controller);
    expect({ pod: pod.metadata?.name, owner: owner?.uid }).toEqual({
      pod: pod.metadata?.name,
      owner: cs.metadata?.uid,
    });
  }
  // None recreated, none updated twice.
  const survivors = pods.filter((p) => want.before.has(p.metadata?.uid ?? ''));
  expect(survivors).toHaveLength(want.replicas - deletedOnPurpose);
  for (const pod of survivors) {
    const h = recorder.pods.get(pod.metadata?.uid ?? '')!;
    expect({ pod: h.name, images: h.images, restarts: h.lastRestartCount - h.firstRestartCount }).toEqual({
      pod: h.name,
      images: [IMAGE_V1, IMAGE_V2],
      restarts: 1,
    });
  }
  const created = [...recorder.pods.entries()].filter(([uid]) => !want.before.has(uid));
  expect(created).toHaveLength(deletedOnPurpose);
  for (const [, h] of created) expect({ pod: h.name, images: h.images }).toEqual({ pod: h.name, images: [IMAGE_V2] });
}

export interface RecoveryRow {
  scenario: string;
  recoveryMs: number;
  measured: string;
  rolloutMs: number;
}

/** Where the tier's rows gather across its test files; test/support/fault/teardown.js prints them as one table. */
export const RECOVERY_ROWS = '.tailor/test-results/fault-recovery.jsonl';

export function recordRecovery(row: RecoveryRow): void {
  mkdirSync(dirname(RECOVERY_ROWS), { recursive: true });
  appendFileSync(RECOVERY_ROWS, `${JSON.stringify(row)}\n`);
  process.stdout.write(
    `fault: ${row.scenario}: recovered in ${(row.recoveryMs / 1000).toFixed(1)} s (${row.measured})\n`,
  );
}
