// Types shared by the server and the format handlers: one request in flight, and a route to it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dialect, ErrorSpec } from './errors.ts';
import type { ResponseStore } from './response-store.ts';

export interface RecordedRequest {
  method: string;
  /** Path plus query, exactly as received. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Raw body text. */
  body: string;
  json?: unknown;
  at: number;
}

/** What handlers share across the requests of one running simulator. */
export interface SimulatorState {
  requests: RecordedRequest[];
  clear(): void;
  /** Responses API objects kept for GET and previous_response_id. */
  responses: ResponseStore;
  /** Requests seen per credential and fault text, for faults limited by `times`. */
  faultUses: Map<string, number>;
}

/** The faults one request asked for (faults.ts reads them from its headers and its credential). */
export interface Fault {
  status?: number;
  midstream?: 'error' | 'truncate';
  /** The stream fault fires before the first content frame instead of after CHUNKS_BEFORE_FAULT (faults.ts) of them. */
  early?: boolean;
  hang: boolean;
  slowHeadersMs: number;
  retryAfter?: string;
  retryAfterMs?: number;
  times?: number;
}

export interface SimContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Sequence number of this request; ids in the reply (chatcmpl-sim-N, req_sim_N) derive from it. */
  seq: number;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  /** Captures of the route's pattern. */
  params: string[];
  body: string;
  /** The body's bytes, for formats that are not text (multipart uploads). */
  raw: Buffer;
  /** The upstream credential the request authenticated with; empty on the simulator's own routes. */
  credential: string;
  /** Parsed body; meaningful only when `jsonOk`. */
  json: unknown;
  jsonOk: boolean;
  dialect: Dialect;
  fault: Fault;
  chunkDelayMs: number;
  /** Aborts when the response closes, finished or not, so waits end when the client leaves. */
  signal: AbortSignal;
  state: SimulatorState;
}

export type Handler = (ctx: SimContext) => Promise<void> | void;

export interface Route {
  method: string;
  /** A literal path, or a pattern whose captures become `params`. */
  path: string | RegExp;
  /** When set, the route matches only requests it accepts: two dialects can then share one path. */
  when?: (req: IncomingMessage) => boolean;
  dialect: Dialect;
  /** Model routes demand a credential; the simulator's own routes do not. */
  auth: boolean;
  /** A check after the credential and before faults, for what the real API refuses up front (a missing header). */
  requires?: (req: IncomingMessage) => ErrorSpec | undefined;
  /** The simulator's own routes are not recorded, so reading `requests` does not change it. */
  internal?: boolean;
  handler: Handler;
}
