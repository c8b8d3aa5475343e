// The targets the benchmark compares, each started in front of the same static upstream.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMap, isSeq, parseDocument, type YAMLMap } from 'yaml';
import { firstLine, freePort, startNode, stop, waitReady, type Child } from './children.ts';
import { treeMemory, treePids } from './proc.ts';
import { deletePrefix } from '../test/store/redis-server.ts';

export type TargetId = 'a' | 'b' | 'c' | 'd' | 'e';

export interface Running {
  /** Base URL the load goes to. */
  url: string;
  /** The client key the load sends (default: the native group's). */
  key?: string;
  /** --keys N: the N API keys the load cycles through (the first is `key`'s), their ids and their group. */
  spread?: Spread;
  /** The process that serves url: its CPU time and its children's (a cluster's workers) the report divides by the requests answered. */
  pid?: number;
  /** Peak RSS of the server that answers at url (summed over its processes), and where the figure came from. */
  rss(): Promise<{ bytes: number | null; source: string }>;
  stop(): Promise<void>;
}

export interface Target {
  id: TargetId;
  label: string;
  start(upstream: Child, upstreamUrl: string): Promise<Running>;
}

const root = join(import.meta.dirname, '..');
/** The node flags and entry of `npm start` (package.json), read from there so the bench runs the gateway as shipped. */
const GATEWAY_START: string[] = (() => {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = start.split(/\s+/).slice(1); // after `node`: its flags, then the script
  return words.slice(0, words.findIndex((w) => !w.startsWith('--')) + 1);
})();
/**
 * The bare proxy is a TypeScript file only for the bench's convenience: a deployment of http-proxy-3 would be plain
 * JavaScript and never load node's TypeScript stripper. Run from node's compile cache (filled by its first run), it
 * does not load it either, as the gateway does from app/start.js (its entry in `npm start`).
 */
