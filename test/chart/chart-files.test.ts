// The chart's own files, beside what it renders (issue 41): values.yaml and values.schema.json name
// the same keys, NOTES.txt tells what was installed and what to run next, and .helmignore keeps
// scratch files out of the package.
//
// values.yaml against values.schema.json, key path by key path, both ways: every key of values.yaml
// is declared in the schema's `properties` (the schema refuses an undeclared key, so one missing
// there fails every install that sets it), and every property the schema declares has its default
// in values.yaml (`helm show values` is where people find a value and its reason). The walk follows
// `properties` only: below a key the schema leaves open (no `properties`: a Kubernetes object such
// as `affinity`, or a map such as `commonLabels` whose `additionalProperties` gives only the type of
// its entries) the keys are the user's, not the chart's, and lists are entries, not keys.
// One exception, by name and nowhere else: `global`, declared at the root with no default. It is
// Helm's, not the chart's: Helm hands a parent chart's globals to a subchart under that key, and
// with `additionalProperties: false` at the root a schema without it refuses every install as a
// subchart (checked with helm v4.3.1). The chart reads nothing from it, so values.yaml gives none.
// It must stay an open object that nothing requires, so the exception cannot grow into a key the
// chart reads.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import yaml from 'js-yaml';
import { CHART, EVERYTHING_ON, NAMESPACE, notes, objects, type Obj, packageChart } from './render.js';

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  required?: string[];
}

/** Keys the schema may declare with no default in values.yaml: Helm's own (see the header). */
const HELM_KEYS = ['global'];

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const keyPath = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** Where values and schema disagree, one line per key path. */
function keyMismatches(values: unknown, schema: Schema, path = ''): string[] {
  const declared = schema.properties;
  if (!declared) return [];
  if (!isMap(values)) return [`${path}: the schema declares keys under it; values.yaml has ${JSON.stringify(values)}`];
  const out: string[] = [];
  const openMap = isMap(schema.additionalProperties);
  for (const [key, value] of Object.entries(values)) {
    const sub = declared[key];
    if (sub) out.push(...keyMismatches(value, sub, keyPath(path, key)));
    else if (!openMap) out.push(`${keyPath(path, key)}: in values.yaml, not declared in values.schema.json`);
  }
  for (const key of Object.keys(declared)) {
    if (key in values || (path === '' && HELM_KEYS.includes(key))) continue;
    out.push(`${keyPath(path, key)}: declared in values.schema.json, no default in values.yaml`);
  }
  return out;
}

