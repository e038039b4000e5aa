// The preStop hook the node agent runs before a restart in place, decided as the kubelet decides
// it: exec, HTTP GET (host, port by number or name, path, headers) or sleep; none without a hook or
// with a grace period of 0; and the grace period left for the stop, in whole seconds, never below 2.
import { describe, expect, it } from '@jest/globals';
import {
  DEFAULT_GRACE_SECONDS,
  HOOK_USER_AGENT,
  stopGraceSeconds,
  stopPlan,
} from '../../../../src/agent/pure/prestop-plan.js';
import type { Pod } from '../../../../src/api/wire.js';
import { buildPod, type Container } from '../../../support/fixtures/pods.js';

type Lifecycle = NonNullable<Container['lifecycle']>;
type Handler = NonNullable<Lifecycle['preStop']>;

function pod(
  preStop: Handler | undefined,
  opts: { grace?: number; podIP?: string; ports?: Container['ports']; sidecar?: boolean } = {},
): Pod {
  const app: Container = {
    name: 'app',
    image: 'a',
    ...(preStop ? { lifecycle: { preStop } } : {}),
    ...(opts.ports ? { ports: opts.ports } : {}),
  };
  return buildPod({
    containers: opts.sidecar ? [{ name: 'other', image: 'o' }] : [app],
    ...(opts.sidecar ? { initContainers: [{ ...app, restartPolicy: 'Always' }] } : {}),
    spec: opts.grace === undefined ? {} : { terminationGracePeriodSeconds: opts.grace },
    ...(opts.podIP ? { status: { podIP: opts.podIP } } : {}),
  });
}

const defaults = { 'user-agent': HOOK_USER_AGENT, accept: '*/*' };
const ports = [
  { name: 'admin', containerPort: 9901 },
  { name: 'http', containerPort: 8080 },
];