const BARE_ENV = { ...process.env, NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache') };
const START_TIMEOUT_MS = 15_000;

function kernelRss(child: Child) {
  return async () => treeMemory(child.proc.pid, 'VmHWM');
}

export async function startUpstream(): Promise<{ child: Child; url: string }> {
  const child = startNode('upstream', [join(import.meta.dirname, 'upstream.ts')], { cwd: root });
  return { child, url: await firstLine(child, START_TIMEOUT_MS) };
}

const direct: Target = {
  id: 'a',
  label: 'direct upstream',
  async start(upstream, upstreamUrl) {
    return { url: upstreamUrl, pid: upstream.proc.pid, rss: kernelRss(upstream), stop: async () => {} };
  },
};

const bareProxy: Target = {
  id: 'b',
  label: 'bare http-proxy-3',
  async start(_upstream, upstreamUrl) {
    const child = startNode('bare-proxy', [join(import.meta.dirname, 'bare-proxy.ts'), upstreamUrl], { cwd: root, env: BARE_ENV });
    try {
      return { url: await firstLine(child, START_TIMEOUT_MS), pid: child.proc.pid, rss: kernelRss(child), stop: () => stop(child) };
    } catch (err) {
      await stop(child);
      throw err;
    }
  },
};

/** A gauge from the gateway's /metrics (prom-client's text format), or null when it is missing or unreachable. */
export async function metricValue(url: string, name: string): Promise<number | null> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
    const match = new RegExp(`^${name}\\s+(\\d+(?:\\.\\d+)?(?:e\\+?\\d+)?)`, 'm').exec(text);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/**
 * How the gateway targets run: `redis` (`--store redis`) keeps their state in that Redis, under a prefix per run and
 * target, instead of the embedded store; `workers` (`--workers N`) runs each as a cluster of N worker processes.
 */
export interface GatewaySetup {
  redis?: string;
  workers: number;
  /** node flags besides those of `npm start` (the soak's --inspect-port, which opens nothing until asked: live-heap.ts). */
  nodeFlags?: string[];
  /** --keys N: the gateway targets c and e get N API keys of one group and the load cycles through them (default 1). */
  keys?: number;
}
let setup: GatewaySetup = { workers: 1 };

/** A config's load key and its copies: their secrets (the load's), ids (their state's hash tags) and group. */
export interface Spread { keys: string[]; ids: string[]; group: string }

/** The key of the bench configs the load sends (request.ts's default) and that --keys copies. */
const LOAD_KEY_ID = 'bench';

/**
 * A bench config with `n` API keys where it declares the load's one (id `bench`): n − 1 copies of it next to it, the
 * id and the secret suffixed -2, -3..., same group and limits. Bench-only key material; comments and the rest kept.
 */
export function withKeys(text: string, n: number): { text: string } & Spread {
  const doc = parseDocument(text);
  const keys = doc.get('keys');
  if (!isSeq(keys)) throw new Error('--keys: the config has no keys list');
  const at = keys.items.findIndex((k) => isMap(k) && k.get('id') === LOAD_KEY_ID);
  if (at < 0) throw new Error(`--keys: the config has no key with id ${LOAD_KEY_ID}`);
  const first = keys.items[at] as YAMLMap;
  const secret = String(first.get('key'));
  const copies = Array.from({ length: n - 1 }, (_, i) => {
    const copy = first.clone() as YAMLMap;
    copy.set('id', `${LOAD_KEY_ID}-${i + 2}`);
    copy.set('key', `${secret}-${i + 2}`);
    return copy;
  });
  keys.items.splice(at + 1, 0, ...copies);
  return {
    text: doc.toString(),
    keys: [secret, ...copies.map((c) => String(c.get('key')))],
    ids: [LOAD_KEY_ID, ...copies.map((c) => String(c.get('id')))],
    group: String(first.get('group')),
  };
}
export const setUpGateways = (s: GatewaySetup): void => { setup = s; };

/** A redis+cluster:// URL: the bench's own Cluster (bench/run.ts), thrown away whole at the end. */
const isCluster = (url: string) => /^rediss?\+cluster:/.test(url);

/** The embedded store's file belongs to one process (the config refuses it under several workers): they get ":memory:". */
const inMemory = (s: GatewaySetup) => !s.redis && s.workers > 1;

/** The gateway targets' store for the JSON line. */
export const storeKind = (s: GatewaySetup): string => (s.redis ? (isCluster(s.redis) ? 'redis-cluster' : 'redis') : inMemory(s) ? ':memory: per worker' : 'file');

/** The gateway targets' store, as the report's header names it. */
export function storeLabel(s: GatewaySetup): string {
  if (s.redis) return `Redis ${s.redis}${s.workers > 1 ? `, shared by the ${s.workers} workers` : ''}`;
  if (inMemory(s)) return `":memory:" in each of the ${s.workers} workers (the embedded file belongs to one process): each worker keeps its own limits and usage`;
  return 'embedded (a SQLite file in a fresh temp folder)';
}

/** A cluster's /readyz answers once one worker listens; wait for all of them to exist too, so the load meets all. */
async function waitWorkers(child: Child, workers: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (treePids(child.proc.pid).length < workers + 1) {
    if (Date.now() > deadline) throw new Error(`gateway: ${workers} workers not all running within ${timeoutMs} ms (processes: ${treePids(child.proc.pid).length})`);
    await sleep(100);
  }
}

/**
 * A gateway target: the tuned bench/gateway.bench.yaml (`key` picks the group the load reaches), or an operator's
 * config (`operator`: bench/gateway.operator.yaml, its log lines to a file in the run's temp folder).
 */
const gatewayTarget = (id: TargetId, label: string, o: { key?: string; operator?: boolean; spreads?: boolean } = {}): Target => ({
  id,
  label,
  async start(_upstream, upstreamUrl) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // An empty store each run, so a run neither loads nor adds to the last one's usage.
    const store = mkdtempSync(join(tmpdir(), 'gw-bench-'));
    const prefix = `gw-bench-${process.pid}-${id}:`;
    // As shipped: info logging (one line per request, written to /dev/null), the store the run names.
    // With the V8 flags and the entry `npm start` and the Dockerfile give it (GATEWAY_START, package.json).
    let config = o.operator ? 'bench/gateway.operator.yaml' : 'bench/gateway.bench.yaml';
    // --keys N: the config with N keys, in the run's temp folder (its store path is absolute, so nothing moves).
    let spread: Spread | undefined;
    if (o.spreads) {
      const { text, ...keys } = withKeys(readFileSync(join(root, config), 'utf8'), setup.keys ?? 1);
      spread = keys;
      if (keys.keys.length > 1) writeFileSync((config = join(store, 'gateway.yaml')), text);
    }
    const child = startNode('gateway', [...GATEWAY_START.slice(0, -1), ...(setup.nodeFlags ?? []), ...GATEWAY_START.slice(-1), '--config', config, '--port', String(port)], {
      cwd: root, quiet: true, stdoutFile: o.operator ? join(store, 'gateway.log') : undefined,
      env: {
        ...process.env, BENCH_UPSTREAM_URL: upstreamUrl, BENCH_STORE_PATH: inMemory(setup) ? ':memory:' : join(store, 'gateway.db'), LOG_LEVEL: 'info',
        BENCH_REDIS_URL: setup.redis ?? '', BENCH_PREFIX: prefix, BENCH_WORKERS: String(setup.workers),
      },
    });
    const stopAll = async () => {
      await stop(child);
      rmSync(store, { recursive: true, force: true });
      // The run's keys leave the Redis with it (some would otherwise live for weeks: rollups, records).
      if (setup.redis && !isCluster(setup.redis)) await deletePrefix(setup.redis, prefix);
    };
    try {
      await waitReady(child, `${url}/readyz`, START_TIMEOUT_MS);
      if (setup.workers > 1) await waitWorkers(child, setup.workers, START_TIMEOUT_MS);
    } catch (err) {
      await stopAll();
      throw err;
    }
    return {
      url,
      key: o.key,
      spread,
      pid: child.proc.pid,
      async rss() {
        const peak = treeMemory(child.proc.pid, 'VmHWM');
        if (peak.bytes !== null) return peak;
        // Off Linux there is no VmHWM; prom-client's current RSS after the run is the next best figure.
        return { bytes: await metricValue(url, 'process_resident_memory_bytes'), source: 'metrics' };
      },
      stop: stopAll,
    };
  },
});

export const targets: readonly Target[] = [
  direct, bareProxy, gatewayTarget('c', 'gateway (full chain)', { spreads: true }),
  gatewayTarget('d', 'gateway, translating', { key: 'sk-bench-translated' }),
  gatewayTarget('e', 'gateway, operator config', { operator: true, spreads: true }),
];
