// Shell completion for `kubectl tailor`, the pure side. kubectl (1.26 and later) completes a
// plugin's arguments by running `kubectl_complete-<plugin>` from PATH with the words typed after
// the plugin's name, the last one the word being completed (maybe empty); it expects one
// candidate a line (`value<TAB>description`) and a last line `:<directive>`, the protocol of
// cobra's `__complete`. `kubectl-tailor __complete <words>` answers the same, and the scripts of
// `kubectl tailor completion bash|zsh` use it for the plugin run by its own name.
// Owns: what the words ask for (a verb, a flag, a flag's value, a CloneSet, a revision, a shell),
// the candidates that need no cluster, the answer's text, and the two scripts.
// Pure: no I/O. Must not: read the cluster (complete.ts does), or print errors.

/** cobra's directives: bit flags on the last line. */
export const Directive = { default: 0, error: 1, noSpace: 2, noFileComp: 4 } as const;

/** What an option's value is, for completing it. */
export type ValueKind = 'namespace' | 'revision' | 'file' | 'none' | { choices: string[] };
/** What a verb's argument is. */
export type ArgKind = 'clone' | 'shell' | 'none';

export interface OptionSpec {
  /** e.g. ['-n', '--namespace'] or ['--no-watch']. */
  flags: string[];
  description: string;
  /** undefined: a switch that takes no value. */
  value?: ValueKind;
}

export interface VerbSpec {
  name: string;
  description: string;
  arg: ArgKind;
  options: OptionSpec[];
}

export interface Candidate {
  value: string;
  description?: string;
}

/** Where the words leave off: what to complete, and the context the cluster lookups need. */
export type CompletionRequest =
  | { kind: 'candidates'; candidates: Candidate[]; directive: number }
  | { kind: 'clones'; prefix: string; namespace?: string; kubeconfig?: string }
  | {
      kind: 'namespaces';
      prefix: string;
      kubeconfig?: string;
      /** `--namespace=` when completing inside one word. */ lead: string;
    }
  | { kind: 'revisions'; prefix: string; clone: string; namespace?: string; kubeconfig?: string; lead: string }
  | { kind: 'files' };

export const SHELLS = ['bash', 'zsh'];

const nothing: CompletionRequest = { kind: 'candidates', candidates: [], directive: Directive.noFileComp };

const findOption = (verb: VerbSpec | undefined, flag: string): OptionSpec | undefined =>
  verb?.options.find((o) => o.flags.includes(flag));

/** Candidates starting with `prefix`, in the order given. */
export const withPrefix = (candidates: readonly Candidate[], prefix: string): Candidate[] =>
  candidates.filter((c) => c.value.startsWith(prefix));

/**
 * What completing `words` asks for. `words` are the arguments after the plugin's name; the last
 * is the word under the cursor ("" after a space).
 */
export function planCompletion(verbs: readonly VerbSpec[], words: readonly string[]): CompletionRequest {
  const done = words.slice(0, -1);
  const partial = words.at(-1) ?? '';
  let verb: VerbSpec | undefined;
  let namespace: string | undefined;
  let kubeconfig: string | undefined;
  const args: string[] = [];
  let pending: OptionSpec | undefined;
  let pastOptions = false;
  const remember = (option: OptionSpec | undefined, value: string): void => {
    if (option?.value === 'namespace') namespace = value;
    if (option?.value === 'file' && option.flags.includes('--kubeconfig')) kubeconfig = value;
  };
  for (const word of done) {
    if (pending) {
      remember(pending, word);
      pending = undefined;
    } else if (word === '--') {
      pastOptions = true;
    } else if (word.startsWith('-') && word.length > 1 && !pastOptions) {
      const eq = word.indexOf('=');
      const option = findOption(verb, eq > 0 ? word.slice(0, eq) : word);
      if (option?.value !== undefined) {
        if (eq > 0) remember(option, word.slice(eq + 1));
        else pending = option;
      }
    } else if (!verb) {
      verb = verbs.find((v) => v.name === word);
      if (!verb) return nothing;
    } else {
      args.push(word);
    }
  }
  const clone = args[0];
  const valueOf = (option: OptionSpec, prefix: string, lead: string): CompletionRequest => {
    const kind = option.value ?? 'none';
    if (kind === 'namespace') return { kind: 'namespaces', prefix, kubeconfig, lead };
    if (kind === 'revision') return clone ? { kind: 'revisions', prefix, clone, namespace, kubeconfig, lead } : nothing;
    if (kind === 'file') return lead ? nothing : { kind: 'files' };
    if (kind === 'none') return nothing;
    const candidates = kind.choices.map((value) => ({ value: `${lead}${value}` }));
    return {
      kind: 'candidates',
      candidates: withPrefix(candidates, `${lead}${prefix}`),
      directive: Directive.noFileComp,
    };
  };
  if (pending) return valueOf(pending, partial, '');
  if (partial.startsWith('-') && !pastOptions) {
    const eq = partial.indexOf('=');
    if (eq > 0) {
      const option = findOption(verb, partial.slice(0, eq));
      return option?.value !== undefined ? valueOf(option, partial.slice(eq + 1), partial.slice(0, eq + 1)) : nothing;
    }
    const options: OptionSpec[] = verb
      ? verb.options
      : [
          { flags: ['-h', '--help'], description: 'show help' },
          { flags: ['--version'], description: 'print the version' },
        ];
    const candidates = options.flatMap((o) => {
      const flags = o.flags.filter((f) => f.startsWith('--'));
      return (flags.length > 0 ? flags : o.flags).map((value) => ({ value, description: o.description }));
    });
    return { kind: 'candidates', candidates: withPrefix(candidates, partial), directive: Directive.noFileComp };
  }
  if (!verb) {
    const candidates = verbs.map((v) => ({ value: v.name, description: v.description }));
    return { kind: 'candidates', candidates: withPrefix(candidates, partial), directive: Directive.noFileComp };
  }
  if (args.length > 0) return nothing;
  if (verb.arg === 'clone') return { kind: 'clones', prefix: partial, namespace, kubeconfig };
  if (verb.arg === 'shell')
    return {
      kind: 'candidates',
      candidates: withPrefix(
        SHELLS.map((value) => ({ value })),
        partial,
      ),
      directive: Directive.noFileComp,
    };
  return nothing;
}

