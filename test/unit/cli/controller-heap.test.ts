import { describe, expect, it } from '@jest/globals';
import yaml from 'js-yaml';
import { readFileSync } from 'node:fs';
import { parseQuantity, toBytes } from '../../../src/api/quantity.js';

// The controller Deployment's V8 heap sizing follows its memory limit (docs/decisions/0032-controller-memory.md).
interface Deployment {
  spec: {
    template: {
      spec: {
        containers: { name: string; command?: string[]; resources?: { limits?: { memory?: string } } }[];
      };
    };
  };
}

const controller = (yaml.load(readFileSync('config/manager/deployment.yaml', 'utf8')) as Deployment).spec.template.spec.containers.find(
  (c) => c.name === 'controller',
);
const nodeFlags = (controller?.command ?? []).join(' ');
const flag = (name: string): number => Number(new RegExp(`--${name}=(\\d+)`).exec(nodeFlags)?.[1] ?? NaN);
const limitMiB = Number(toBytes(parseQuantity(controller?.resources?.limits?.memory ?? '0')) / 1048576n);

describe('the controller Deployment sizes V8 for its memory limit', () => {
  it('gives the old space three quarters of limits.memory, so V8 collects before the kernel kills', () => {
    expect(limitMiB).toBeGreaterThan(0);
    expect(flag('max-old-space-size')).toBe((limitMiB * 3) / 4);
  });

  it("runs the image's entry point, node flags before it", () => {
    expect(controller?.command?.[0]).toBe('/usr/bin/node');
    expect(controller?.command?.at(-1)).toBe('/app/dist/cli/main.js');
    expect(readFileSync('hack/image.sh', 'utf8')).toContain('-entrypoint "/usr/bin/node /app/dist/cli/main.js"');
  });

  it('keeps the young generation small: a few MiB, not V8’s 16 MiB semi-spaces', () => {
    expect(flag('max-semi-space-size')).toBeGreaterThanOrEqual(1);
    expect(flag('max-semi-space-size')).toBeLessThanOrEqual(4);
  });
});
