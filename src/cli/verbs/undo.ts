// `kubectl tailor undo <clone> [--to-revision N]`: sets the CloneSet's pod template back to the
// one a ControllerRevision stored (the previous revision, or N), as `kubectl rollout undo` does
// for a Deployment. One JSON patch replaces spec.template whole, guarded by a test of
// metadata.generation so an edit made since the read is never overwritten (decision 70); the
// controller then finds the revision with the equal template and reuses it. Refuses an unknown N.
// Exit 0, or 3 with one line on stderr. Must not: touch pods or revisions.
import { KubeApiError } from '../../runtime/pure/api-error.js';
import { isConflict } from '../../runtime/kube-client.js';
import { diffTemplates } from '../../inplace/pure/diff.js';
import {
  called,
  workloadPath,
  namespaceFlag,
  PluginError,
  READ_TIMEOUT_MS,
  readWorkload,
  withConnection,
  withDeadline,
  writeFailed,
  type ConnectionOptions,
  type Reader,
} from './common.js';
import { readRevisions } from './history.js';
import { summariseDiff, undoPatch, undoTarget } from './pure/revisions.js';
import type { WireCloneSet } from '../../api/wire.js';

export interface UndoOptions extends ConnectionOptions {
  toRevision?: number;
}

async function generationMoved(client: Reader, ns: string, name: string, read: WireCloneSet): Promise<boolean> {
  try {
    return (await readWorkload(client, ns, name)).metadata?.generation !== read.metadata?.generation;
  } catch {
    return false;
  }
}

export async function undo(
  name: string,
  opts: UndoOptions,
  stdout: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  return withConnection(opts, async ({ client, namespace }) => {
    const cs = await readWorkload(client, namespace, name);
    const revisions = await readRevisions(client, namespace, cs);
    const choice = undoTarget(cs.spec.template, revisions, opts.toRevision);
    if (choice.kind === 'refused') throw new PluginError(`cannot roll back ${called(name)}: ${choice.message}`);
    const { target } = choice;
    if (choice.kind === 'unchanged') {
      stdout.write(
        `${called(name)} skipped rollback: its template already is revision ${target.revision} (${target.name})\n`,
      );
      return 0;
    }
    const change = summariseDiff(diffTemplates(cs.spec.template, target.template));
    try {
      await withDeadline(
        client.patch(workloadPath(namespace, name), undoPatch(cs.metadata?.generation ?? 0, target.template), 'json'),
        READ_TIMEOUT_MS,
      );
    } catch (err) {
      // A failed `test` op answers a bare 422 that does not say which op failed: a new generation tells.
      if (
        isConflict(err) ||
        (err instanceof KubeApiError && err.statusCode === 422 && (await generationMoved(client, namespace, name, cs)))
      ) {
        throw new PluginError(
          `${called(name)} changed while rolling back (its spec has a new generation): run undo again`,
          { cause: err },
        );
      }
      throw writeFailed(`rolling back ${called(name)}`, err);
    }
    stdout.write(`${called(name)} rolled back to revision ${target.revision} (${target.name}): ${change}\n`);
    if (cs.spec.updateStrategy?.paused)
      stdout.write(`note: the rollout is paused; resume it: kubectl tailor resume ${name}${namespaceFlag(opts)}\n`);
    stdout.write(`follow it: kubectl tailor status ${name}${namespaceFlag(opts)}\n`);
    return 0;
  });
}
