// Types for the slice of autocannon's programmatic API the benchmark uses (the package ships none).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    duration?: number;
    timeout?: number;
    /** Requests per second from all connections together. */
    overallRate?: number;
    /** Called with each connection (an EventEmitter: 'request', 'response', 'timeout', 'connError') as it is made. */
    setupClient?: (client: EventEmitter) => void;
    /** The requests to cycle through (each takes the options above as defaults); onResponse hears every answer's body. */
    requests?: { headers?: Record<string, string>; onResponse?: (status: number, body: string) => void }[];
  }

  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    requests: { total: number; sent: number };
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this;
    /** An error or a timeout of a request. */
    on(event: 'reqError', listener: (err: Error) => void): this;
    stop(): void;
  }

  function autocannon(opts: Options): Instance;
  export default autocannon;
}
