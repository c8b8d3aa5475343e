// Drives one target with wrk (Debian's package), which takes less of a 2-core machine's CPU than a Node load generator:
// the same request, warm-up and window as load.ts, every answer's status and body checked by a script of wrk's own.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordableHistogram } from 'node:perf_hooks';
import type { Aim, LoadFigures, LoadOptions, Window } from './load.ts';
import { bodies, headersFor, loadKeys, PATH } from './request.ts';

/** Whether wrk is on PATH. */
export function wrkInstalled(): boolean {
  try { execFileSync('wrk', ['--version'], { stdio: 'ignore' }); return true; } catch (err) {
    // wrk --version prints and exits 1; only a missing binary is ENOENT.
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** Quantiles wrk reports of a run's latency (its script API gives percentiles, not the histogram): 100 equal slices. */
const QUANTILES = Array.from({ length: 100 }, (_, i) => i + 0.5);

/**
 * wrk's script: the request, a body check per answer (as long as the check answer and ending as it does: load.ts
 * wholeLike), and at the end one line of counts and the latency quantiles in µs.
 */
function script(aim: Aim, stream: boolean): string {
  const q = (s: string) => JSON.stringify(s); // a JSON string is a valid Lua string literal for this ASCII text
  const tail = aim.check.slice(-32);
  const headers = Object.entries(headersFor(aim.key)).map(([k, v]) => `wrk.headers[${q(k)}] = ${q(v)}`).join('\n');
  const keys = loadKeys(aim);
  // Several keys (--keys): each key's request made once in init, then request() hands them out in turn.
  const spread = keys.length < 2 ? '' : `local keys = { ${keys.map((k) => q(headersFor(k).authorization)).join(', ')} }
local requests, turn = {}, 0
function request() turn = turn % #requests + 1; return requests[turn] end
`;
  const prepare = keys.length < 2 ? '' : `
  for i, auth in ipairs(keys) do
    local h = {}
    for name, value in pairs(wrk.headers) do h[name] = value end
    h["authorization"] = auth
    requests[i] = wrk.format(nil, nil, h)
  end
`;
  return `wrk.method = "POST"
wrk.body = ${q(bodies[stream ? 'stream' : 'whole'])}
${headers}
${spread}local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) ok, short, non2xx = 0, 0, 0${prepare} end
function response(status, headers, body)
  if status < 200 or status >= 300 then non2xx = non2xx + 1; return end
  ok = ok + 1
  if #body < ${aim.check.length} or body:sub(-${tail.length}) ~= ${q(tail)} then short = short + 1 end
end
function done(summary, latency, requests)
  local o, s, n = 0, 0, 0
  for _, t in ipairs(threads) do o = o + t:get("ok"); s = s + t:get("short"); n = n + t:get("non2xx") end
  local e = summary.errors
  io.write(string.format("BENCH %d %d %d %d %d %d\\n", o, s, n, e.connect + e.read + e.write + e.timeout, summary.requests, summary.duration))
  local qs = {}
  for _, p in ipairs({${QUANTILES.join(', ')}}) do qs[#qs + 1] = string.format("%d", latency:percentile(p)) end
  io.write("LATENCY ", table.concat(qs, " "), "\\n")
end
`;
}

function wrk(url: string, file: string, connections: number, seconds: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', file, url + PATH], { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`wrk failed: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

/** load.ts measure() with wrk as the load: warm-up, then the measured window, with the same figures. */
export async function measureWrk(url: string, opts: LoadOptions, aim: Aim, window: Window | undefined, latency: RecordableHistogram): Promise<LoadFigures> {
  if (opts.stream) throw new Error('--wrk: streamed runs (their ttfb probe) take the Node load generator');
  const dir = mkdtempSync(join(tmpdir(), 'gw-wrk-'));
  const file = join(dir, 'bench.lua');
  writeFileSync(file, script(aim, opts.stream));
  try {
    if (opts.warmup > 0) await wrk(url, file, opts.connections, Math.max(1, Math.round(opts.warmup)));
    window?.start();
    const out = await wrk(url, file, opts.connections, Math.max(1, Math.round(opts.duration)));
    window?.end();
    const counts = /^BENCH (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)$/m.exec(out);
    const quantiles = /^LATENCY (.*)$/m.exec(out);
    if (!counts || !quantiles) throw new Error(`wrk: no figures in its output: ${out.slice(0, 300)}`);
    const [ok, short, non2xx, errors, sent, durationUs] = counts.slice(1).map(Number);
    // The quantiles stand for the run's answers, an equal share each, in the histogram every slice records into.
    const each = Math.max(1, Math.round(ok / QUANTILES.length));
    for (const us of quantiles[1].split(' ').map(Number)) for (let i = 0; i < each; i++) latency.record(Math.max(1, us));
    const durationS = durationUs / 1e6;
    return {
      rps: durationS > 0 ? ok / durationS : 0,
      p50Ms: latency.percentile(50) / 1000, p99Ms: latency.percentile(99) / 1000,
      ok, errors, non2xx, short,
      // wrk counts an answer a connection lost midway as a read error (errors), so none goes unnoticed.
      dropped: Math.max(0, sent - ok - non2xx - errors),
      durationS,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