const chartValues = (): unknown => yaml.load(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
const chartSchema = (): Schema => JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as Schema;

describe('values.yaml and values.schema.json', () => {
  it('name the same keys, at every depth', () => {
    expect(keyMismatches(chartValues(), chartSchema())).toEqual([]);
  });

  it('leave out of values.yaml only Helm’s own keys, declared open and required by nothing', () => {
    const schema = chartSchema();
    for (const key of HELM_KEYS) {
      expect(schema.properties?.[key]).toMatchObject({ type: 'object' });
      expect(schema.properties?.[key]?.properties).toBeUndefined();
      expect(schema.required ?? []).not.toContain(key);
    }
  });

  it('are compared both ways, with the key path of each difference', () => {
    const values = chartValues() as { controller: Record<string, unknown>; metrics: Record<string, unknown> };
    values.controller['replica'] = 3;
    delete values.metrics['port'];
    (values.controller['serviceAccount'] as Record<string, unknown>)['name'] = 'x';
    // Keys below an open schema (a Kubernetes object, a label map) are the user's: not reported.
    (values.controller['podSecurityContext'] as Record<string, unknown>)['fsGroup'] = 65532;
    values.controller['podLabels'] = { team: 'platform' };
    expect(keyMismatches(values, chartSchema()).sort()).toEqual([
      'controller.replica: in values.yaml, not declared in values.schema.json',
      'controller.serviceAccount.name: in values.yaml, not declared in values.schema.json',
      'metrics.port: declared in values.schema.json, no default in values.yaml',
    ]);
    expect(keyMismatches({ ...values, global: {} }, chartSchema())).toHaveLength(3);
  });
});

describe('NOTES.txt (helm install --dry-run=client, no cluster)', () => {
  it.each([
    ['the default values', {}],
    ['every optional part on', EVERYTHING_ON],
    ['the agent off', { agent: { enabled: false } }],
  ])('fits on a screen with %s: at most 25 lines', (_what, values) => {
    expect(notes(values).trimEnd().split('\n').length).toBeLessThanOrEqual(25);
  });

  it('says what was installed, how to check it in the release’s namespace, and the status command', () => {
    const text = notes();
    expect(text).toContain(`installed in ${NAMESPACE} (release tailor, image tailor.local/tailor:0.1.0)`);
    expect(text).toContain(`kubectl -n ${NAMESPACE} rollout status deployment/tailor-controller`);
    expect(text).toContain(`kubectl -n ${NAMESPACE} rollout status daemonset/tailor-agent`);
    expect(text).toContain(`kubectl -n ${NAMESPACE} get pods -l app.kubernetes.io/name=tailor`);
    expect(text).toContain('kubectl apply -f config/samples/cloneset.yaml');
    expect(text).toContain('kubectl tailor status web');
  });

  it('names only what the chart renders and the repository has', () => {
    const text = notes();
    const rendered = objects();
    const named = (kind: string): string[] =>
      rendered
        .filter((o: Obj) => o.kind === kind)
        .map((o) => o.metadata.name)
        .sort();
    const workloads = [
      ...[...text.matchAll(/\b(Deployment|DaemonSet) (tailor-[a-z-]+)/g)].map((m) => `${m[1]}/${m[2]}`),
      ...[...text.matchAll(/ (deployment|daemonset)\/(tailor-[a-z-]+)/g)].map(
        (m) => `${m[1] === 'deployment' ? 'Deployment' : 'DaemonSet'}/${m[2]}`,
      ),
    ];
    expect(new Set(workloads)).toEqual(new Set(['Deployment/tailor-controller', 'DaemonSet/tailor-agent']));
    for (const w of workloads) expect(rendered.map((o) => `${o.kind}/${o.metadata.name}`)).toContain(w);
    const policies = /admission policies (\S+), (\S+) and (\S+)\n/.exec(text)?.slice(1) ?? [];
    expect(policies.sort()).toEqual(named('ValidatingAdmissionPolicy'));
    expect(text).toContain(`the CloneSet CRD ${named('CustomResourceDefinition')[0]}`);
    // The sample is the CloneSet web the next lines read; its image is the one the note warns of.
    const sample = yaml.load(readFileSync('config/samples/cloneset.yaml', 'utf8')) as Obj;
    expect(sample.metadata.name).toBe('web');
    expect(JSON.stringify(sample.spec)).toContain('"image":"tailor.local/busybox:v1"');
    expect(text).toContain('kubectl get clone web -w');
    expect(readFileSync('crds/apps.tailor.dev_clonesets.yaml', 'utf8')).toMatch(/shortNames:\n\s+- clone\n/);
    expect(readFileSync('Makefile', 'utf8')).toMatch(/^install-plugin:/m);
    expect(readFileSync('README.md', 'utf8')).toMatch(/^## Operations$/m);
    expect(existsSync('docs')).toBe(true);
  });

  it('with the agent off, says there is none and checks no DaemonSet', () => {
    const text = notes({ agent: { enabled: false } });
    expect(text).toContain('no node agent (agent.enabled=false)');
    expect(text).not.toContain('daemonset/tailor-agent');
    expect(text).toContain(`kubectl -n ${NAMESPACE} rollout status deployment/tailor-controller`);
    expect(text).toContain('kubectl tailor status web');
  });

  it('with the CRD left to someone else, says so', () => {
    expect(notes({ crds: { enabled: false } })).toContain('no CRD (crds.enabled=false)');
  });
});

describe('helm package (.helmignore)', () => {
  /** Every file under dir, relative to it. */
  const files = (dir: string): string[] =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => !e.isDirectory())
      .map((e) => relative(dir, join(e.parentPath, e.name)))
      .sort();
  const listing = (tgz: string): string[] => {
    const r = spawnSync('tar', ['-tzf', tgz], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    return r.stdout
      .split('\n')
      .filter((l) => l && !l.endsWith('/'))
      .map((l) => l.replace(/^tailor\//, ''))
      .sort();
  };

  it('ships the chart’s files, the CRD’s content through its link, and no scratch file', () => {
    const work = mkdtempSync(join(tmpdir(), 'tailor-package-'));
    try {
      const copy = join(work, 'tailor');
      cpSync(CHART, copy, { recursive: true, dereference: true });
      const chartFiles = files(copy);
      const scratch = [
        '.git/HEAD',
        '.DS_Store',
        'values.yaml.orig',
        'values.yaml~',
        '.values.yaml.swp',
        'notes.tmp',
        'tailor-0.0.9.tgz',
        // A merge leftover in templates/ would otherwise be rendered, and installed, as a template.
        'templates/manager/deployment.yaml.orig',
        'tests/values_test.yaml',
      ];
      for (const f of scratch) {
        mkdirSync(dirname(join(copy, f)), { recursive: true });
        writeFileSync(join(copy, f), 'scratch\n');
      }
      expect(listing(packageChart(copy, work))).toEqual(chartFiles);
      expect(chartFiles).toEqual(
        expect.arrayContaining(['files/apps.tailor.dev_clonesets.yaml', 'templates/NOTES.txt']),
      );

      // The chart itself: the link's target is stored, not the link.
      mkdirSync(join(work, 'out'));
      const tgz = packageChart(CHART, join(work, 'out'));
      expect(listing(tgz)).toEqual(files(CHART));
      const crd = spawnSync('tar', ['-xzOf', tgz, 'tailor/files/apps.tailor.dev_clonesets.yaml'], { encoding: 'utf8' });
      expect(crd.stdout).toBe(readFileSync('crds/apps.tailor.dev_clonesets.yaml', 'utf8'));
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
