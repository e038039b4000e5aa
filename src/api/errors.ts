// What a thrown value says, in one line of text: every layer that reports a failure (a log line,
// an event, a condition's message, a CLI error) reads a thrown value through here. Pure; imports
// nothing. Must not: decide what a failure means (kube-client's isForbidden, failures.ts do).

/** The message of a thrown value: an Error's message, anything else as String() gives it. */
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
