// Builds an RFC 7386 JSON merge patch that turns `from` into `to`: keys that disappeared become
// null (a merge patch leaves absent keys untouched, so without this a field that went away,
// such as an emptied list, would linger on the server). Arrays and scalars are replaced whole.
// Pure.
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

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
