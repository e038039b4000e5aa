// The node agent's image pre-pull (docs/decisions/0052-images-pulled-before-the-drain.md): pulls,
// through CRI, the images the CloneSet pods of this node will run once their rollouts reach them
// (the revisions the controller names on this Node, decision 94; pure/prepull-plan.ts decides
// which images), a bounded number at a time, with the pods' imagePullSecrets;
// and keeps the node's report (api/prepull.ts) on its Node, which the controller reads before it
// drains a pod for new images. A pull that fails is reported once (Failed, with the runtime's
// message) and not retried: the kubelet pulls again when the container restarts and says why.
// Owns: the pulls in flight, their states, the secrets reads (as the node, never as the agent's
// service account) and the report write.
// Must not: pull anything no CloneSet pod of this node is about to run, or write anything but its
// own Node's report annotation.
import { Counter, type Registry } from 'prom-client';
import { ANNOTATION_PULLED_IMAGES, encodePulledImages, type ImagePull, type RegistryAuth } from '../api/prepull.js';
import { rfc3339Seconds } from '../api/time.js';
import type { Node, Pod } from '../api/wire.js';
import { parsePrePullRevisions } from '../api/prepull-revisions.js';
import type { CriClient } from '../cri/client.js';
import { ItemExponentialRateLimiter } from '../runtime/backoff.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import { isForbidden, isNotFound, type KubeClient } from '../runtime/kube-client.js';
import type { Logger } from '../runtime/logger.js';
import type { RevisionTemplates } from './revision-templates.js';
import {
  imagesToPrePull,
  nextReport,
  parseDockerConfigSecret,
  registryAuthFor,
  type DockerConfig,
  type ImageWanted,
} from './pure/prepull-plan.js';
import { errorMessage } from '../api/errors.js';

/** Retries of a failed report write: 250 ms doubling to 5 s (the one key is the report). */
const REPORT_KEY = 'report';

/** A pull may take long (large layers, slow registries); the kubelet's own pulls have no shorter bound. */
const PULL_TIMEOUT_MS = 30 * 60_000;

export interface PrePullerOptions {
  readonly nodeName: string;
  readonly pods: Pick<Informer<Pod>, 'list'>;
  /** This Node, whose annotation names the revisions its pods have not reached (api/prepull-revisions.ts). */
  readonly nodes: Pick<Informer<Node>, 'get'>;
  /** Those revisions with their containers, fetched by name (revision-templates.ts). */
  readonly revisions: Pick<RevisionTemplates, 'named'>;
  readonly cri: Pick<CriClient, 'imageStatus' | 'pullImage'>;
  /** Writes the node's report. */
  readonly client: Pick<KubeClient, 'patch'>;
  /**
   * Reads image pull secrets as this node (the kubelet's identity, which the Node authorizer limits
   * to the secrets of pods bound here); undefined when the agent has no node credentials, and then
   * every pull goes without secrets (docs/decisions/0053-agent-reads-pull-secrets-as-its-node.md).
   */
  readonly secrets: Pick<KubeClient, 'get'> | undefined;
  readonly logger: Logger;
  readonly registry: Registry;
  /** Asks for a pull of this image (the caller's work queue, bounded parallelism). */
  readonly schedulePull: (image: string) => void;
  /** Asks for the report to be brought up to date. */
  readonly scheduleReport: () => void;
  readonly now?: () => number;
}

export class PrePuller {
  private readonly pulls = new Map<string, ImagePull>();
  private wanted = new Map<string, ImageWanted>();
  private written: string | undefined;
  private readonly reportRetry = new ItemExponentialRateLimiter({ baseDelayMs: 250, maxDelayMs: 5_000 });
  private readonly results: Counter<'result'>;
  private readonly now: () => number;

  constructor(private readonly options: PrePullerOptions) {
    this.now = options.now ?? Date.now;
    this.results = new Counter({
      name: 'tailor_agent_image_prepulls_total',
      help: 'Images the node agent pulled ahead of a rollout, by result (pulled, present, failed)',
      labelNames: ['result'],
      registers: [options.registry],
    });
  }

