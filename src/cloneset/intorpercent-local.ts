// Int-or-percent resolution for the rollout arithmetic (a local stand-in: src/api had no shared
// resolver when this was written; switch the imports over once one exists).
// Owns: turning `3` or `"25%"` into an absolute count of a total. Must not: default, clamp or
// validate against the CloneSet (callers do that), or touch Kubernetes types.

/** A Kubernetes IntOrString as it arrives in JSON: an integer, or a string such as "20%". */
export type IntOrString = number | string;

const PERCENT = /^(\d+(?:\.\d+)?)%$/;

/**
 * Resolves `value` against `total`: integers are returned unchanged, percentages are scaled and
 * rounded up (`roundUp`) or down. Throws a TypeError for anything else (a bare "3" included), as
 * apimachinery's GetValueFromIntOrPercent refuses strings without a percent sign.
 */
export function resolveIntOrPercent(value: IntOrString, total: number, roundUp: boolean): number {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) {
      throw new TypeError(`int-or-percent: ${value} is not an integer`);
    }
    return value;
  }
  const match = PERCENT.exec(value.trim());
  if (match === null || match[1] === undefined) {
    throw new TypeError(`int-or-percent: "${value}" is neither an integer nor a percentage like "20%"`);
  }
  const scaled = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}
