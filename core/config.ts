// Loads gateway.yaml: parse with positions, interpolate ${VAR}, validate (root + each stage's schema), normalise.
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, resolve } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LineCounter, parseDocument, visit, isMap, isSeq, isScalar, isPair, type Document, type Node } from 'yaml';
import { rootSchema } from './config-schema.ts';
import { compilePattern } from './router.ts';
import type { FormatAdapter, GatewayConfig, GroupConfig, KeyConfig, Plugin, PlatformConfig, RouteConfig, StageRef, UpstreamAuthStyle } from './types.ts';

export interface ConfigDeps {
  plugins: Record<string, Plugin>;
  formats: Record<string, FormatAdapter>;
  upstreamAuth: Record<string, UpstreamAuthStyle>;
  env?: NodeJS.ProcessEnv;
}

export class ConfigError extends Error {
  problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Path = (string | number)[];

// coerceTypes: interpolated values are strings ("${PORT:-8080}"); the schema decides what they become.
const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, verbose: true, strict: false });
const validateRoot = ajv.compile(rootSchema);
const stageValidators = new WeakMap<Plugin, ValidateFunction>();

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Read and validate a config file; throws ConfigError listing every problem as FILE:LINE:COL path: message. */
export function loadConfig(file: string, deps: ConfigDeps): { config: GatewayConfig; warnings: string[] } {
  let text: string;
  try { text = readFileSync(file, 'utf8'); } catch (err) { throw new ConfigError([`${file}: ${(err as Error).message}`]); }
  return parseConfig(text, file, deps);
}

export function parseConfig(text: string, file: string, deps: ConfigDeps): { config: GatewayConfig; warnings: string[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  const where = (offset: number) => { const p = lineCounter.linePos(offset); return `${basename(file)}:${p.line}:${p.col}`; };
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const e of doc.errors) problems.push(`${where(e.pos[0])} ${e.message.split('\n')[0]}`);
  if (problems.length) throw new ConfigError(problems);

  const at = (path: Path, onKey = false) => `${where(locate(doc, path, onKey))} ${path.join('.') || '(root)'}:`;
  const problem = (path: Path, message: string, onKey = false) => problems.push(`${at(path, onKey)} ${message}`);

  interpolate(doc, deps.env ?? process.env, (offset, message) => problems.push(`${where(offset)} ${message}`));
  if (problems.length) throw new ConfigError(problems);

  const raw = (doc.toJS() ?? {}) as Record<string, any>;
  const shapeOk = validateRoot(raw);
  if (!shapeOk) for (const e of validateRoot.errors ?? []) reportAjv(e, [], problem);
  let config: GatewayConfig | undefined;
  try {
    config = normalise(raw, file, deps, problem, warnings);
  } catch (err) {
    // Cross-checks on a file with shape errors may trip over them; the shape errors already explain why.
    if (shapeOk) throw err;
  }
  if (problems.length || !config) throw new ConfigError([...new Set(problems)]);
  return { config, warnings };
}

function reportAjv(e: ErrorObject, base: Path, problem: (p: Path, m: string, onKey?: boolean) => void): void {
  if (e.schemaPath.includes('/anyOf/')) return; // the anyOf error itself says it better
  const path = [...base, ...e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))];
  const p = e.params as Record<string, any>;
  switch (e.keyword) {
    case 'additionalProperties': return problem([...path, p.additionalProperty], `unknown field "${p.additionalProperty}"`, true);
    case 'required': return problem(path, `missing required field "${p.missingProperty}"`);
    case 'enum': return problem(path, `must be one of ${(p.allowedValues as unknown[]).join(', ')}`);
    case 'anyOf': return problem(path, `must be ${String((e.parentSchema as any)?.description ?? 'a valid value').replace(/\.$/, '').toLowerCase()}`);
    default: return problem(path, e.message ?? 'is invalid');
  }
}

/** Offset of the node at path (or of its key), falling back to the deepest node that exists. */
function locate(doc: Document, path: Path, onKey: boolean): number {
  let node: unknown = doc.contents;
  let offset = (node as Node | null)?.range?.[0] ?? 0;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    if (isMap(node)) {
      const pair = node.items.find((it) => isPair(it) && isScalar(it.key) && String(it.key.value) === String(seg));
      if (!pair) break;
      if (i === path.length - 1 && onKey) return (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      node = node.items[Number(seg)];
    } else break;
    offset = (node as Node | null)?.range?.[0] ?? offset;
  }
  return offset;
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}/g;

