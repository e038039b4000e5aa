// Pod objects as a 1.34 kubelet (conditions form) or a 1.32 kubelet (legacy status.resize form)
// reports them, for the resize tables. Shapes follow what the API server returns: wire JSON,
// timestamps as RFC 3339 strings, status.containerStatuses with allocatedResources and resources.
import type { Pod } from '../../../src/api/wire.js';

export interface Res {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export interface ContainerFixture {
  name: string;
  /** What the spec asks for (desired). */
  spec: Res;
  /** What the node runs (status.containerStatuses[].resources); undefined: not reported. */
  actual?: Res | undefined;
  /** status.containerStatuses[].allocatedResources; defaults to actual's requests. */
  allocated?: Record<string, string>;
  resizePolicy?: { resourceName: string; restartPolicy: string }[];
  running?: boolean;
}

export interface PodFixture {
  name?: string;
  form: 'conditions' | 'legacy';
  generation?: number;
  observedGeneration?: number;
  containers: ContainerFixture[];
  /** Conditions form: PodResizePending / PodResizeInProgress to add. */
  resizeConditions?: {
    type: 'PodResizePending' | 'PodResizeInProgress';
    reason?: string;
    message?: string;
    lastTransitionTime?: string;
    observedGeneration?: number;
  }[];
  /** Legacy form: status.resize. */
  resize?: string;
  qosClass?: string;
}

const started = '2025-06-01T10:00:00Z';

export function makePod(f: PodFixture): Pod {
  const conditions = [
    { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: '2025-06-01T09:59:58Z' },
    { type: 'Initialized', status: 'True', lastTransitionTime: '2025-06-01T09:59:57Z' },
    { type: 'Ready', status: 'True', lastTransitionTime: started },
    { type: 'ContainersReady', status: 'True', lastTransitionTime: started },
    { type: 'PodScheduled', status: 'True', lastTransitionTime: '2025-06-01T09:59:56Z' },
  ].map((c) => (f.form === 'conditions' ? { ...c, observedGeneration: f.observedGeneration ?? 1 } : c));
  for (const rc of f.resizeConditions ?? []) {
    conditions.push({
      type: rc.type,
      status: 'True',
      ...(rc.reason !== undefined ? { reason: rc.reason } : {}),
      ...(rc.message !== undefined ? { message: rc.message } : {}),
      lastTransitionTime: rc.lastTransitionTime ?? '2025-06-01T10:05:00Z',
      lastProbeTime: '2025-06-01T10:05:30Z',
      observedGeneration: rc.observedGeneration ?? f.generation ?? 1,
    } as (typeof conditions)[number]);
  }
  const name = f.name ?? 'web-7x2kq';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'shop',
      uid: '5f0c7a3e-2b1d-4c55-9a0e-3d7b9c1e4f21',
      resourceVersion: '48213',
      creationTimestamp: '2025-06-01T09:59:55Z',
      labels: { app: 'web', 'controller-revision-hash': 'web-6d8f9c7b5', 'apps.tailor.dev/instance-id': '7x2kq' },
      ...(f.form === 'conditions' ? { generation: f.generation ?? 1 } : {}),
      ownerReferences: [
        { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'c1', controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      nodeName: 'worker-1',
      restartPolicy: 'Always',
      containers: f.containers.map((c) => ({
        name: c.name,
        image: `registry.example/${c.name}:1.4.2`,
        resources: c.spec,
        resizePolicy: c.resizePolicy ?? [
          { resourceName: 'cpu', restartPolicy: 'NotRequired' },
          { resourceName: 'memory', restartPolicy: 'NotRequired' },
        ],
      })),
    },
    status: {
      phase: 'Running',
      hostIP: '10.0.0.11',
      podIP: '10.244.1.17',
      startTime: '2025-06-01T09:59:56Z',
      qosClass: f.qosClass ?? 'Burstable',
      ...(f.form === 'conditions' ? { observedGeneration: f.observedGeneration ?? 1 } : {}),
      ...(f.resize !== undefined ? { resize: f.resize } : {}),
      conditions,
      containerStatuses: f.containers.map((c, i) => ({
        name: c.name,
        image: `registry.example/${c.name}:1.4.2`,
        imageID: `registry.example/${c.name}@sha256:${String(i).padStart(64, 'a')}`,
        containerID: `containerd://${String(i).padStart(64, 'c')}`,
        ready: c.running !== false,
        started: c.running !== false,
        restartCount: 0,
        state: c.running === false ? { waiting: { reason: 'ContainerCreating' } } : { running: { startedAt: started } },
        ...(c.actual !== undefined ? { resources: c.actual, allocatedResources: c.allocated ?? c.actual.requests ?? {} } : {}),
      })),
    },
  };
}

/** Requests equal to limits (a Guaranteed container). */
export const guaranteed = (cpu: string, memory: string): Res => ({ requests: { cpu, memory }, limits: { cpu, memory } });
