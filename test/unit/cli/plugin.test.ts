// Tables for `kubectl tailor`'s command line: revision numbers and output formats it accepts or
// refuses, the verbs and flags it offers, and bad input ending as one line on stderr and exit 3
// before anything talks to a cluster.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { InvalidArgumentError } from 'commander';
import { parseOutput, parseRevision, parseToRevision, runPlugin, verbSpecs } from '../../../src/cli/plugin.js';

describe('revision and output arguments', () => {
  it.each([
    ['1', 1],
    ['12', 12],
    [' 3 ', 3],
  ])('--revision %j is revision %d', (text, n) => {
    expect(parseRevision(text)).toBe(n);
  });

  it.each(['0', '-1', '1.5', 'two', '', '99999999999999999999'])('--revision %j is refused', (text) => {
    expect(() => parseRevision(text)).toThrow(InvalidArgumentError);
  });

  it('--to-revision 0 means the previous revision, as kubectl rollout undo has it', () => {
    expect(parseToRevision('0')).toBe(0);
    expect(parseToRevision('4')).toBe(4);
    expect(() => parseToRevision('-2')).toThrow(InvalidArgumentError);
  });

  it('-o takes yaml or json only', () => {
    expect(parseOutput('json')).toBe('json');
    expect(parseOutput('yaml')).toBe('yaml');
    expect(() => parseOutput('wide')).toThrow(/not an output format \(yaml or json\)/);
  });
});

describe('verbs', () => {
  it('offers the rollout verbs, each on one CloneSet with -n and --kubeconfig', () => {
    const specs = verbSpecs();
    expect(specs.map((v) => `${v.name}:${v.arg}`)).toEqual([
      'status:clone',
      'history:clone',
      'undo:clone',
      'pause:clone',
      'resume:clone',
      'restart:clone',
      'completion:shell',
    ]);
    for (const verb of specs.filter((v) => v.arg === 'clone')) {
      const flags = verb.options.flatMap((o) => o.flags);
      expect(flags).toEqual(expect.arrayContaining(['-n', '--namespace', '--kubeconfig']));
    }
  });
});

describe('bad input', () => {
  let stderr: string;
  let stdout: string;
  beforeEach(() => {
    stderr = '';
    stdout = '';
    jest
      .spyOn(process.stderr, 'write')
      .mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
    jest
      .spyOn(process.stdout, 'write')
      .mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    process.exitCode = undefined;
  });

  const cases: [string[], RegExp][] = [
    [['history'], /^error: missing required argument 'clone'$/],
    [
      ['undo', 'web', '--to-revision', 'x'],
      /^error: option '--to-revision <n>' argument 'x' is invalid\. "x" is not a revision number/,
    ],
    [['history', 'web', '--revision', '0'], /^error: option '--revision <n>' argument '0' is invalid\./],
    [['history', 'web', '-o', 'wide'], /is not an output format \(yaml or json\)$/],
    [['pause', 'web', 'api'], /^error: too many arguments for 'pause'/],
    [['restart', 'web', '--force'], /^error: unknown option '--force'$/],
    [['completion', 'fish'], /"fish" is not a supported shell \(bash or zsh\)$/],
    [['rollback', 'web'], /^error: unknown command 'rollback'$/],
  ];
  it.each(cases)('kubectl tailor %j prints one line and exits 3', async (args, message) => {
    const code = await runPlugin(['node', 'kubectl-tailor', ...args]);
    expect(code).toBe(3);
    expect(stdout).toBe('');
    const lines = stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
  });

  it('prints a completion script for bash and zsh that asks kubectl-tailor __complete', async () => {
    expect(await runPlugin(['node', 'kubectl-tailor', 'completion', 'bash'])).toBe(0);
    expect(stdout).toContain('complete -o default -F _kubectl_tailor kubectl-tailor');
    stdout = '';
    expect(await runPlugin(['node', 'kubectl-tailor', 'completion', 'zsh'])).toBe(0);
    expect(stdout).toMatch(/^#compdef kubectl-tailor\n/);
    expect(stdout).toContain('kubectl-tailor __complete');
  });
});
