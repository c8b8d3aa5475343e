// Types shared by the server and the format handlers: one request in flight, and a route to it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dialect } from './errors.ts';
import type { Fault } from './faults.ts';

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

/** What the internal /_simulator/* routes need from the running simulator. */
export interface SimulatorState {
  requests: RecordedRequest[];
  clear(): void;
}

export interface SimContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Sequence number of this request; ids in the reply (chatcmpl-sim-N, req_sim_N) derive from it. */
  seq: number;
  /** Path without the query. */
  path: string;
  /** Captures of the route's pattern. */
  params: string[];
  body: string;
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
  dialect: Dialect;
  /** Model routes demand a credential; the simulator's own routes do not. */
  auth: boolean;
  /** The simulator's own routes are not recorded, so reading `requests` does not change it. */
  internal?: boolean;
  handler: Handler;
}
