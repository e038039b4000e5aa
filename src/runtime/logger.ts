// Structured JSON logs (pino) for every Tailor process. Owns the log format and level; callers
// attach context with child loggers (controller, key, pod). Errors are logged under `err` so
// their cause chain is serialised. Must not: decide what to log.
import { pino } from 'pino';

export type Logger = pino.Logger;
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent';

export function createLogger(level: LogLevel = 'info', bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: pino.stdSerializers.errWithCause },
  });
}

/** A logger that discards everything; for tests and benchmarks. */
export const silentLogger = (): Logger => pino({ level: 'silent' });
