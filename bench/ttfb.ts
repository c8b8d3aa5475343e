// Time to first byte under load (run.ts --stream): a probe sends the load's own streamed request on a connection of its
// own (no keep-alive) every PROBE_EVERY_MS, at most PROBE_IN_FLIGHT at once, and times each from sending the request
// to the first body byte, and to the first content (the first frame with a non-empty "content"): the gateway holds a
// stream's opening frames until its first content (proxy first_content_ms), which the upstream sends 50 ms after its
// opening frame, so only the second shows the gateway's own overhead. It runs in a worker thread, so the load's event
// loop (autocannon's N connections) does not delay its readings; it shares the machine's CPUs with everything else.
import http from 'node:http';
import { createHistogram } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { bodies, headersFor, PATH, wholeLike } from './request.ts';

const PROBE_EVERY_MS = 20;
/** Streams last about a second, so about this many probes a second. */
const PROBE_IN_FLIGHT = 20;
const PROBE_TIMEOUT_MS = 10_000;

export interface TtfbFigures {
  p50Ms: number | null;
  p99Ms: number | null;
  /** To the first content. */
  contentP50Ms: number | null;
  contentP99Ms: number | null;
  /** Probes that were answered 200 with a whole stream: the figures' samples. */
  n: number;
  /** Probes answered otherwise (another status, a stream cut short) or not at all (error, timeout). */
  failed: number;
  /** Probes answered with any status: the target served them too (run.ts counts them in CPU µs per request). */
  answered: number;
}

interface ProbeData { url: string; key?: string; check: string }
interface Timing { firstByteUs: number; firstContentUs: number }
interface ProbeResult { timings: Timing[]; failed: number; answered: number }
const CONTENT = /"content":"[^"]/;

/** p50 and p99 in ms of µs samples; null without any. */
function percentiles(us: number[]): [number | null, number | null] {
  if (!us.length) return [null, null];
  const h = createHistogram();
  for (const x of us) h.record(Math.max(1, x));
  return [h.percentile(50) / 1000, h.percentile(99) / 1000];
}

export interface TtfbProbe {
  /** Starts probing. */
  start(): void;
  /** Starts no more probes, waits for those in flight and returns the figures. */
  stop(): Promise<TtfbFigures>;
}

/** A probe of url, loaded in its worker thread and waiting for start(), so loading it does not eat into the window. */
export async function openTtfbProbe(url: string, aim: { key?: string; check: string }): Promise<TtfbProbe> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { url, key: aim.key, check: aim.check } satisfies ProbeData });
  const messages: ((m: unknown) => void)[] = [];
  const next = <T>() => new Promise<T>((resolve) => { messages.push(resolve as (m: unknown) => void); });
  const failed = new Promise<never>((_, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`ttfb probe exited (code ${code}) before its figures`)));
  });
  failed.catch(() => {}); // read by whichever wait is under way
  worker.on('message', (m) => messages.shift()?.(m));
  await Promise.race([next<'ready'>(), failed]);
  return {
    start: () => worker.postMessage('start'),
    async stop() {
      const result = next<ProbeResult>();
      worker.postMessage('stop');
      const { timings, failed: bad, answered } = await Promise.race([result, failed]);
      const [p50Ms, p99Ms] = percentiles(timings.map((t) => t.firstByteUs));
      const [contentP50Ms, contentP99Ms] = percentiles(timings.map((t) => t.firstContentUs));
      return { p50Ms, p99Ms, contentP50Ms, contentP99Ms, n: timings.length, failed: bad, answered };
    },
  };
}

/** One probe: resolves with the timings of a whole 200 stream, else null; `answered` hears any status. */
function probeOnce(data: ProbeData, isWhole: (body: string) => boolean, answered: () => void): Promise<Timing | null> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let first: number | undefined;
    let content: number | undefined;
    const req = http.request(data.url + PATH, { method: 'POST', headers: headersFor(data.key), agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      answered();
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = performance.now();
        first ??= now;
        body += chunk;
        if (content === undefined && CONTENT.test(body)) content = now;
      });
      const us = (t: number) => Math.round((t - t0) * 1000);
      res.on('end', () => resolve(res.statusCode === 200 && first !== undefined && content !== undefined && isWhole(body)
        ? { firstByteUs: us(first), firstContentUs: us(content) } : null));
      // A connection closed mid-answer may end the response with an error or with only 'close'; either way, no figure.
      res.on('error', () => resolve(null));
      res.on('close', () => resolve(null));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(null));
    req.end(bodies.stream);
  });
}

function runProbe(data: ProbeData): void {
  const isWhole = wholeLike(data.check);
  const timings: Timing[] = [];
  let failed = 0;
  let answered = 0;
  const pending = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  parentPort!.on('message', async (m: 'start' | 'stop') => {
    if (m === 'start') {
      timer = setInterval(() => {
        if (pending.size >= PROBE_IN_FLIGHT) return;
        const p: Promise<void> = probeOnce(data, isWhole, () => { answered++; }).then((timing) => {
          if (timing === null) failed++;
          else timings.push(timing);
          pending.delete(p);
        });
        pending.add(p);
      }, PROBE_EVERY_MS);
      return;
    }
    clearInterval(timer);
    await Promise.all(pending);
    parentPort!.postMessage({ timings, failed, answered } satisfies ProbeResult);
    parentPort!.close();
  });
  parentPort!.postMessage('ready');
}

if (!isMainThread && (workerData as ProbeData | undefined)?.check !== undefined) runProbe(workerData as ProbeData);