/** Replace ${VAR} and ${VAR:-default} in every scalar value. */
function interpolate(doc: Document, env: NodeJS.ProcessEnv, fail: (offset: number, message: string) => void): void {
  visit(doc, {
    Scalar(key, node) {
      if (key === 'key' || typeof node.value !== 'string' || !node.value.includes('${')) return;
      const value = node.value.replace(VAR, (_m, name: string, fallback: string | undefined) => {
        // Shell semantics: ${VAR:-d} replaces unset or empty; ${VAR} fails only when unset.
        const v = env[name];
        if (fallback !== undefined) return v === undefined || v === '' ? fallback : v;
        if (v !== undefined) return v;
        fail(node.range?.[0] ?? 0, `environment variable ${name} is not set (use \${${name}:-default} to make it optional)`);
        return '';
      });
      node.value = value;
    },
  });
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

export function parseBytes(v: string | number): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) && v > 0 ? v : undefined;
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(v.trim());
  return m ? Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]) : undefined;
}

type Problem = (path: Path, message: string, onKey?: boolean) => void;

function normalise(raw: Record<string, any>, file: string, deps: ConfigDeps, problem: Problem, warnings: string[]): GatewayConfig {
  const server = raw.server ?? {};
  const bodyLimit = parseBytes(server.body_limit ?? '32mb');
  if (bodyLimit === undefined || bodyLimit < 1) problem(['server', 'body_limit'], 'must be a size such as 32mb, 512kb or a byte count');
  const origins: string[] = server.cors?.origins ?? [];
  origins.forEach((o, i) => {
    if (o !== '*' && !isOrigin(o)) problem(['server', 'cors', 'origins', i], `"${o}" is not an origin: scheme://host[:port] as browsers send it (lower case, no path or trailing slash), or "*"`);
  });

  const platforms: Record<string, PlatformConfig> = {};
  for (const [name, p] of Object.entries<any>(raw.platforms ?? {})) {
    const declared = p.format === undefined ? undefined : [p.format].flat() as string[];
    const formats = declared ?? (p.simulator ? Object.keys(deps.formats) : Object.values(deps.formats).filter((f) => f.platforms.includes(name)).map((f) => f.name));
    for (const f of declared ?? []) if (!deps.formats[f]) problem(['platforms', name, 'format'], `unknown format "${f}" (known: ${Object.keys(deps.formats).join(', ')})`);
    if (!formats.length) problem(['platforms', name], 'no format is native to this platform; declare format');
    if (p.auth !== undefined && !deps.upstreamAuth[p.auth]) problem(['platforms', name, 'auth'], `unknown auth style "${p.auth}" (known: ${Object.keys(deps.upstreamAuth).join(', ')})`);
    if (!p.simulator && !p.base_url) problem(['platforms', name], 'missing base_url (or simulator: true)');
    if (p.base_url && !isHttpUrl(p.base_url)) problem(['platforms', name, 'base_url'], `"${p.base_url}" is not an http(s) URL`);
    // The built-in simulator takes its fault and pacing headers from the client request (tests and demos).
    const forward = [...(p.forward_headers ?? []), ...(p.simulator ? ['x-simulator-*'] : [])].map((h: string) => h.toLowerCase());
    platforms[name] = { name, base_url: p.base_url?.replace(/\/+$/, ''), auth: p.auth, formats, simulator: p.simulator === true, forward_headers: forward };
  }

  const groups: Record<string, GroupConfig> = {};
  for (const [name, g] of Object.entries<any>(raw.groups ?? {})) {
    if (!platforms[g.platform]) problem(['groups', name, 'platform'], `unknown platform "${g.platform}"`);
    const accounts = (g.accounts ?? []).map((a: any, i: number) => {
      const credential = String(a.credential ?? '');
      if (!credential && !a.disabled) warnings.push(`account "${a.id}" of group "${name}" has an empty credential; it is disabled`);
      if (a.base_url && !isHttpUrl(a.base_url)) problem(['groups', name, 'accounts', i, 'base_url'], `"${a.base_url}" is not an http(s) URL`);
      return {
        id: a.id, credential, enabled: !!credential && !a.disabled, priority: a.priority ?? 1, weight: a.weight ?? 1,
        concurrency: a.concurrency ?? 8, base_url: a.base_url?.replace(/\/+$/, ''), models: a.models, model_map: a.model_map,
      };
    });
    groups[name] = {
      name, platform: g.platform, models: g.models ?? [], model_map: g.model_map ?? {},
      rate_multiplier: g.rate_multiplier ?? 1, dedicated: g.dedicated === true, accounts,
      client_formats: g.client_formats, upstream_format: g.upstream_format,
      default_max_tokens: g.default_max_tokens ?? 8192, conversation_ttl_ms: g.conversation_ttl_ms ?? 604_800_000,
    };
    (g.client_formats ?? []).forEach((f: string, i: number) => {
      if (!deps.formats[f]) problem(['groups', name, 'client_formats', i], `unknown format "${f}" (known: ${Object.keys(deps.formats).join(', ')})`);
    });
    const platform = platforms[g.platform];
    if (g.upstream_format !== undefined && platform && !(platform.formats?.includes(g.upstream_format) && deps.formats[g.upstream_format]?.codec)) {
      const can = (platform.formats ?? []).filter((f) => deps.formats[f]?.codec);
      problem(['groups', name, 'upstream_format'], `"${g.upstream_format}" is not a format of platform "${g.platform}" that can be translated to (${can.join(', ') || 'none'})`);
    }
  }

  const keys: KeyConfig[] = [];
  const seenIds = new Set<string>();
  const seenSha = new Set<string>();
  (raw.keys ?? []).forEach((k: any, i: number) => {
    const path = ['keys', i];
    if (seenIds.has(k.id)) problem([...path, 'id'], `duplicate key id "${k.id}"`);
    seenIds.add(k.id);
    if (k.key !== undefined && k.key_sha256 !== undefined) problem(path, 'give key or key_sha256, not both');
    if (k.key === undefined && k.key_sha256 === undefined) problem(path, 'missing key (or key_sha256)');
    if (k.key === '') { warnings.push(`key "${k.id}" is empty; it is disabled`); return; }
    const hash = k.key !== undefined ? sha256(String(k.key)) : String(k.key_sha256 ?? '').toLowerCase();
    if (seenSha.has(hash)) problem(path, `key "${k.id}" has the same secret as another key`);
    seenSha.add(hash);
    if (!groups[k.group]) problem([...path, 'group'], `unknown group "${k.group}"`);
    for (const [j, pool] of (k.pools ?? []).entries()) {
      if (!groups[pool]?.dedicated) problem([...path, 'pools', j], `"${pool}" is not a dedicated group`);
    }
    let expires: number | undefined;
    if (k.expires_at !== undefined) {
      expires = Date.parse(k.expires_at);
      if (Number.isNaN(expires)) problem([...path, 'expires_at'], `"${k.expires_at}" is not an ISO 8601 time`);
    }
    keys.push({ id: k.id, sha256: hash, group: k.group, pools: k.pools ?? [], models: k.models, limits: k.limits ?? {}, expires_at: expires, disabled: k.disabled === true });
  });

  checkAdminToken(String(raw.admin?.token ?? ''), keys, problem);

  // Each named pipeline is checked once (used or not), so a bad stage is reported once.
  const pipelines = new Map<string, StageRef[]>();
  for (const [name, list] of Object.entries<unknown[]>(raw.pipelines ?? {})) {
    const stages = (Array.isArray(list) ? list : []).map((item, j) => stageRef(item, ['pipelines', name, j], deps, problem));
    checkChain(stages, deps, problem);
    pipelines.set(name, stages);
  }

  const routes: RouteConfig[] = (raw.routes ?? []).map((r: any, i: number) => {
    const path = ['routes', i];
    let compiled: ReturnType<typeof compilePattern> = null;
    try { compiled = compilePattern(r.path); } catch (err) { problem([...path, 'path'], (err as Error).message); }
    if (!deps.formats[r.format]) problem([...path, 'format'], `unknown format "${r.format}" (known: ${Object.keys(deps.formats).join(', ')})`);
    if (r.pool !== undefined && !groups[r.pool]?.dedicated) problem([...path, 'pool'], `"${r.pool}" is not a dedicated group`);
    let stages: StageRef[];
    if (typeof r.pipeline === 'string') {
      stages = pipelines.get(r.pipeline) ?? [];
      if (!pipelines.has(r.pipeline)) problem([...path, 'pipeline'], `unknown pipeline "${r.pipeline}"`);
    } else {
      stages = (Array.isArray(r.pipeline) ? r.pipeline : []).map((item: unknown, j: number) => stageRef(item, [...path, 'pipeline', j], deps, problem));
      checkChain(stages, deps, problem);
    }
    for (const [name, source] of Object.entries<string>(r.params ?? {})) {
      try { new RegExp(source); } catch (err) { problem([...path, 'params', name], `not a regular expression: ${(err as Error).message}`); }
      if (!compiled?.names.includes(name)) problem([...path, 'params', name], `the path pattern captures no "${name}"`, true);
    }
    return { method: r.method, path: r.path, format: r.format, stages, pool: r.pool, upstream_path: r.upstream_path, params: r.params, billed: r.billed !== false };
  });

  const store = normaliseStore(raw.store ?? {}, file);
  if (store.path !== ':memory:' && !store.redis && (server.workers ?? 1) !== 1) {
    problem(['server', 'workers'], 'several workers cannot share the embedded store (store.path belongs to one process): set store.redis to share keys, limits and usage between processes, or use workers: 1');
  }

  return {
    file,
    server: {
      host: server.host ?? '0.0.0.0', port: server.port ?? 8080, workers: server.workers ?? 1, body_limit: bodyLimit ?? 0,
      max_connections: server.max_connections ?? 10_000, headers_timeout_ms: server.headers_timeout_ms ?? 20_000,
      request_timeout_ms: server.request_timeout_ms ?? 300_000, keepalive_timeout_ms: server.keepalive_timeout_ms ?? 65_000,
      cors: { origins },
    },
    store,
    admin: { token: raw.admin?.token ?? '' },
    platforms, groups, keys, pricing: raw.pricing ?? {}, routes,
  };
}

