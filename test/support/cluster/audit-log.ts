// The bed's API server audit log (hack/bed/control-plane.sh's policy: Tailor's identities, and the
// kubelets' pod lists and watches), read back as events. Owns: reading $LOGS/audit*.log only.
// Must not: write or rotate the log.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LOG_DIR } from './bed.js';

export interface AuditEvent {
  user?: { username?: string };
  verb?: string;
  requestURI?: string;
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string; namespace?: string; name?: string };
  requestReceivedTimestamp?: string;
  responseStatus?: { code?: number; message?: string };
  annotations?: Record<string, string>;
}

/**
 * Every audited request on a resource received at or after `since` (RFC 3339 in UTC with fixed
 * digits, so ordered as strings); non-resource URLs (discovery) are left out.
 */
export function auditedSince(since: string): AuditEvent[] {
  const files = existsSync(LOG_DIR) ? readdirSync(LOG_DIR).filter((f) => /^audit.*\.log$/.test(f)) : [];
  if (files.length === 0)
    throw new Error(
      `no audit log in ${LOG_DIR}: the bed's API server predates its audit policy; run 'make cluster-down' and the tier again`,
    );
  return files.flatMap((f) =>
    readFileSync(resolve(LOG_DIR, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as AuditEvent)
      .filter((e) => e.objectRef?.resource !== undefined && (e.requestReceivedTimestamp ?? '') >= since),
  );
}
