// Tables for `kubectl tailor` completion: what the typed words ask for (a verb, a flag, a flag's
// value, a CloneSet, a revision, a shell), the cluster context a lookup needs (namespace,
// kubeconfig), and the answer's text in the protocol kubectl reads from kubectl_complete-tailor.
import { describe, expect, it } from '@jest/globals';
import { verbSpecs } from '../../../../../src/cli/plugin.js';
import {
  Directive,
  planCompletion,
  renderCompletion,
  type CompletionRequest,
} from '../../../../../src/cli/verbs/pure/completion.js';

const verbs = verbSpecs();

/** A short form of the request, for tables. */
function plan(...words: string[]): string {
  const r: CompletionRequest = planCompletion(verbs, words);
  switch (r.kind) {
    case 'candidates':
      return `${r.candidates.map((c) => c.value).join(' ')} :${r.directive}`;
    case 'clones':
      return `clones prefix=${r.prefix} ns=${r.namespace ?? '-'} kubeconfig=${r.kubeconfig ?? '-'}`;
    case 'namespaces':
      return `namespaces prefix=${r.prefix} lead=${r.lead}`;
    case 'revisions':
      return `revisions of ${r.clone} prefix=${r.prefix} ns=${r.namespace ?? '-'} lead=${r.lead}`;
    case 'files':
      return 'files';
  }
}

describe('planCompletion', () => {
  const cases: [string, string[], string][] = [
    ['every verb for an empty word', [''], 'status history undo pause resume restart completion :4'],
    ['the verbs a prefix matches', ['re'], 'resume restart :4'],
    ['nothing after an unknown verb', ['frobnicate', ''], ' :4'],
    ['the CloneSets for a verb that takes one', ['history', 'w'], 'clones prefix=w ns=- kubeconfig=-'],
    ['the CloneSets of the namespace typed before', ['undo', '-n', 'shop', ''], 'clones prefix= ns=shop kubeconfig=-'],
    [
      'the CloneSets of --namespace=',
      ['pause', '--namespace=shop', '--kubeconfig', '/k', ''],
      'clones prefix= ns=shop kubeconfig=/k',
    ],
    ['nothing once the CloneSet is given', ['restart', 'web', ''], ' :4'],
    ['the long flags of the verb', ['undo', 'web', '--'], '--namespace --kubeconfig --to-revision --help :4'],
    ['the flags a prefix matches', ['status', 'web', '--n'], '--namespace --no-watch :4'],
    ['the program flags before a verb', ['-'], '--help --version :4'],
    ['namespaces after -n', ['status', '-n', 'p'], 'namespaces prefix=p lead='],
    ['namespaces inside --namespace=', ['status', '--namespace=p'], 'namespaces prefix=p lead=--namespace='],
    [
      'the revisions of the CloneSet for --to-revision',
      ['undo', 'web', '-n', 'shop', '--to-revision', ''],
      'revisions of web prefix= ns=shop lead=',
    ],
    [
      'the revisions inside --revision=',
      ['history', 'web', '--revision=1'],
      'revisions of web prefix=1 ns=- lead=--revision=',
    ],
    ['nothing for a revision before the CloneSet is named', ['undo', '--to-revision', ''], ' :4'],
    ['files for --kubeconfig', ['status', '--kubeconfig', ''], 'files'],
    ['the output formats', ['history', 'web', '-o', 'j'], 'json :4'],
    ['nothing for a duration', ['status', 'web', '--timeout', ''], ' :4'],
    ['the shells for completion', ['completion', ''], 'bash zsh :4'],
    [
      'a value, not a verb, after a flag that takes one',
      ['status', '--timeout', '5m', 'w'],
      'clones prefix=w ns=- kubeconfig=-',
    ],
  ];
  it.each(cases)('offers %s', (_, words, expected) => {
    expect(plan(...words)).toBe(expected);
  });
});

describe('renderCompletion', () => {
  it('prints one candidate a line, a description after a tab, and the directive last', () => {
    expect(
      renderCompletion([{ value: 'web', description: '2 replicas' }, { value: 'api' }], Directive.noFileComp),
    ).toBe('web\t2 replicas\napi\n:4\n');
  });

  it('keeps a description on its one line', () => {
    expect(renderCompletion([{ value: 'x', description: 'a\tb\nc' }], 0)).toBe('x\ta b c\n:0\n');
  });

  it('answers with the directive alone when nothing matches', () => {
    expect(renderCompletion([], Directive.noFileComp)).toBe(':4\n');
  });
});
