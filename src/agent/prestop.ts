// Runs one preStop hook that pure/prestop-plan.ts chose, before the restart in place stops the
// container (restart.ts): an exec command through CRI ExecSync, an HTTP GET with node:http/https,
// or a sleep, each ended by the signal (the grace period ran out, or the agent stops). As on the
// kubelet, the hook's outcome is only reported; the caller stops the container either way.
// Owns: the hook's I/O. Must not: choose the hook or its time bound, stop the container, or retry.
import * as http from 'node:http';
import * as https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CriClient } from '../cri/client.js';
import type { HttpGetHook, PreStopHook } from './pure/prestop-plan.js';

export interface RunHookOptions {
  readonly cri: Pick<CriClient, 'execSync'>;
  /** The runtime's container ID the hook runs in (exec). */
  readonly containerId: string;
  /** How long the hook may take; the runtime ends an exec hook's command then. */
  readonly boundSeconds: number;
  /** Aborts the hook: its time is up, or the agent stops. */
  readonly signal: AbortSignal;
}

/** How much of an exec hook's output goes into its error. */
const OUTPUT_IN_ERROR = 512;

/**
 * Resolves when the hook is done; rejects, with the cause, when it failed or was aborted: an exec
 * hook fails when its command cannot run or exits non-zero, an HTTP hook when no response comes
 * (the status code is not checked, as the kubelet does not check it).
 */
export async function runPreStopHook(hook: PreStopHook, options: RunHookOptions): Promise<void> {
  switch (hook.kind) {
    case 'exec':
      return execHook(hook.command, options);
    case 'httpGet':
      return httpGetHook(hook, options.signal);
    case 'sleep':
      try {
        await sleep(hook.seconds * 1000, undefined, { signal: options.signal });
      } catch (err) {
        throw new Error(`the sleep hook of ${hook.seconds} s was cut short`, { cause: err });
      }
      return;
    case 'invalid':
      throw new Error(hook.reason);
  }
}

async function execHook(command: readonly string[], options: RunHookOptions): Promise<void> {
  let result;
  try {
    result = await options.cri.execSync(options.containerId, command, options.boundSeconds, { signal: options.signal });
  } catch (err) {
    throw new Error(`the exec hook ${JSON.stringify(command)} did not run to its end`, { cause: err });
  }
  if (result.exitCode !== 0) {
    const output = Buffer.concat([result.stdout, result.stderr]).toString('utf8').trim().slice(0, OUTPUT_IN_ERROR);
    throw new Error(
      `the exec hook ${JSON.stringify(command)} exited with ${result.exitCode}: ${JSON.stringify(output)}`,
    );
  }
}

/**
 * One GET; done once the response's head arrives (its body is not read). Compared with the
 * kubelet's: certificates are not checked (the kubelet's hook client does not check them either);
 * no redirect is followed (the kubelet follows up to 10 to the same host), so a hook answering
 * with a redirect has had its request and counts as done; an HTTPS hook that gets a plain-HTTP
 * answer is not retried over HTTP (the kubelet retries it and records an event).
 */
function httpGetHook(hook: HttpGetHook, signal: AbortSignal): Promise<void> {
  const host = hook.host.includes(':') ? `[${hook.host}]` : hook.host;
  const url = `${hook.scheme}://${host}:${hook.port}${hook.path}`;
  return new Promise<void>((resolve, reject) => {
    const options: https.RequestOptions = {
      method: 'GET',
      hostname: hook.host,
      port: hook.port,
      path: hook.path,
      headers: hook.headers as http.OutgoingHttpHeaders,
      signal,
      // A connection of its own, closed with the request: nothing lingers after the hook.
      agent: false,
      ...(hook.scheme === 'https' ? { rejectUnauthorized: false } : {}),
    };
    const request = (hook.scheme === 'https' ? https : http).request(options, (response) => {
      response.destroy();
      resolve();
    });
    request.on('error', (err) => reject(new Error(`the httpGet hook GET ${url} failed`, { cause: err })));
    request.end();
  });
}
