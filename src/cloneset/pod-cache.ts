// What of a pod the CloneSet controller keeps in its cache: the fields its decisions read
// (identity, labels and annotations, owner, the containers' names, images, resources and resize
// policies, readiness gates, node, and the status the kubelet reports about them) and nothing
// else. Env, commands, probes, volumes, affinity and the like are most of a pod's bytes and no
// decision reads them; the patches Tailor sends never need them either.
// Pure. Must not: keep anything a planner, the in-place step machine or the resize view reads.
import type { Pod } from '../api/wire.js';

type Spec = NonNullable<Pod['spec']>;
type Status = NonNullable<Pod['status']>;
type ContainerStatus = NonNullable<Status['containerStatuses']>[number];

const container = (c: Spec['containers'][number]): Spec['containers'][number] => ({
  name: c.name,
  ...(c.image !== undefined ? { image: c.image } : {}),
  ...(c.resources !== undefined ? { resources: c.resources } : {}),
  ...(c.resizePolicy !== undefined ? { resizePolicy: c.resizePolicy } : {}),
  ...(c.restartPolicy !== undefined ? { restartPolicy: c.restartPolicy } : {}),
});

const containerStatus = (s: ContainerStatus): ContainerStatus => ({
  name: s.name,
  ready: s.ready,
  restartCount: s.restartCount,
  image: s.image,
  imageID: s.imageID,
  ...(s.containerID !== undefined ? { containerID: s.containerID } : {}),
  ...(s.started !== undefined ? { started: s.started } : {}),
  ...(s.state !== undefined ? { state: s.state } : {}),
  ...(s.resources !== undefined ? { resources: s.resources } : {}),
  ...(s.allocatedResources !== undefined ? { allocatedResources: s.allocatedResources } : {}),
});

/** The pod as the controller's cache keeps it. */
export function trimPod(pod: Pod): Pod {
  const { metadata, spec, status } = pod;
  const trimmed: Pod = { apiVersion: pod.apiVersion, kind: pod.kind };
  if (metadata) {
    const { managedFields: _managed, ...kept } = metadata;
    trimmed.metadata = kept;
  }
  if (spec) {
    trimmed.spec = {
      containers: spec.containers.map(container),
      ...(spec.initContainers ? { initContainers: spec.initContainers.map(container) } : {}),
      ...(spec.nodeName !== undefined ? { nodeName: spec.nodeName } : {}),
      ...(spec.readinessGates ? { readinessGates: spec.readinessGates } : {}),
    };
  }
  if (status) {
    trimmed.status = {
      ...(status.phase !== undefined ? { phase: status.phase } : {}),
      ...(status.conditions ? { conditions: status.conditions } : {}),
      ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
      ...(status.resize !== undefined ? { resize: status.resize } : {}),
      ...(status.qosClass !== undefined ? { qosClass: status.qosClass } : {}),
      ...(status.containerStatuses ? { containerStatuses: status.containerStatuses.map(containerStatus) } : {}),
      ...(status.initContainerStatuses ? { initContainerStatuses: status.initContainerStatuses.map(containerStatus) } : {}),
    };
  }
  return trimmed;
}
