// Drives one target with autocannon: a check request, an uncounted warm-up, then the measured run.
import autocannon, { type Instance } from 'autocannon';
import type { EventEmitter } from 'node:events';
import { createHistogram } from 'node:perf_hooks';
import { bodies, headersFor, loadKeys, PATH, wholeLike } from './request.ts';
import { openTtfbProbe, type TtfbFigures } from './ttfb.ts';

export interface LoadOptions {
  connections: number;
  duration: number;
  warmup: number;
  /** Streamed answers of about a second each (the upstream's), so `connections` streams are in flight at once. */
  stream: boolean;
}

export interface LoadFigures {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  errors: number;
  non2xx: number;
  /** 2xx answers whose body was not whole (request.ts wholeLike). */
  short: number;
  /** Requests that got neither an answer nor an error (connectionLedger): at least this many. */
  dropped: number;
  durationS: number;
  /** --stream: time to first byte, read by a probe alongside the load. */
  ttfb?: TtfbFigures;
}

/**
 * What the load sends to a target and what its whole answer is: `key` picks the group (and is the check's and the
 * probe's), `keys` (--keys) the API keys the load cycles through, request by request on each connection (default
 * [key]); `check` is the target's answer to check().
 */
export interface Aim { key?: string; keys?: readonly string[]; check: string }

/** A target that answers every request with 401 would post a flattering figure; refuse to measure it. Returns the answer's body. */
export async function check(url: string, stream: boolean, key?: string): Promise<string> {
  const res = await fetch(url + PATH, { method: 'POST', headers: headersFor(key), body: bodies[stream ? 'stream' : 'whole'], signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  const whole = stream ? text.includes('"chat.completion.chunk"') && text.includes('data: [DONE]') : text.includes('"chat.completion"');
  if (res.status !== 200 || !whole) {
    throw new Error(`${url}${PATH} answered ${res.status}, not a ${stream ? 'whole stream' : 'chat completion'}: ${text.slice(0, 300)}`);
  }
  return text;
}

/**
 * autocannon reconnects without a word when a server closes a connection in the middle of an answer (a stream cut
 * short that way): the request is then neither answered nor an error. Counted per connection as requests sent less
 * answers, errors and timeouts, less the one request a connection may still have in flight when the run stops.
 */
export function connectionLedger() {
  const connections: { sent: number; settled: number }[] = [];
  return {
    setupClient(client: EventEmitter): void {
      const c = { sent: 0, settled: 0 };
      connections.push(c);
      client.on('request', () => { c.sent++; });
      for (const event of ['response', 'timeout', 'connError']) client.on(event, () => { c.settled++; });
    },
    dropped: () => connections.reduce((n, c) => n + Math.max(0, c.sent - c.settled - 1), 0),
  };
}

export interface Drive {
  connections: number;
  duration: number;
  stream: boolean;
  /** Requests per second from all connections together (a fixed rate); without it, each sends as soon as answered. */
  overallRate?: number;
}

/** One autocannon run at url; `onAnswer` hears every answer's status and whether its body was whole. */
export function fire(url: string, drive: Drive, aim: Aim, onAnswer: (status: number, whole: boolean) => void): { run: Instance; dropped(): number } {
  const isWhole = wholeLike(aim.check);
  const ledger = connectionLedger();
  const run = autocannon({
    url: url + PATH, method: 'POST', headers: headersFor(aim.key), body: bodies[drive.stream ? 'stream' : 'whole'],
    connections: drive.connections, duration: drive.duration, overallRate: drive.overallRate, timeout: 10,
    // Each connection cycles through these in turn, so every key gets an equal share; each answer is checked.
    requests: loadKeys(aim).map((key) => ({ headers: headersFor(key), onResponse: (status: number, body: string) => onAnswer(status, isWhole(body)) })),
    setupClient: ledger.setupClient,
  });
  return { run, dropped: ledger.dropped };
}

/** Called as the measured run starts and ends (after the warm-up): what the caller samples around it (CPU time). */
export interface Window { start(): void; end(): void }

/**
 * Warms up (opts.warmup s, not counted), then measures opts.duration s. `latency`: the histogram the answers' times go
 * into (a target measured in several slices shares one), whose p50 and p99 the figures give.
 */
export async function measure(url: string, opts: LoadOptions, aim: Aim, window?: Window, latency = createHistogram()): Promise<LoadFigures> {
  const ignore = () => {};
  if (opts.warmup > 0) await fire(url, { ...opts, duration: opts.warmup }, aim, ignore).run;
  const probe = opts.stream ? await openTtfbProbe(url, aim) : undefined;
  window?.start();
  probe?.start();
  // autocannon's own histogram keeps whole milliseconds, too coarse for sub-millisecond medians; record microseconds.
  let short = 0;
  const { run, dropped } = fire(url, opts, aim, (status, whole) => { if (status >= 200 && status < 300 && !whole) short++; });
  run.on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) latency.record(Math.max(1, Math.round(ms * 1000)));
  });
  const result = await run;
  const probed = probe?.stop(); // no probe starts after this; those in flight finish their streams outside the window
  window?.end();
  const ttfb = await probed;
  const ok = result['2xx'];
  return {
    rps: result.duration > 0 ? ok / result.duration : 0,
    p50Ms: latency.count > 0 ? latency.percentile(50) / 1000 : 0,
    p99Ms: latency.count > 0 ? latency.percentile(99) / 1000 : 0,
    ok,
    errors: result.errors,
    non2xx: result.non2xx,
    short,
    dropped: dropped(),
    durationS: result.duration,
    ttfb,
  };
}
