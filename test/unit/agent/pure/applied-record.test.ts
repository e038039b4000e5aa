// The agent's own record of what it applied: built from a request and the containers running
// now, and what each container runs with according to it (the spec once its container restarted).
import { describe, expect, test } from '@jest/globals';
import {
  appliedContainers,
  currentResources,
  recordedResources,
  type AppliedRecord,
} from '../../../../src/agent/pure/applied-record.js';
import type { Pod } from '../../../../src/api/wire.js';
import { buildPod } from '../../../support/fixtures/pods.js';

const spec = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
const grown = { requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '400m', memory: '256Mi' } };
const pod: Pod = buildPod({
  uid: 'u1',
  containers: [
    { name: 'app', resources: spec },
    { name: 'log', resources: { requests: { cpu: '10m' } } },
  ],
});
const record: AppliedRecord = { revision: 'r2', containers: { app: { containerID: 'c1', ...grown } } };

describe('appliedContainers', () => {
  test('records each named container against the instance running now', () => {
    const request = { revision: 'r2', containers: { app: grown, log: { requests: { cpu: '20m' } } } };
    expect(appliedContainers(request, new Map([['app', { id: 'c1' }]]))).toEqual({
      app: { containerID: 'c1', ...grown },
      log: { containerID: '', requests: { cpu: '20m' } },
    });
  });
});

describe('recordedResources', () => {
  test.each([
    ['a recorded container: its resources without the ID', 'app', grown],
    ['a container the record does not name', 'log', undefined],
  ])('%s', (_, name, want) => {
    expect(recordedResources(record, name)).toEqual(want);
  });
  test('no record', () => {
    expect(recordedResources(undefined, 'app')).toBeUndefined();
  });
});

describe('currentResources', () => {
  test.each<[string, AppliedRecord | undefined, Map<string, { id: string }>, object]>([
    [
      'no record: the spec',
      undefined,
      new Map([['app', { id: 'c1' }]]),
      { app: spec, log: { requests: { cpu: '10m' } } },
    ],
    [
      'the same container instance: what was applied',
      record,
      new Map([['app', { id: 'c1' }]]),
      { app: grown, log: { requests: { cpu: '10m' } } },
    ],
    ['not running: what was applied', record, new Map(), { app: grown, log: { requests: { cpu: '10m' } } }],
    [
      'restarted since: the spec',
      record,
      new Map([['app', { id: 'c2' }]]),
      { app: spec, log: { requests: { cpu: '10m' } } },
    ],
  ])('%s', (_, rec, running, want) => {
    expect(currentResources(pod, running, rec)).toEqual(want);
  });
});
