// `kubectl tailor restart <clone>`: merge-patches the template annotation
// kubectl.kubernetes.io/restartedAt to now (RFC 3339, seconds), as `kubectl rollout restart`
// does for a Deployment. The controller turns that new revision into a rolling restart in place,
// pod by pod within maxUnavailable (decision 15). A second restart within the same second waits
// for the next one, or it would write the same value. Exit 0, or 3 with one line on stderr.
// Must not: touch pods or restart anything itself.
import { RESTARTED_AT_ANNOTATION } from '../../inplace/pure/diff.js';
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
import { restartedAtValue, restartPatch } from './pure/revisions.js';

export async function restart(
  name: string,
  opts: ConnectionOptions,
  stdout: NodeJS.WritableStream = process.stdout,
  now: () => Date = () => new Date(),
): Promise<number> {
  return withConnection(opts, async ({ client, namespace }) => {
    const cs = await readWorkload(client, namespace, name);
    let at = restartedAtValue(now());
    if (cs.spec.template.metadata?.annotations?.[RESTARTED_AT_ANNOTATION] === at) {
      // A second restart within the same second would write the same value and change nothing.
      await new Promise<void>((resolve) => setTimeout(resolve, 1000 - (now().getTime() % 1000)));
      at = restartedAtValue(now());
    }
    try {
      await withDeadline(client.patch(workloadPath(namespace, name), restartPatch(at), 'merge'), READ_TIMEOUT_MS);
    } catch (err) {
      throw writeFailed(`restarting ${called(name)}`, err);
    }
    stdout.write(`${called(name)} restarting: every container restarts in place, pod by pod (restartedAt ${at})\n`);
    if (cs.spec.updateStrategy?.paused)
      stdout.write(`note: the rollout is paused; resume it: kubectl tailor resume ${name}${namespaceFlag(opts)}\n`);
    stdout.write(`follow it: kubectl tailor status ${name}${namespaceFlag(opts)}\n`);
    return 0;
  });
}
