// JSON helpers every layer uses: a canonical form (sorted keys) for comparing and hashing JSON
// values, and RFC 7386 merge patches that null out what disappeared. Pure; imports nothing.

/** JSON with object keys sorted, so equal templates serialise identically. */
export function canonicalJSON(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJSON).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJSON(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Two JSON values are equal, key order ignored; absent and null are the same. */
export const sameJSON = (a: unknown, b: unknown): boolean => canonicalJSON(a ?? null) === canonicalJSON(b ?? null);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Builds an RFC 7386 JSON merge patch that turns `from` into `to`: keys that disappeared become
 * null (a merge patch leaves absent keys untouched, so without this a field that went away,
 * such as an emptied list, would linger on the server). Arrays and scalars are replaced whole.
 */
export function mergePatch(from: unknown, to: unknown): Json {
  if (!isObject(from) || !isObject(to)) return (to ?? null) as Json;
  const patch: Record<string, Json> = {};
  for (const key of Object.keys(from)) if (to[key] === undefined) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    if (value === undefined) continue;
    patch[key] = isObject(from[key]) && isObject(value) ? mergePatch(from[key], value) : (value as Json);
  }
  return patch;
}
