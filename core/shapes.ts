// Plain shapes that every layer names and that name nothing themselves, so the modules sharing them import no circle.

export type JSONSchema = Record<string, unknown>;

export interface SseFrame { event?: string; data: string; raw: string }

/**
 * How an exchange ended: completed, incomplete (cut by the output cap), failed, disconnected (the client left),
 * missing-terminal (a stream cut before its end), timeout, rejected (refused by the gateway before any upstream: not
 * billed). The store records the same word as the usage record's ending.
 */
export type Outcome = 'completed' | 'incomplete' | 'failed' | 'disconnected' | 'missing-terminal' | 'rejected' | 'timeout';
