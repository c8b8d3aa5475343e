// The stream scanner of a format that is never streamed: it exists only to satisfy the adapter contract.
import type { StreamScanner } from '../../core/types.ts';

export const noStream: StreamScanner = { frame: () => 'pass', usage: () => undefined, terminal: () => true, error: () => undefined };
