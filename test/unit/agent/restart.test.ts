// The node agent's restart in place (decision 15): which containers a pod's restart request asks
// it to stop. Stopping twice would restart twice, so only the container still running with the
// named ID is stopped, only for a CloneSet pod, and only for the pod's own revision.
import { describe, expect, it } from '@jest/globals';
import { containersToStop } from '../../../src/agent/restart.js';
import type { Pod } from '../../../src/api/wire.js';
import { buildPod, cloneSetOwner, runningStatus, waitingStatus } from '../../support/fixtures/pods.js';

function pod(opts: { request?: unknown; revision?: string; owned?: boolean; appId?: string; appRunning?: boolean }): Pod {
  return buildPod({
    name: 'web-a',
    labels: { 'controller-revision-hash': opts.revision ?? 'web-2' },
    annotations: opts.request === undefined ? {} : { 'apps.tailor.dev/restart-request': JSON.stringify(opts.request) },
    ownerReferences: opts.owned === false ? [] : [cloneSetOwner()],
    containers: [{ name: 'app', image: 'a' }],
    initContainers: [{ name: 'mesh', image: 'm', restartPolicy: 'Always' }],
    containerStatuses: [
      opts.appRunning === false
        ? waitingStatus('app', 'CrashLoopBackOff', { containerID: opts.appId ?? 'containerd://aaa', image: 'a', imageID: 'x', ready: true })
        : runningStatus('app', { containerID: opts.appId ?? 'containerd://aaa', image: 'a', imageID: 'x' }),
    ],
    status: {
      initContainerStatuses: [runningStatus('mesh', { containerID: 'containerd://mmm', image: 'm', imageID: 'y' })],
    },
  });
}
const both = { revision: 'web-2', containers: { app: 'containerd://aaa', mesh: 'containerd://mmm' } };

describe('containersToStop', () => {
  it.each([
    ['the named containers running with the named IDs, sidecar included', pod({ request: both }), ['app:aaa', 'mesh:mmm']],
    ['a container already restarted (new ID)', pod({ request: both, appId: 'containerd://bbb' }), ['mesh:mmm']],
    ['a container not running', pod({ request: both, appRunning: false }), ['mesh:mmm']],
    ['a request of another revision', pod({ request: both, revision: 'web-3' }), []],
    ['a pod no CloneSet controls', pod({ request: both, owned: false }), []],
    ['no request', pod({}), []],
    ['a request that does not parse', pod({ request: { revision: 'web-2', containers: {} } }), []],
  ])('%s', (_, subject, expected) => {
    expect(containersToStop(subject).map((c) => `${c.name}:${c.containerId}`)).toEqual(expected);
  });
});
