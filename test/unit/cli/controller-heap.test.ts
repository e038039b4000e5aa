import { describe, expect, it } from '@jest/globals';
import yaml from 'js-yaml';
import { readFileSync } from 'node:fs';
import { parseQuantity, toBytes } from '../../../src/api/quantity.js';

// The controller's and the agent's V8 heap sizing follows each one's memory limit (docs/decisions/0032-controller-memory.md).
interface Deployment {
  spec: {
    template: {
      spec: {
        containers: { name: string; command?: string[]; resources?: { limits?: { memory?: string } } }[];
      };
    };
  };
}

type Container = Deployment['spec']['template']['spec']['containers'][number];
const containerOf = (file: string, name: string): Container | undefined =>
  (yaml.load(readFileSync(file, 'utf8')) as Deployment).spec.template.spec.containers.find((c) => c.name === name);

// The young generation and V8's memory-over-speed mode: the controller runs for speed, with 8 MiB
// (2 MiB and the mode made a bump cost 66 % more CPU, decision 102); the agent memory first, with
// a few MiB and the mode, on every node.
describe.each([
  ['the controller Deployment', 'config/manager/deployment.yaml', 'controller', { min: 4, max: 8, forSize: false }],
  ['the agent DaemonSet', 'config/agent/daemonset.yaml', 'agent', { min: 1, max: 4, forSize: true }],
])('%s sizes V8 for its memory limit', (_what, file, name, v8) => {
  const container = containerOf(file, name);
  const nodeFlags = (container?.command ?? []).join(' ');
  const flag = (flagName: string): number => Number(new RegExp(`--${flagName}=(\\d+)`).exec(nodeFlags)?.[1] ?? NaN);
  const limitMiB = Number(toBytes(parseQuantity(container?.resources?.limits?.memory ?? '0')) / 1048576n);

  it('gives the old space three quarters of limits.memory, so V8 collects before the kernel kills', () => {
    expect(limitMiB).toBeGreaterThan(0);
    expect(flag('max-old-space-size')).toBe((limitMiB * 3) / 4);
  });

  it("runs the image's entry point, node flags before it", () => {
    expect(container?.command?.[0]).toBe('/usr/bin/node');
    expect(container?.command?.at(-1)).toBe('/app/dist/cli/main.js');
    expect(readFileSync('hack/image.sh', 'utf8')).toContain('-entrypoint "/usr/bin/node /app/dist/cli/main.js"');
  });

  it('keeps the young generation below V8’s 16 MiB semi-spaces, at its own size, and the memory mode as chosen', () => {
    expect(flag('max-semi-space-size')).toBeGreaterThanOrEqual(v8.min);
    expect(flag('max-semi-space-size')).toBeLessThanOrEqual(v8.max);
    expect(container?.command?.includes('--optimize-for-size')).toBe(v8.forSize);
  });
});