/** The shortest admin.token accepted (`openssl rand -hex 32` makes 64 characters). */
const ADMIN_TOKEN_MIN = 32;

/**
 * The admin token issues keys and reads every key's usage: one short enough to guess, or a key's own secret (whose
 * holder would then be the operator), is refused. Empty is allowed: the admin API is then off.
 */
function checkAdminToken(token: string, keys: KeyConfig[], problem: Problem): void {
  if (!token) return;
  const how = `generate one with \`openssl rand -hex 32\` (e.g. GATEWAY_ADMIN_TOKEN=$(openssl rand -hex 32)), or leave it empty to turn the admin API off`;
  if (token.length < ADMIN_TOKEN_MIN) problem(['admin', 'token'], `must be at least ${ADMIN_TOKEN_MIN} characters (it has ${token.length}): ${how}`);
  if (/\s/.test(token)) problem(['admin', 'token'], `must not contain spaces (it is sent as Authorization: Bearer <token>): ${how}`);
  const hash = sha256(token);
  const same = keys.find((k) => k.sha256 === hash);
  if (same) problem(['admin', 'token'], `is the secret of key "${same.id}": the admin token must be a secret of its own; ${how}`);
}

/**
 * Each stage's contract with its chain: what it requires must be provided by a stage before it (auth before
 * group-check, admin-auth before any admin stage, …). A chain that breaks it is refused here, not by a request.
 */
