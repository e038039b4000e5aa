// `kubectl tailor history <clone> [--revision N]`: lists the CloneSet's ControllerRevisions
// (label apps.tailor.dev/cloneset=<clone>, controlled by the CloneSet's UID) in order, each with
// its number, name, whether the status names it current or update, and what it changed from the
// one before; with --revision, prints that revision's pod template. Also the revision read that
// `undo` and completion share. Exit 0, or 3 with one line on stderr.
// Must not: write to the cluster.
import type { ControllerRevision } from '../../api/revision.js';
import yaml from 'js-yaml';
import { kindOfObject } from './pure/workload-ref.js';
import {
  called,
  describeError,
  PluginError,
  READ_TIMEOUT_MS,
  readWorkload,
  withConnection,
  withDeadline,
  type ConnectionOptions,
  type Reader,
} from './common.js';
import { historyRows, ownedRevisions, renderHistory, revisionRole, type RevisionRecord } from './pure/revisions.js';
import type { WireCloneSet } from '../../api/wire.js';

export interface HistoryOptions extends ConnectionOptions {
  revision?: number;
  output?: 'yaml' | 'json';
}

/** The CloneSet's revisions, oldest first. */
export async function readRevisions(client: Reader, ns: string, cs: WireCloneSet): Promise<RevisionRecord[]> {
  try {
    const list = await withDeadline(
      client.list<ControllerRevision>(`/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/controllerrevisions`, {
        labelSelector: `${kindOfObject(cs).revisionLabel}=${cs.metadata?.name ?? ''}`,
      }),
      READ_TIMEOUT_MS,
    );
    return ownedRevisions(list.items, cs.metadata?.uid);
  } catch (err) {
    throw new PluginError(`cannot list the revisions of clone "${cs.metadata?.name}": ${describeError(err)}`, {
      cause: err,
    });
  }
}

export async function history(
  name: string,
  opts: HistoryOptions,
  stdout: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  return withConnection(opts, async ({ client, namespace }) => {
    const cs = await readWorkload(client, namespace, name);
    const revisions = await readRevisions(client, namespace, cs);
    if (opts.revision === undefined) {
      stdout.write(`${renderHistory(name, historyRows(cs, revisions)).join('\n')}\n`);
      return 0;
    }
    const found = revisions.find((r) => r.revision === opts.revision);
    if (!found) {
      throw new PluginError(
        `${called(name)} has no revision ${opts.revision} (revisions: ${revisions.map((r) => r.revision).join(', ') || 'none yet'})`,
      );
    }
    if (opts.output === 'json') {
      stdout.write(`${JSON.stringify(found.template, null, 2)}\n`);
    } else {
      const role = revisionRole(cs, found.name);
      stdout.write(`# ${called(name)} revision ${found.revision} (${found.name}${role ? `; ${role}` : ''})\n`);
      stdout.write(yaml.dump(found.template, { noRefs: true, lineWidth: -1 }));
    }
    return 0;
  });
}
