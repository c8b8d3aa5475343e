// Per-request fault injection, driven by request headers so tests can provoke upstream failures through the gateway.
//
//   x-simulator-fault: status=NNN         answer NNN (200-599) with the route's error envelope (OpenAI, Anthropic
//                                         or Google, type/status derived from NNN); 429 adds `retry-after: 1`
//   x-simulator-fault: midstream-error    stream: after 2 content chunks, send the format's own error frame and end
//                                         without the terminal frame: chat `data: {"error":…}` (no [DONE]),
//                                         Responses `response.failed`, Anthropic `event: error`, Gemini
//                                         `data: {"error":…}` (an array element without alt=sse); no effect on non-stream
//   x-simulator-fault: truncate           stream: after 2 content chunks, destroy the socket;
//                                         non-stream: send the headers and half the body, then destroy
//   x-simulator-fault: hang               never send headers; the handler ends when the client goes away
//   x-simulator-fault: slow-headers=MS    wait MS ms, then answer normally
//   x-simulator-fault: early-error        stream: the format's error frame where the content would begin (after the
//                                         opening frames: chat role chunk, Responses response.created…, Anthropic
//                                         message_start…; Gemini's first frame), before any content
//   x-simulator-fault: retry-after=S      with a status fault: send `retry-after: S` (a 429 sends `retry-after: 1`
//                                         unless told); retry-after-ms=MS sends `retry-after-ms: MS` as well
//   x-simulator-fault: times=N            only the first N requests carrying this fault (per credential) get it
//   x-simulator-chunk-delay-ms: N         N ms between stream chunks (overrides the simulator's default)
//
// Faults combine with commas, e.g. `slow-headers=200, midstream-error`.
// They apply after the credential check, as a real upstream would refuse a bad key first.
//
// Per-account faults: a credential `sim-fault:<faults>` (items separated by `;` or `,`) is accepted like any other and
// carries its own faults, e.g. `sim-fault:status=429;retry-after-ms=500;times=2` answers its first two requests with a
// 429 that resets in 500 ms. A gateway account with such a credential fails on purpose while its neighbours do not.
// A credential's faults win over the header's; once their `times` are used up the header's apply again.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Fault, SimContext } from './context.ts';
import { sendError } from './errors.ts';

export const FAULT_HEADER = 'x-simulator-fault';
export const CHUNK_DELAY_HEADER = 'x-simulator-chunk-delay-ms';
/** Content chunks a stream fault lets through first, so clients have seen a partial reply. */
export const CHUNKS_BEFORE_FAULT = 2;
// A cap on waits, so a typo cannot park a request for hours.
const MAX_WAIT_MS = 600_000;

export const CREDENTIAL_FAULT_PREFIX = 'sim-fault:';

export const noFault: Readonly<Fault> = Object.freeze({ hang: false, slowHeadersMs: 0 });

type Parser = (value: string | undefined, fault: Fault) => string | undefined;

// Each parser fills its part of the fault, or returns why the value is unusable.
const parsers: Record<string, Parser> = {
  status: (value, fault) => {
    const status = Number(value);
    if (!Number.isInteger(status) || status < 200 || status > 599) return `status must be 200-599, got "${value}"`;
    fault.status = status;
  },
  'midstream-error': (_value, fault) => { fault.midstream = 'error'; },
  'early-error': (_value, fault) => { fault.midstream = 'error'; fault.early = true; },
  'retry-after': (value, fault) => {
    if (!value) return 'retry-after needs a value';
    fault.retryAfter = value;
  },
  'retry-after-ms': (value, fault) => {
    const ms = Number(value);
    if (!Number.isInteger(ms) || ms < 0 || ms > MAX_WAIT_MS) return `retry-after-ms must be 0-${MAX_WAIT_MS}, got "${value}"`;
    fault.retryAfterMs = ms;
  },
  times: (value, fault) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) return `times must be a whole number, got "${value}"`;
    fault.times = n;
  },
  truncate: (_value, fault) => { fault.midstream = 'truncate'; },
  hang: (_value, fault) => { fault.hang = true; },
  'slow-headers': (value, fault) => {
    const ms = Number(value);
    if (!Number.isInteger(ms) || ms < 0 || ms > MAX_WAIT_MS) return `slow-headers must be 0-${MAX_WAIT_MS} ms, got "${value}"`;
    fault.slowHeadersMs = ms;
  },
};

/** Reads the fault header; a string result is the reason it could not be parsed. */
export function parseFault(header: string | string[] | undefined): Fault | string {
  if (header === undefined) return noFault;
  const fault: Fault = { hang: false, slowHeadersMs: 0 };
  const text = Array.isArray(header) ? header.join(',') : header;
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = item.indexOf('=');
    const name = (eq === -1 ? item : item.slice(0, eq)).trim().toLowerCase();
    const value = eq === -1 ? undefined : item.slice(eq + 1).trim();
    const parser = parsers[name];
    if (!parser) return `unknown fault "${name}"`;
    const problem = parser(value, fault);
    if (problem) return problem;
  }
  return fault;
}

/**
 * The fault this request gets: its credential's (`sim-fault:…`) while their `times` last, else the header's.
 * `uses` counts requests per credential and fault text, for `times`.
 */
export function activeFault(header: string | string[] | undefined, credential: string, uses: Map<string, number>): Fault | string {
  if (credential.startsWith(CREDENTIAL_FAULT_PREFIX)) {
    const own = counted(credential.slice(CREDENTIAL_FAULT_PREFIX.length).replaceAll(';', ','), credential, uses);
    if (typeof own === 'string' || own !== noFault) return own;
  }
  return header === undefined ? noFault : counted(Array.isArray(header) ? header.join(',') : header, credential, uses);
}

function counted(text: string, credential: string, uses: Map<string, number>): Fault | string {
  const fault = parseFault(text);
  if (typeof fault === 'string' || fault.times === undefined) return fault;
  const key = JSON.stringify([credential, text]);
  const n = (uses.get(key) ?? 0) + 1;
  uses.set(key, n);
  return n <= fault.times ? fault : noFault;
}

export function parseChunkDelay(header: string | string[] | undefined, fallback: number): number {
  const ms = Number(Array.isArray(header) ? header[0] : header);
  return header !== undefined && Number.isFinite(ms) && ms >= 0 ? Math.min(ms, MAX_WAIT_MS) : fallback;
}

/**
 * Applies the faults that act before a handler runs.
 * Returns true when the request is finished (answered, or the client left) and the handler must not run.
 */
export async function applyFaultsBeforeHandler(ctx: SimContext): Promise<boolean> {
  const { fault, signal } = ctx;
  if (fault.hang) {
    await untilAborted(signal);
    return true;
  }
  if (fault.slowHeadersMs > 0) {
    try {
      await sleep(fault.slowHeadersMs, undefined, { signal });
    } catch {
      return true;
    }
  }
  if (fault.status !== undefined) {
    const headers: Record<string, string> = fault.status === 429 ? { 'retry-after': '1' } : {};
    if (fault.retryAfterMs !== undefined) {
      headers['retry-after-ms'] = String(fault.retryAfterMs);
      headers['retry-after'] = String(Math.ceil(fault.retryAfterMs / 1000));
    }
    if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
    sendError(ctx.res, ctx.dialect, { status: fault.status, message: `Simulated upstream error (status ${fault.status}).`, headers });
    return true;
  }
  return false;
}

function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
