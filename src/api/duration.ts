// Go-style durations as kubectl and Kubernetes flags take them: 500ms, 30s, 5m, 1h30m; a bare
// number is seconds. The one parser every flag of ours uses. Pure; imports nothing.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds in `value`; throws an Error saying what a duration looks like. */
export function parseDuration(value: string): number {
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) {
    throw new Error(`"${value}" is not a duration: use e.g. 500ms, 30s, 5m or 1h30m`);
  }
  return Math.round(parts.reduce((sum, p) => sum + Number(p[1]) * (UNIT_MS[p[2] ?? 's'] ?? 1000), 0));
}
