// `kubectl_complete-tailor <words>` and `kubectl-tailor __complete <words>`: answers a shell's
// completion request (completion.ts decides what is asked), reading CloneSet names, namespaces or
// a CloneSet's revision numbers from the cluster when the words ask for them. A completion never
// fails loudly: no cluster, no permission or a slow answer (over COMPLETION_TIMEOUT_MS) gives no
// candidates. Must not: write to the cluster, or print anything but the answer.
import { cloneSetPath, readWorkload, withConnection, withDeadline } from './common.js';
import {
  Directive,
  planCompletion,
  renderCompletion,
  withPrefix,
  type Candidate,
  type VerbSpec,
} from './pure/completion.js';
import { readRevisions } from './history.js';
import type { WireCloneSet } from '../../api/wire.js';

/** A shell waits for the answer: beyond this, offering nothing beats hanging the prompt. */
const COMPLETION_TIMEOUT_MS = 3000;

async function lookUp(
  verbs: readonly VerbSpec[],
  words: readonly string[],
): Promise<{ candidates: Candidate[]; directive: number }> {
  const request = planCompletion(verbs, words);
  if (request.kind === 'candidates') return request;
  if (request.kind === 'files') return { candidates: [], directive: Directive.default };
  const none = { candidates: [], directive: Directive.noFileComp };
  try {
    const found = await withDeadline(
      withConnection(
        { namespace: 'namespace' in request ? request.namespace : undefined, kubeconfig: request.kubeconfig },
        async ({ client, namespace }): Promise<Candidate[]> => {
          if (request.kind === 'namespaces') {
            const list = await client.list<WireCloneSet>('/api/v1/namespaces');
            return list.items.map((n) => ({ value: `${request.lead}${n.metadata?.name ?? ''}` }));
          }
          if (request.kind === 'clones') {
            const list = await client.list<WireCloneSet>(cloneSetPath(namespace));
            return list.items.map((c) => ({
              value: c.metadata?.name ?? '',
              description: `${c.spec?.replicas ?? 1} replicas`,
            }));
          }
          const cs = await readWorkload(client, namespace, request.clone);
          const revisions = await readRevisions(client, namespace, cs);
          return revisions.map((r) => ({ value: `${request.lead}${r.revision}`, description: r.name }));
        },
        COMPLETION_TIMEOUT_MS,
      ),
      COMPLETION_TIMEOUT_MS,
    );
    const prefix = request.kind === 'clones' ? request.prefix : `${request.lead}${request.prefix}`;
    return { candidates: withPrefix(found, prefix), directive: Directive.noFileComp };
  } catch {
    return none;
  }
}

/** Prints the completion answer for `words`; always exits 0, as cobra's `__complete` does. */
export async function complete(
  verbs: readonly VerbSpec[],
  words: readonly string[],
  stdout: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const { candidates, directive } = await lookUp(verbs, words);
  stdout.write(renderCompletion(candidates, directive));
  return 0;
}
