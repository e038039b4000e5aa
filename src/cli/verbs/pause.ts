// `kubectl tailor pause <clone>` and `resume <clone>`: merge-patch spec.updateStrategy.paused,
// as `kubectl rollout pause|resume` does for a Deployment. Saying so, and exiting 0, when it
// already was (a script can run either twice). Exit 0, or 3 with one line on stderr.
// Must not: touch pods, or judge the rollout.
import {
  called,
  workloadPath,
  namespaceFlag,
  READ_TIMEOUT_MS,
  readWorkload,
  withConnection,
  withDeadline,
  writeFailed,
  type ConnectionOptions,
} from './common.js';
import { pausePatch } from './pure/revisions.js';

export async function setPaused(
  name: string,
  paused: boolean,
  opts: ConnectionOptions,
  stdout: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const word = paused ? 'paused' : 'resumed';
  return withConnection(opts, async ({ client, namespace }) => {
    const cs = await readWorkload(client, namespace, name);
    if ((cs.spec.updateStrategy?.paused ?? false) === paused) {
      stdout.write(
        paused ? `${called(name)} is already paused\n` : `${called(name)} is not paused (nothing to resume)\n`,
      );
      return 0;
    }
    try {
      await withDeadline(
        client.patch(workloadPath(namespace, name), pausePatch(paused, cs.kind), 'merge'),
        READ_TIMEOUT_MS,
      );
    } catch (err) {
      throw writeFailed(`${paused ? 'pausing' : 'resuming'} ${called(name)}`, err);
    }
    stdout.write(`${called(name)} ${word}\n`);
    if (!paused) stdout.write(`follow it: kubectl tailor status ${name}${namespaceFlag(opts)}\n`);
    return 0;
  });
}