describe('stopPlan: which hook runs before the stop', () => {
  it.each<[string, Pod, unknown]>([
    ['a container without a preStop hook runs none', pod(undefined), undefined],
    [
      'an exec hook runs its command',
      pod({ exec: { command: ['/bin/sh', '-c', 'echo bye >> /data/log'] } }),
      { kind: 'exec', command: ['/bin/sh', '-c', 'echo bye >> /data/log'] },
    ],
    [
      'a native sidecar runs its own hook',
      pod({ exec: { command: ['drain'] } }, { sidecar: true }),
      { kind: 'exec', command: ['drain'] },
    ],
    [
      'an exec hook without a command is invalid',
      pod({ exec: {} }),
      { kind: 'invalid', reason: 'the exec hook has no command' },
    ],
    ['a sleep hook sleeps its seconds', pod({ sleep: { seconds: 5 } }), { kind: 'sleep', seconds: 5 }],
    ['a zero-second sleep is still a hook', pod({ sleep: { seconds: 0 } }), { kind: 'sleep', seconds: 0 }],
    [
      'an httpGet hook goes to the pod IP over http by default, the path given a leading slash',
      pod({ httpGet: { port: 8080, path: 'shutdown' } }, { podIP: '10.0.0.7' }),
      { kind: 'httpGet', scheme: 'http', host: '10.0.0.7', port: 8080, path: '/shutdown', headers: defaults },
    ],
    [
      'an httpGet hook without a path asks for /',
      pod({ httpGet: { port: 80 } }, { podIP: '10.0.0.7' }),
      { kind: 'httpGet', scheme: 'http', host: '10.0.0.7', port: 80, path: '/', headers: defaults },
    ],
    [
      'a named port is the container port of that name',
      pod({ httpGet: { port: 'admin', path: '/drain?graceful=1' } }, { podIP: '10.0.0.7', ports }),
      { kind: 'httpGet', scheme: 'http', host: '10.0.0.7', port: 9901, path: '/drain?graceful=1', headers: defaults },
    ],
    [
      'a port name the container does not have is invalid',
      pod({ httpGet: { port: 'metrics' } }, { podIP: '10.0.0.7', ports }),
      { kind: 'invalid', reason: "the httpGet hook's port metrics is not a port of container app" },
    ],
    [
      'a numeric string that names no port is its number, as the kubelet reads it',
      pod({ httpGet: { port: '8081' } }, { podIP: '10.0.0.7', ports }),
      { kind: 'httpGet', scheme: 'http', host: '10.0.0.7', port: 8081, path: '/', headers: defaults },
    ],
    [
      'a port out of range is invalid',
      pod({ httpGet: { port: 70000 } }, { podIP: '10.0.0.7' }),
      { kind: 'invalid', reason: "the httpGet hook's port 70000 is not a valid port number" },
    ],
    [
      'an explicit host and HTTPS scheme are used, IPv6 without brackets',
      pod({ httpGet: { host: '[fd00::1]', scheme: 'HTTPS', port: 8443, path: '/quit' } }, { podIP: '10.0.0.7' }),
      { kind: 'httpGet', scheme: 'https', host: 'fd00::1', port: 8443, path: '/quit', headers: defaults },
    ],
    [
      'the hook headers are sent, a repeated name with both values, and they replace the default User-Agent',
      pod(
        {
          httpGet: {
            port: 80,
            httpHeaders: [
              { name: 'X-Drain', value: 'a' },
              { name: 'x-drain', value: 'b' },
              { name: 'User-Agent', value: 'mine' },
              { name: 'Host', value: 'svc.local' },
            ],
          },
        },
        { podIP: '10.0.0.7' },
      ),
      {
        kind: 'httpGet',
        scheme: 'http',
        host: '10.0.0.7',
        port: 80,
        path: '/',
        headers: { 'user-agent': 'mine', accept: '*/*', 'x-drain': ['a', 'b'], host: 'svc.local' },
      },
    ],
    [
      'an httpGet hook without a host on a pod without an IP is invalid',
      pod({ httpGet: { port: 80 } }),
      { kind: 'invalid', reason: 'the httpGet hook names no host and the pod has no IP' },
    ],
    [
      'a tcpSocket hook is invalid, as on the kubelet',
      pod({ tcpSocket: { port: 80 } }),
      {
        kind: 'invalid',
        reason: 'the hook has no exec, httpGet or sleep action (tcpSocket is not supported as a hook)',
      },
    ],
    ['a grace period of 0 runs no hook', pod({ exec: { command: ['drain'] } }, { grace: 0 }), undefined],
  ])('%s', (_, subject, hook) => {
    expect(stopPlan(subject, 'app').hook).toEqual(hook);
  });

  it('the grace period is the pod terminationGracePeriodSeconds, else the kubelet default of 30 s', () => {
    expect(stopPlan(pod(undefined, { grace: 90 }), 'app').graceSeconds).toBe(90);
    expect(stopPlan(pod(undefined), 'app').graceSeconds).toBe(DEFAULT_GRACE_SECONDS);
  });

  it('a container the pod does not have runs no hook', () => {
    expect(stopPlan(pod({ exec: { command: ['drain'] } }), 'nope').hook).toBeUndefined();
  });
});

describe('stopGraceSeconds: what the stop gets after the hook', () => {
  it.each([
    ['no hook: the whole grace period', 30, 0, 30],
    ['a hook of 4.9 s uses 4 whole seconds', 30, 4_900, 26],
    ['a hook of exactly 10 s uses 10', 30, 10_000, 20],
    ['a hook that used the whole grace period leaves the 2 s minimum', 30, 30_000, 2],
    ['a hook that ran past the grace period still leaves 2 s', 30, 45_000, 2],
    ['one second left is raised to 2', 10, 9_000, 2],
    ['a grace period of 0 stops with the 2 s minimum', 0, 0, 2],
    ['a grace period of 1 stops with the 2 s minimum', 1, 0, 2],
  ])('%s', (_, grace, elapsedMs, expected) => {
    expect(stopGraceSeconds(grace, elapsedMs)).toBe(expected);
  });
});
