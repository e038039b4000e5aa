// A stand-in for the scheduler and kubelet in integration tests, where the control-plane test bed
// has neither. It acts only on pods in its namespace that name its scheduler, through the real
// API server, writing what a kubelet would: binds pods to a node, reports them Running with
// container statuses, computes Ready from containers *and readiness gates* (as the kubelet does),
// and finishes graceful deletion. Tests can hold pods not ready to simulate failing containers.
// Must not: touch pods of other schedulers (a real kubelet may be running on the full test bed).
import type { KubeClient } from '../../../src/runtime/kube-client.js';
import type { Pod } from '../../../src/api/wire.js';
import { isAlreadyExists, isNotFound } from '../../../src/runtime/kube-client.js';

export const FAKE_SCHEDULER = 'tailor-test-fake-scheduler';
export const FAKE_NODE = 'fake-node';

export class FakeKubelet {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  /** Pods (by name) whose containers report not ready. */
  readonly unready = new Set<string>();
  /** Images whose containers never become ready (a crash-looping release). */
  readonly brokenImages = new Set<string>();

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly periodMs = 150,
  ) {}

  start(): void {
    let rounds = 0;
    const loop = (): void => {
      if (this.stopped) return;
      // Register and heartbeat the node every few seconds like a kubelet, or the controller-manager
      // (full test bed) would garbage-collect pods bound to a node that does not exist.
      const beat = rounds++ % 20 === 0 ? this.heartbeat() : Promise.resolve();
      this.running = beat
        .then(() => this.sync())
        .catch(() => undefined)
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(loop, this.periodMs);
        });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.client.delete(`/api/v1/nodes/${FAKE_NODE}`).catch(() => undefined);
  }

  private async heartbeat(): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    try {
      await this.client.create('/api/v1/nodes', {
        metadata: { name: FAKE_NODE, labels: { 'tailor.dev/fake-node': 'true' } },
        // Real schedulers keep off it; only pods of the fake scheduler land here.
        spec: { taints: [{ key: 'tailor.dev/fake-node', value: 'true', effect: 'NoSchedule' }] },
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    await this.client.patch(
      `/api/v1/nodes/${FAKE_NODE}/status`,
      {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              message: 'fake kubelet',
              lastHeartbeatTime: now,
              lastTransitionTime: now,
            },
          ],
        },
      },
      'strategic',
    );
  }

  private async sync(): Promise<void> {
    const list = await this.client.list<Pod>(`/api/v1/namespaces/${this.namespace}/pods`);
    await Promise.all(list.items.filter((p) => p.spec?.schedulerName === FAKE_SCHEDULER).map((p) => this.syncPod(p)));
  }

  private async syncPod(pod: Pod): Promise<void> {
    const name = pod.metadata?.name ?? '';
    const base = `/api/v1/namespaces/${this.namespace}/pods/${name}`;
    try {
      if (pod.metadata?.deletionTimestamp) {
        await this.client.delete(base, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } });
        return;
      }
      if (!pod.spec?.nodeName) {
        await this.client.create(`${base}/binding`, {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace: this.namespace },
          target: { apiVersion: 'v1', kind: 'Node', name: FAKE_NODE },
        });
        return;
      }
      const wanted = this.desiredStatus(pod);
      if (JSON.stringify(pick(pod.status)) !== JSON.stringify(pick(wanted))) {
        // Strategic merge keys conditions by type, so the controller's own conditions are never overwritten.
        await this.client.patch(`${base}/status`, { status: wanted }, 'strategic');
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private desiredStatus(pod: Pod): NonNullable<Pod['status']> {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const containersReady =
      !this.unready.has(pod.metadata?.name ?? '') &&
      !(pod.spec?.containers ?? []).some((c) => this.brokenImages.has(c.image ?? ''));
    const gates = (pod.spec?.readinessGates ?? []).map((g) => g.conditionType);
    const others = (pod.status?.conditions ?? []).filter((c) => !KUBELET_CONDITIONS.includes(c.type));
    const gatesTrue = gates.every((t) => others.some((c) => c.type === t && c.status === 'True'));
    const ready = containersReady && gatesTrue;
    const keep = (type: string, status: string): { type: string; status: string; lastTransitionTime: string } => {
      const old = pod.status?.conditions?.find((c) => c.type === type);
      return { type, status, lastTransitionTime: old?.status === status ? (old.lastTransitionTime ?? now) : now };
    };
    return {
      phase: 'Running',
      podIP: pod.status?.podIP ?? '198.18.250.1',
      startTime: pod.status?.startTime ?? now,
      conditions: [
        keep('PodScheduled', 'True'),
        keep('ContainersReady', containersReady ? 'True' : 'False'),
        keep('Ready', ready ? 'True' : 'False'),
      ],
      containerStatuses: (pod.spec?.containers ?? []).map((c) => {
        const old = pod.status?.containerStatuses?.find((s) => s.name === c.name);
        const restarted = old && old.image !== c.image;
        return {
          name: c.name,
          image: c.image ?? '',
          imageID: `fake://${c.image}`,
          ready: containersReady,
          started: true,
          restartCount: (old?.restartCount ?? 0) + (restarted ? 1 : 0),
          state: { running: { startedAt: restarted ? now : (old?.state?.running?.startedAt ?? now) } },
        };
      }),
    };
  }
}

const KUBELET_CONDITIONS = ['Ready', 'ContainersReady', 'PodScheduled'];

function pick(status: Pod['status']): unknown {
  return {
    phase: status?.phase,
    conditions: (status?.conditions ?? [])
      .filter((c) => KUBELET_CONDITIONS.includes(c.type))
      .map((c) => `${c.type}=${c.status}`)
      .sort(),
    containers: (status?.containerStatuses ?? []).map((c) => `${c.name}:${c.image}:${c.ready}:${c.restartCount}`),
  };
}