function checkChain(stages: StageRef[], deps: ConfigDeps, problem: Problem): void {
  // A chain with an unknown or malformed stage is reported as such; its order means nothing yet.
  if (stages.some((s) => !deps.plugins[s.name] || s.malformed)) return;
  const provided = new Set<string>();
  for (const stage of stages) {
    const plugin = deps.plugins[stage.name];
    if (!plugin) continue;
    for (const field of plugin.requires ?? []) {
      if (provided.has(field)) continue;
      const by = Object.values(deps.plugins).filter((p) => p.provides?.includes(field)).map((p) => p.name);
      problem(stage.path, `stage "${stage.name}" requires "${field}", which no earlier stage of this chain provides${by.length ? ` (put ${by.join(' or ')} before it)` : ''}`);
    }
    for (const field of plugin.provides ?? []) provided.add(field);
  }
}

/** Store settings with defaults; the embedded store's path is resolved against the config file's folder. */
function normaliseStore(s: Record<string, any>, file: string): GatewayConfig['store'] {
  const path = String(s.path ?? './data/gateway.db');
  return {
    redis: s.redis ?? '', path: path === ':memory:' ? path : resolve(dirname(file), path), prefix: s.prefix ?? 'gw:',
    retention_days: s.retention_days ?? 30, records_per_key: s.records_per_key ?? 10_000, records_total: s.records_total ?? 100_000,
    timeout_ms: s.timeout_ms ?? 2000,
  };
}

function stageRef(item: unknown, path: Path, deps: ConfigDeps, problem: Problem): StageRef {
  const [name, given] = typeof item === 'string' ? [item, {}] : Object.entries(item as object)[0];
  // Not a name or a one-key map: the shape check says so; kept only to report its options too.
  const malformed = typeof item !== 'string' && Object.keys(item as object).length !== 1;
  const plugin = deps.plugins[name];
  if (!plugin) {
    problem(path, `unknown stage "${name}" (known: ${Object.keys(deps.plugins).join(', ')})`);
    return { name, options: {}, path };
  }
  let validate = stageValidators.get(plugin);
  if (!validate) stageValidators.set(plugin, validate = ajv.compile(plugin.schema));
  const options = structuredClone(given ?? {});
  const optionsPath = typeof item === 'string' ? path : [...path, name];
  if (!validate(options)) for (const e of validate.errors ?? []) reportAjv(e, optionsPath, (p, m, k) => problem(p, `${m} (stage ${name})`, k));
  return { name, options, path, ...(malformed ? { malformed } : {}) };
}

/** An origin exactly as a browser sends it in its Origin header. */
function isOrigin(s: string): boolean {
  try { const url = new URL(s); return /^https?:$/.test(url.protocol) && url.origin === s; } catch { return false; }
}

function isHttpUrl(s: string): boolean {
  try { return /^https?:$/.test(new URL(s).protocol); } catch { return false; }
}
