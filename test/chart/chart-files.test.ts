// The chart's own files, beside what it renders (issue 41): NOTES.txt tells what was installed and
// what to run next, and .helmignore keeps scratch files out of the package.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import yaml from 'js-yaml';
import { CHART, EVERYTHING_ON, NAMESPACE, notes, objects, type Obj, packageChart } from './render.js';

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
