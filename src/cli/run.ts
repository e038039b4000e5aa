// Runs a Manager as the process's main job: SIGTERM/SIGINT start a graceful stop, and the exit
// code says how it ended (0 stopped, 1 lost the lease and should be restarted). Owns the signal
// handlers and removes them when done. Must not: build the manager.
import type { Logger } from '../runtime/logger.js';
import type { Manager } from '../runtime/manager.js';

export async function runUntilSignal(manager: Manager, logger: Logger): Promise<number> {
  const onSignal = (signal: string): void => {
    logger.info({ signal }, 'signal received; stopping');
    manager.stop().catch((err: unknown) => logger.error({ err }, 'shutdown failed'));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    return (await manager.run()) === 'lost-lease' ? 1 : 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
