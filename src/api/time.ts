// Timestamps as Kubernetes writes them in conditions and status: RFC 3339 to the second (metav1.Time).
// Pure; must not read the clock itself (callers pass it in).

/** `ms` since the epoch as RFC 3339 to the second, e.g. 2026-11-23T10:00:00Z. */
export const rfc3339Seconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