  /**
   * Starts pulls for newly wanted images, forgets the others, and writes the report when it changed.
   * A controller may be holding a drain on this report, so a failed write is retried soon, with
   * a short capped backoff (250 ms doubling to 5 s) rather than the work queue's,
   * which grows to minutes: a stale Pulling would otherwise hold pods until the timeout.
   */
  async syncReport(): Promise<ReconcileResult> {
    const pods = this.options.pods.list();
    const named = parsePrePullRevisions(this.options.nodes.get(this.options.nodeName)?.metadata?.annotations);
    this.wanted = imagesToPrePull(pods, await this.options.revisions.named(named));
    for (const image of this.pulls.keys()) if (!this.wanted.has(image)) this.pulls.delete(image);
    for (const image of this.wanted.keys()) {
      if (this.pulls.has(image)) continue;
      this.pulls.set(image, { state: 'Pulling', since: rfc3339Seconds(this.now()) });
      this.options.schedulePull(image);
    }
    const report = encodePulledImages(nextReport(this.wanted.keys(), this.pulls));
    if (report === this.written) return undefined;
    const node = encodeURIComponent(this.options.nodeName);
    try {
      await this.options.client.patch(
        `/api/v1/nodes/${node}`,
        { metadata: { annotations: { [ANNOTATION_PULLED_IMAGES]: report } } },
        'merge',
      );
    } catch (err) {
      const requeueAfterMs = this.reportRetry.when(REPORT_KEY);
      this.options.logger.warn(
        { err, retryInMs: requeueAfterMs },
        `writing the image pre-pull report on node ${this.options.nodeName} failed`,
      );
      return { requeueAfterMs };
    }
    this.reportRetry.forget(REPORT_KEY);
    this.written = report;
    return undefined;
  }

  /**
   * Removes the report, so the controller stops waiting for pulls on this node: called when the
   * agent stops (an uninstalled agent leaves no promise behind). A failure is the caller's to log.
   */
  async withdrawReport(): Promise<void> {
    if (this.written === undefined) return;
    const node = encodeURIComponent(this.options.nodeName);
    await this.options.client.patch(
      `/api/v1/nodes/${node}`,
      { metadata: { annotations: { [ANNOTATION_PULLED_IMAGES]: null } } },
      'merge',
    );
    this.written = undefined;
  }

  /** Pulls one wanted image unless the runtime has it; records the outcome and asks for a report. */
  async pull(image: string): Promise<void> {
    const want = this.wanted.get(image);
    const pull = this.pulls.get(image);
    if (want === undefined || pull?.state !== 'Pulling') return;
    let outcome: ImagePull;
    try {
      if ((await this.options.cri.imageStatus(image)) !== undefined) {
        this.results.inc({ result: 'present' });
      } else {
        await this.options.cri.pullImage(image, await this.credentials(want), { timeoutMs: PULL_TIMEOUT_MS });
        this.results.inc({ result: 'pulled' });
        this.options.logger.info(
          { image, seconds: (this.now() - Date.parse(pull.since)) / 1000 },
          'pulled an image ahead of a rollout',
        );
      }
      outcome = { state: 'Pulled', since: pull.since };
    } catch (err) {
      this.results.inc({ result: 'failed' });
      const message = errorMessage(err);
      this.options.logger.warn({ image, err: message }, 'pulling an image ahead of a rollout failed');
      outcome = { state: 'Failed', since: pull.since, message };
    }
    // Still wanted as the same pull (not dropped and wanted again meanwhile): record it.
    if (this.pulls.get(image) === pull) this.pulls.set(image, outcome);
    this.options.scheduleReport();
  }

  /**
   * The credential for the image from the wanting pod's pull secrets. A secret that is missing, or
   * that this node may not read (no pod bound here names it any more), is skipped, as the kubelet
   * skips a missing one; the pull then goes on without it and fails visibly if the registry needs it.
   */
  private async credentials(want: ImageWanted): Promise<RegistryAuth | undefined> {
    const secrets = this.options.secrets;
    if (secrets === undefined) return undefined;
    const configs: DockerConfig[] = [];
    for (const name of want.pullSecrets) {
      const path = `/api/v1/namespaces/${encodeURIComponent(want.namespace)}/secrets/${encodeURIComponent(name)}`;
      try {
        const config = parseDockerConfigSecret(await secrets.get<unknown>(path));
        if (config !== undefined) configs.push(config);
      } catch (err) {
        if (!isNotFound(err) && !isForbidden(err)) throw err;
        this.options.logger.warn(
          { namespace: want.namespace, secret: name, image: want.image, err },
          'image pull secret not found or not readable by this node; pulling without it',
        );
      }
    }
    return registryAuthFor(want.image, configs);
  }
}
