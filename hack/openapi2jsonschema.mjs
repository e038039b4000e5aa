// Kubernetes' OpenAPI v2 document (swagger.json, as a release publishes it in
// k8s.io/kubernetes/api/openapi-spec/) -> one standalone, strict JSON schema per kind, in the
// layout kubeconform reads (<dir>/<kind>[-<group>]-<version>.json, all lower case; the group is its
// first DNS label, as kubeconform names it). What the converters behind kubeconform's published
// schemas do (instrumenta/openapi2jsonschema --kubernetes --strict --stand-alone), written out so
// it runs offline on this machine's Node:
//   - standalone: each file carries the definitions it reaches under "definitions" and refers to
//     them locally (so recursive types, JSONSchemaProps of a CRD, stay finite);
//   - strict: an object schema with properties and no additionalProperties gets
//     additionalProperties: false (an unknown field is an error, as `kubectl --validate=strict`);
//   - int-or-string and Quantity accept a string or a number; an optional field may be null (YAML
//     `key:` with no value; the API server drops it);
//   - apiVersion and kind are required and fixed to the file's group, version and kind.
//   node hack/openapi2jsonschema.mjs <swagger.json> <output dir>
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [input, out] = process.argv.slice(2);
if (!input || !out) {
  console.error('usage: node hack/openapi2jsonschema.mjs <swagger.json> <output dir>');
  process.exit(2);
}
const swagger = JSON.parse(readFileSync(input, 'utf8'));
const defs = swagger.definitions;
const REF = '#/definitions/';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** A copy of a schema made strict, nullable where optional, int-or-string and Quantity widened. */
function convert(schema, optional) {
  if (Array.isArray(schema)) return schema.map((s) => convert(s, false));
  if (schema === null || typeof schema !== 'object') return schema;
  if (schema.format === 'int-or-string') {
    return { oneOf: [{ type: 'string' }, { type: 'integer' }, ...(optional ? [{ type: 'null' }] : [])] };
  }
  const copy = {};
  const required = new Set(schema.required ?? []);
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties') {
      copy.properties = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, convert(s, !required.has(name))]));
    } else if (key === 'items' || key === 'additionalProperties') {
      copy[key] = convert(value, false);
    } else {
      copy[key] = value;
    }
  }
  if (copy.properties && copy.additionalProperties === undefined && !copy['x-kubernetes-preserve-unknown-fields']) {
    copy.additionalProperties = false;
  }
  if (optional && typeof copy.type === 'string') copy.type = [copy.type, 'null'];
  if (optional && copy.$ref) return { oneOf: [{ $ref: copy.$ref }, { type: 'null' }] };
  return copy;
}

/** Every definition a schema reaches, transitively. */
function reachable(name, seen = new Set()) {
  if (seen.has(name)) return seen;
  seen.add(name);
  const walk = (node) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      if (typeof node.$ref === 'string' && node.$ref.startsWith(REF)) reachable(node.$ref.slice(REF.length), seen);
      Object.values(node).forEach(walk);
    }
  };
  walk(defs[name]);
  return seen;
}

const definition = (name) =>
  name === QUANTITY ? { oneOf: [{ type: 'string' }, { type: 'number' }] } : convert(defs[name], false);

mkdirSync(out, { recursive: true });
let written = 0;
for (const [name, def] of Object.entries(defs)) {
  for (const gvk of def['x-kubernetes-group-version-kind'] ?? []) {
    const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
    const schema = definition(name);
    schema.properties = {
      ...schema.properties,
      apiVersion: { type: 'string', enum: [apiVersion] },
      kind: { type: 'string', enum: [gvk.kind] },
    };
    schema.required = [...new Set([...(schema.required ?? []), 'apiVersion', 'kind'])];
    schema.definitions = {};
    for (const other of reachable(name)) if (other !== name) schema.definitions[other] = definition(other);
    // References to the kind itself (rare: a List of its own kind) resolve to the root.
    const text = JSON.stringify(schema, null, 1).replaceAll(`"${REF}${name}"`, '"#"');
    const suffix = gvk.group ? `-${gvk.group.split('.')[0]}-${gvk.version}` : `-${gvk.version}`;
    writeFileSync(join(out, `${gvk.kind.toLowerCase()}${suffix}.json`), text);
    written += 1;
  }
}
console.log(`${written} schemas written to ${out}`);