/** The answer kubectl reads: one candidate a line, descriptions after a tab, then `:<directive>`. */
export function renderCompletion(candidates: readonly Candidate[], directive: number): string {
  const lines = candidates.map((c) =>
    c.description ? `${c.value}\t${c.description.replace(/[\t\n]+/g, ' ')}` : c.value,
  );
  return `${[...lines, `:${directive}`].join('\n')}\n`;
}

/** A bash script that completes `kubectl-tailor` run by its own name through `kubectl-tailor __complete`. */
export function bashScript(): string {
  return `# bash completion for kubectl-tailor. Load it with: source <(kubectl tailor completion bash)
# \`kubectl tailor <TAB>\` needs no script of its own: kubectl's completion (source <(kubectl completion bash))
# runs kubectl_complete-tailor, which \`make install-plugin\` puts next to kubectl-tailor.
_kubectl_tailor() {
  local out directive line
  local -a candidates=()
  out=$(kubectl-tailor __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return
  directive=\${out##*:}
  out=\${out%:*}
  while IFS= read -r line; do
    [ -n "$line" ] && candidates+=("\${line%%$'\\t'*}")
  done <<< "$out"
  COMPREPLY=("\${candidates[@]}")
  if (( directive & ${Directive.noSpace} )); then compopt -o nospace 2>/dev/null; fi
  if (( directive & ${Directive.noFileComp} )); then compopt +o default 2>/dev/null; fi
}
complete -o default -F _kubectl_tailor kubectl-tailor
`;
}

/** A zsh script that completes `kubectl-tailor` run by its own name through `kubectl-tailor __complete`. */
export function zshScript(): string {
  return `#compdef kubectl-tailor
# zsh completion for kubectl-tailor. Load it with: source <(kubectl tailor completion zsh)
# \`kubectl tailor <TAB>\` needs no script of its own: kubectl's completion (source <(kubectl completion zsh))
# runs kubectl_complete-tailor, which \`make install-plugin\` puts next to kubectl-tailor.
_kubectl_tailor() {
  local out directive line
  local -a lines candidates
  out=$(kubectl-tailor __complete "\${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
  lines=("\${(@f)out}")
  directive=\${lines[-1]#:}
  for line in "\${(@)lines[1,-2]}"; do
    [[ -z $line ]] && continue
    if [[ $line == *$'\\t'* ]]; then
      candidates+=("\${\${line%%$'\\t'*}//:/\\\\:}:\${line#*$'\\t'}")
    else
      candidates+=("\${line//:/\\\\:}")
    fi
  done
  if (( \${#candidates} > 0 )); then
    _describe 'kubectl tailor' candidates
  elif (( (directive & ${Directive.noFileComp}) == 0 )); then
    _files
  fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _kubectl_tailor "$@"; else compdef _kubectl_tailor kubectl-tailor; fi
`;
}
