// Drives one target with autocannon: a check request, an uncounted warm-up, then the measured run.
import autocannon from 'autocannon';
import { createHistogram } from 'node:perf_hooks';

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
  durationS: number;
}

const PATH = '/v1/chat/completions';
const BENCH_KEY = 'sk-bench-0123456789';
const headersFor = (key = BENCH_KEY) => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });
const bodies = {
  whole: JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Say hello' }] }),
  stream: JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'Say hello' }] }),
};

/** A target that answers every request with 401 would post a flattering figure; refuse to measure it. */
export async function check(url: string, stream: boolean, key?: string): Promise<void> {
  const res = await fetch(url + PATH, { method: 'POST', headers: headersFor(key), body: bodies[stream ? 'stream' : 'whole'], signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  const whole = stream ? text.includes('"chat.completion.chunk"') && text.includes('data: [DONE]') : text.includes('"chat.completion"');
  if (res.status !== 200 || !whole) {
    throw new Error(`${url}${PATH} answered ${res.status}, not a ${stream ? 'whole stream' : 'chat completion'}: ${text.slice(0, 300)}`);
  }
}

function fire(url: string, opts: LoadOptions, duration: number, key?: string) {
  const body = bodies[opts.stream ? 'stream' : 'whole'];
  return autocannon({ url: url + PATH, method: 'POST', headers: headersFor(key), body, connections: opts.connections, duration, timeout: 10 });
}

/** Called as the measured run starts and ends (after the warm-up): what the caller samples around it (CPU time). */
export interface Window { start(): void; end(): void }

export async function measure(url: string, opts: LoadOptions, key?: string, window?: Window): Promise<LoadFigures> {
  if (opts.warmup > 0) await fire(url, opts, opts.warmup, key);
  window?.start();
  // autocannon's own histogram keeps whole milliseconds, too coarse for sub-millisecond medians; record microseconds.
  const latency = createHistogram();
  const run = fire(url, opts, opts.duration, key);
  run.on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) latency.record(Math.max(1, Math.round(ms * 1000)));
  });
  const result = await run;
  window?.end();
  const ok = result['2xx'];
  return {
    rps: result.duration > 0 ? ok / result.duration : 0,
    p50Ms: ok > 0 ? latency.percentile(50) / 1000 : 0,
    p99Ms: ok > 0 ? latency.percentile(99) / 1000 : 0,
    ok,
    errors: result.errors,
    non2xx: result.non2xx,
    durationS: result.duration,
  };
}
