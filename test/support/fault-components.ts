// Freezes one test-bed component (SIGSTOP, then SIGCONT) for the fault tier, e.g. the
// kube-apiserver for longer than a Lease. The process is always continued: after the wait, when
// the wait throws, and — should the test process itself exit mid-freeze — from an exit hook.
// Owns: the SIGSTOP/SIGCONT of the one process named in $CLUSTER_DIR/pids. Must not: kill,
// restart or reconfigure anything (test/support/apiserver.ts restarts the API server).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const clusterDir = process.env.CLUSTER_DIR ?? resolve(process.cwd(), '.tailor/cluster');

function pidOf(component: string): number {
  const pid = Number(readFileSync(resolve(clusterDir, `pids/${component}.pid`), 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`no pid for ${component} under ${clusterDir}/pids`);
  return pid;
}

/** SIGSTOPs `component` for `ms`, then SIGCONTs it; resolves with when it was stopped and continued. */
export async function freezeComponent(component: string, ms: number): Promise<{ stoppedAt: number; continuedAt: number }> {
  const pid = pidOf(component);
  const resume = (): void => {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // already gone
    }
  };
  process.once('exit', resume);
  process.kill(pid, 'SIGSTOP');
  const stoppedAt = Date.now();
  try {
    await new Promise((r) => setTimeout(r, ms));
  } finally {
    resume();
    process.off('exit', resume);
  }
  return { stoppedAt, continuedAt: Date.now() };
}
