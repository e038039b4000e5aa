import { describe, expect, it } from '@jest/globals';
import type { ControllerRevision } from '../../../../src/api/revision.js';
import { trimRevisionForAgent } from '../../../../src/agent/pure/cache.js';

// Issue 31.2: what every agent keeps of a revision is bounded by what the CRD bounds.
describe("the agent's cached revision keeps only cpu and memory of a container's resources", () => {
  const revision = (resources: Record<string, Record<string, string>>, resizePolicy: object[]): ControllerRevision =>
    ({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'web-1', namespace: 'ns', uid: 'r1' },
      revision: 1,
      data: { template: { spec: { containers: [{ name: 'app', image: 'app:v1', resources, resizePolicy }] } } },
    }) as ControllerRevision;
  const manyResources = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`example.com/r${i}`, '1']));

  it.each<[string, Record<string, Record<string, string>>, object[], object]>([
    [
      'cpu and memory kept, other resource names dropped',
      { requests: { cpu: '100m', memory: '64Mi', ...manyResources }, limits: { memory: '64Mi', ...manyResources } },
      [],
      { resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '64Mi' } }, resizePolicy: [] },
    ],
    ['only other resources: an empty resources', { limits: manyResources }, [], { resources: {}, resizePolicy: [] }],
    [
      "the resize policy's cpu and memory entries kept",
      {},
      [
        { resourceName: 'cpu', restartPolicy: 'NotRequired' },
        { resourceName: 'memory', restartPolicy: 'RestartContainer' },
        { resourceName: 'example.com/gpu', restartPolicy: 'NotRequired' },
      ],
      {
        resources: {},
        resizePolicy: [
          { resourceName: 'cpu', restartPolicy: 'NotRequired' },
          { resourceName: 'memory', restartPolicy: 'RestartContainer' },
        ],
      },
    ],
  ])('%s', (_name, resources, resizePolicy, expected) => {
    const container = trimRevisionForAgent(revision(resources, resizePolicy)).data?.template?.spec?.containers?.[0];
    expect(container).toEqual({ name: 'app', image: 'app:v1', ...expected });
  });
});
