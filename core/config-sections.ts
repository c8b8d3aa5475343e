// gateway.yaml's sections made into the running config, one function a section: each cross-checks what the schema
// cannot (names that refer to other sections, URLs, origins, stage chains). The schema filled in every default.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { validateOptions, validateStage, type Path, type Problem } from './config-validate.ts';
import { compilePattern } from './router.ts';
import { parseRange } from './client-address.ts';
import type { AccountConfig, CredentialProvider, CredentialSourceConfig, FormatAdapter, GatewayConfig, GroupConfig, KeyConfig, Plugin, PlatformConfig, RouteConfig, StageRef, UpstreamAuthStyle, UpstreamKind, Waiting } from './types.ts';

export interface ConfigDeps {
  plugins: Record<string, Plugin>;
  formats: Record<string, FormatAdapter>;
  upstreamAuth: Record<string, UpstreamAuthStyle>;
  /** Upstream kinds (platforms.*.kind) and credential providers (accounts' credential_source); none: neither may be named. */
  kinds?: Record<string, UpstreamKind>;
  credentialSources?: Record<string, CredentialProvider>;
  /** The defaults file (routes and pipelines) an operator's file gets or extends; without one, routes are required. */
  defaults?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * What a section's function reports to: problems (the file is refused) and warnings (it runs); and which ${VAR}s left
 * the value at a path empty.
 */
interface Report { problem: Problem; warnings: string[]; blankVars: (path: Path) => string[]; waiting: Waiting[] }

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export function normalise(raw: Record<string, any>, file: string, deps: ConfigDeps, problem: Problem, warnings: string[], blankVars: (path: Path) => string[] = () => []): GatewayConfig {
  const report = { problem, warnings, blankVars, waiting: [] as Waiting[] };
  const server = serverSection(raw.server, report);
  const platforms = platformSection(raw.platforms, deps, report);
  const groups = groupSection(raw.groups, file, platforms, deps, report);
  const keys = keySection(raw.keys, groups, report);
  checkAdminToken(String(raw.admin.token ?? ''), keys, problem);
  const routes = routeSection(raw.routes, raw.pipelines, groups, deps, report);
  const store = storeSection(raw.store, file);
  const notifications = notificationSection(raw.notifications, report);
  if (store.path !== ':memory:' && !store.redis && server.workers !== 1) {
    problem(['server', 'workers'], 'several workers cannot share the embedded store (store.path belongs to one process): set store.redis to share keys, limits and usage between processes, or use workers: 1');
  }
  return {
    file, server, store, admin: { token: raw.admin.token }, auth_throttle: raw.auth_throttle, notifications, platforms, groups, keys,
    pricing: raw.pricing, routes, waiting: report.waiting,
  };
}

function serverSection(s: Record<string, any>, { problem }: Report): GatewayConfig['server'] {
  const bodyLimit = parseBytes(s.body_limit);
  if (bodyLimit === undefined || bodyLimit < 1) problem(['server', 'body_limit'], 'must be a size such as 32mb, 512kb or a byte count');
  const origins: string[] = s.cors.origins;
  origins.forEach((o, i) => {
    if (o !== '*' && !isOrigin(o)) problem(['server', 'cors', 'origins', i], `"${o}" is not an origin: scheme://host[:port] as browsers send it (lower case, no path or trailing slash), or "*"`);
  });
  const trusted: string[] = s.trusted_proxies;
  trusted.forEach((p, i) => {
    if (!parseRange(p)) problem(['server', 'trusted_proxies', i], `"${p}" is not an IP address or CIDR range (e.g. 10.0.0.0/8, 192.168.1.10, fd00::/8)`);
  });
  return {
    host: s.host, port: s.port, workers: s.workers, body_limit: bodyLimit ?? 0, max_connections: s.max_connections,
    headers_timeout_ms: s.headers_timeout_ms, request_timeout_ms: s.request_timeout_ms, keepalive_timeout_ms: s.keepalive_timeout_ms,
    cors: { origins }, trusted_proxies: trusted,
  };
}

function platformSection(raw: Record<string, any>, deps: ConfigDeps, { problem }: Report): Record<string, PlatformConfig> {
  const platforms: Record<string, PlatformConfig> = {};
  const kinds = deps.kinds ?? {};
  for (const [name, p] of Object.entries<any>(raw)) {
    const kind = p.kind === undefined ? undefined : kinds[p.kind];
    if (p.kind !== undefined && !kind) problem(['platforms', name, 'kind'], `unknown kind "${p.kind}" (known: ${Object.keys(kinds).join(', ') || 'none'})`);
    const options: Record<string, unknown> = p.kind_options ?? {};
    for (const message of kind?.check?.(options) ?? []) problem(['platforms', name], message);
    const declared = p.format === undefined ? undefined : [p.format].flat() as string[];
    const formats = declared ?? kind?.formats(options)
      ?? (p.simulator ? Object.keys(deps.formats) : Object.values(deps.formats).filter((f) => f.platforms.includes(name)).map((f) => f.name));
    for (const f of declared ?? []) if (!deps.formats[f]) problem(['platforms', name, 'format'], `unknown format "${f}" (known: ${Object.keys(deps.formats).join(', ')})`);
    if (!formats.length) problem(['platforms', name], 'no format is native to this platform; declare format');
    if (p.auth !== undefined && !deps.upstreamAuth[p.auth]) problem(['platforms', name, 'auth'], `unknown auth style "${p.auth}" (known: ${Object.keys(deps.upstreamAuth).join(', ')})`);
    const baseUrl: string | undefined = p.base_url ?? (p.simulator ? undefined : kind?.baseUrl?.(options));
    if (!p.simulator && !baseUrl) problem(['platforms', name], 'missing base_url (or simulator: true)');
    if (baseUrl && !isHttpUrl(baseUrl)) problem(['platforms', name, 'base_url'], `"${baseUrl}" is not an http(s) URL`);
    // The built-in simulator takes its fault and pacing headers from the client request (tests and demos).
    const forward = [...p.forward_headers, ...(p.simulator ? ['x-simulator-*'] : [])].map((h: string) => h.toLowerCase());
    platforms[name] = {
      name, base_url: baseUrl?.replace(/\/+$/, ''), auth: p.auth, formats, simulator: p.simulator, forward_headers: forward,
      ...(kind ? { kind: kind.name, kind_options: options } : {}),
      ...(p.simulator_token_ttl_ms === undefined ? {} : { simulator_token_ttl_ms: p.simulator_token_ttl_ms }),
    };
  }
  return platforms;
}

/**
 * A platform's kind fields, taken out before the root schema sees the platform (it knows no kind) and checked by the
 * kind's own schema, as a stage's options are: left on the platform as kind_options.
 */
export function takeKindFields(raw: Record<string, any>, deps: ConfigDeps, problem: Problem): void {
  for (const [name, p] of Object.entries<any>(raw.platforms ?? {})) {
    if (!p || typeof p !== 'object') continue;
    const kind = typeof p.kind === 'string' ? deps.kinds?.[p.kind] : undefined;
    if (!kind) continue;
    const options: Record<string, unknown> = {};
    for (const field of Object.keys(kind.schema.properties ?? {})) {
      if (field in p) { options[field] = p[field]; delete p[field]; }
    }
    validateOptions(kind.schema, options, ['platforms', name], (path, m, k) => problem(path, `${m} (kind ${kind.name})`, k));
    Object.defineProperty(p, 'kind_options', { value: options, enumerable: false });
  }
}

/**
 * The concurrency of an account that declares none: a cap no load reaches, so such an account takes the same path as a
 * capped one (its slots are still counted: load balancing and the console read them), and never queues.
 */
export const UNCAPPED = 2 ** 30;

/** The one start-up line of what waits for its variables (GatewayConfig.waiting), or undefined when nothing does. */
export function waitingLine(waiting: readonly Waiting[]): string | undefined {
  if (!waiting.length) return undefined;
  const one = (w: Waiting) => `${w.kind} ${w.id}${w.group ? ` of group ${w.group}` : ''} (${w.variables.join(' or ')})`;
  return `disabled until their variables are set: ${waiting.map(one).join('; ')}`;
}

/**
 * A credential left empty: waiting for its variables when the file takes it from some (an operator sets them when the
 * account is wanted), else a warning (nothing but an edit of the file brings it in).
 */
function unset(report: Report, variables: string[], waiting: Omit<Waiting, 'variables'>, warning: string): void {
  if (variables.length) report.waiting.push({ ...waiting, variables });
  else report.warnings.push(warning);
}

function groupSection(raw: Record<string, any>, file: string, platforms: Record<string, PlatformConfig>, deps: ConfigDeps, report: Report): Record<string, GroupConfig> {
  const { problem, blankVars } = report;
  const groups: Record<string, GroupConfig> = {};
  for (const [name, g] of Object.entries<any>(raw)) {
    if (!platforms[g.platform]) problem(['groups', name, 'platform'], `unknown platform "${g.platform}"`);
    const accounts = g.accounts.map((a: any, i: number) => {
      const source = a.credential_source === undefined ? undefined : credentialSource(a, ['groups', name, 'accounts', i], name, deps, report);
      const credential = source ? '' : a.credential_file === undefined ? String(a.credential ?? '') : fileCredential(a, ['groups', name, 'accounts', i], name, file, problem);
      if (a.base_url && !isHttpUrl(a.base_url)) problem(['groups', name, 'accounts', i, 'base_url'], `"${a.base_url}" is not an http(s) URL`);
      const off: AccountConfig['off'] = a.disabled ? { reason: 'disabled', variables: [] }
        : credential || source?.ready || platforms[g.platform]?.auth === 'none' ? undefined
        : { reason: 'no_credential', variables: blankVars(['groups', name, 'accounts', i, source ? 'credential_source' : 'credential']) };
      if (off?.reason === 'no_credential' && a.credential_file === undefined) {
        unset(report, off.variables, { kind: 'account', id: a.id, group: name }, `account "${a.id}" of group "${name}" has an empty credential; it is disabled`);
      }
      return {
        id: a.id, credential, enabled: !off, ...(off ? { off } : {}), priority: a.priority, weight: a.weight,
        concurrency: a.concurrency ?? UNCAPPED, base_url: a.base_url?.replace(/\/+$/, ''), models: a.models, model_map: a.model_map,
        ...(source ? { source: source.config } : {}),
      };
    });
    groups[name] = {
      name, platform: g.platform, models: g.models, model_map: g.model_map, rate_multiplier: g.rate_multiplier, dedicated: g.dedicated, accounts,
      client_formats: g.client_formats, upstream_format: g.upstream_format, default_max_tokens: g.default_max_tokens, conversation_ttl_ms: g.conversation_ttl_ms,
      fallback: g.fallback,
    };
    (g.fallback as string[]).forEach((f, i) => {
      if (f === name) problem(['groups', name, 'fallback', i], 'a group cannot fall back to itself');
      else if (!(f in raw)) problem(['groups', name, 'fallback', i], `unknown group "${f}"`);
    });
    (g.client_formats ?? []).forEach((f: string, i: number) => {
      if (!deps.formats[f]) problem(['groups', name, 'client_formats', i], `unknown format "${f}" (known: ${Object.keys(deps.formats).join(', ')})`);
    });
    const platform = platforms[g.platform];
    if (g.upstream_format !== undefined && platform && !(platform.formats?.includes(g.upstream_format) && deps.formats[g.upstream_format]?.codec)) {
      const can = (platform.formats ?? []).filter((f) => deps.formats[f]?.codec);
      problem(['groups', name, 'upstream_format'], `"${g.upstream_format}" is not a format of platform "${g.platform}" that can be translated to (${can.join(', ') || 'none'})`);
    }
  }
  return groups;
}

/**
 * An account's credential_source: a provider of deps.credentialSources with its fields checked by the provider's schema.
 * Ready when every required field is set (a ${VAR} left empty leaves the account waiting, like an empty credential).
 */
function credentialSource(a: any, path: Path, group: string, deps: ConfigDeps, report: Report): { config: CredentialSourceConfig; ready: boolean } | undefined {
  const { problem } = report;
  const who = `account "${a.id}" of group "${group}"`;
  if (a.credential !== undefined || a.credential_file !== undefined) problem(path, `${who}: give credential, credential_file or credential_source, one of them`);
  const { type, ...options } = a.credential_source as Record<string, unknown>;
  const provider = deps.credentialSources?.[String(type)];
  if (!provider) {
    problem([...path, 'credential_source', 'type'], `unknown credential source "${String(type)}" (known: ${Object.keys(deps.credentialSources ?? {}).join(', ') || 'none'})`);
    return undefined;
  }
  const required = (provider.schema.required ?? []) as string[];
  const ready = required.every((f) => options[f] !== undefined && options[f] !== '');
  // Required fields left empty by a variable are not shape errors: the account waits for them.
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== ''));
  validateOptions(ready ? provider.schema : relaxed(provider.schema), given, [...path, 'credential_source'], (p, m, k) => problem(p, `${m} (credential source ${provider.name})`, k));
  return { config: { type: provider.name, options: given }, ready };
}

const relaxedSchemas = new WeakMap<object, object>();
/** The schema without its required fields, made once per provider (its validator is compiled once). */
function relaxed(schema: Record<string, any>): object {
  let r = relaxedSchemas.get(schema);
  if (!r) relaxedSchemas.set(schema, r = { ...schema, required: [] });
  return r;
}

/** A credential file past this size is not a credential (a wrong path); it is not read. */
const CREDENTIAL_FILE_MAX = 64 * 1024;

/**
 * An account's credential read from its credential_file, at every load (a reload takes a renewed secret), trimmed.
 * Unreadable or empty refuses the config; the problem names the account and the path, never what the file holds.
 */
function fileCredential(a: any, path: Path, group: string, file: string, problem: Problem): string {
  const who = `account "${a.id}" of group "${group}"`;
  if (a.credential !== undefined) { problem(path, `${who}: give credential or credential_file, not both`); return ''; }
  const at = resolve(dirname(file), String(a.credential_file));
  const refuse = (why: string) => { problem([...path, 'credential_file'], `${who}: ${at} ${why}`); return ''; };
  let text: string;
  try {
    if (statSync(at).size > CREDENTIAL_FILE_MAX) return refuse(`is larger than ${CREDENTIAL_FILE_MAX / 1024} KB: not a credential file`);
    text = readFileSync(at, 'utf8').trim();
  } catch (err) {
    return refuse(`cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return text || refuse('is empty');
}

function keySection(raw: any[], groups: Record<string, GroupConfig>, report: Report): KeyConfig[] {
  const { problem } = report;
  const keys: KeyConfig[] = [];
  const seenIds = new Set<string>();
  const seenSha = new Set<string>();
  raw.forEach((k: any, i: number) => {
    const path = ['keys', i];
    if (seenIds.has(k.id)) problem([...path, 'id'], `duplicate key id "${k.id}"`);
    seenIds.add(k.id);
    if (k.key !== undefined && k.key_sha256 !== undefined) problem(path, 'give key or key_sha256, not both');
    if (k.key === undefined && k.key_sha256 === undefined) problem(path, 'missing key (or key_sha256)');
    if (k.key === '') { unset(report, report.blankVars([...path, 'key']), { kind: 'key', id: k.id }, `key "${k.id}" is empty; it is disabled`); return; }
    const hash = k.key !== undefined ? sha256(String(k.key)) : String(k.key_sha256 ?? '').toLowerCase();
    if (seenSha.has(hash)) problem(path, `key "${k.id}" has the same secret as another key`);
    seenSha.add(hash);
    if (!groups[k.group]) problem([...path, 'group'], `unknown group "${k.group}"`);
    for (const [j, pool] of k.pools.entries()) {
      if (!groups[pool]?.dedicated) problem([...path, 'pools', j], `"${pool}" is not a dedicated group`);
    }
    let expires: number | undefined;
    if (k.expires_at !== undefined) {
      expires = Date.parse(k.expires_at);
      if (Number.isNaN(expires)) problem([...path, 'expires_at'], `"${k.expires_at}" is not an ISO 8601 time`);
    }
    keys.push({ id: k.id, sha256: hash, group: k.group, pools: k.pools, models: k.models, limits: k.limits, expires_at: expires, disabled: k.disabled });
  });
  return keys;
}

function routeSection(raw: any[], named: Record<string, unknown[]>, groups: Record<string, GroupConfig>, deps: ConfigDeps, { problem }: Report): RouteConfig[] {
  // Each named pipeline is checked once (used or not), so a bad stage is reported once.
  const pipelines = new Map<string, StageRef[]>();
  for (const [name, list] of Object.entries(named)) {
    const stages = (Array.isArray(list) ? list : []).map((item, j) => stageRef(item, ['pipelines', name, j], deps, problem));
    checkChain(stages, deps, problem);
    pipelines.set(name, stages);
  }
  return raw.map((r: any, i: number) => {
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
    return { method: r.method, path: r.path, format: r.format, stages, pool: r.pool, upstream_path: r.upstream_path, params: r.params, billed: r.billed };
  });
}

/** Store settings; the embedded store's path is resolved against the config file's folder. */
function storeSection(s: Record<string, any>, file: string): GatewayConfig['store'] {
  const path = String(s.path);
  return {
    redis: s.redis, path: path === ':memory:' ? path : resolve(dirname(file), path), prefix: s.prefix, retention_days: s.retention_days,
    records_per_key: s.records_per_key, records_total: s.records_total, timeout_ms: s.timeout_ms,
  };
}

/** The shortest webhook secret accepted: an HMAC key a receiver's attacker must not guess. */
const WEBHOOK_SECRET_MIN = 16;

/** Webhooks: http(s) URLs, secrets long enough to sign with, names unique (the URL's host unless given). */
function notificationSection(n: Record<string, any>, { problem, warnings }: Report): GatewayConfig['notifications'] {
  const names = new Set<string>();
  const webhooks = (n.webhooks as any[]).map((h, i) => {
    const path = ['notifications', 'webhooks', i];
    let url: URL | undefined;
    try { url = new URL(String(h.url)); } catch { /* reported below */ }
    if (!url || !/^https?:$/.test(url.protocol)) problem([...path, 'url'], 'is not an http(s) URL');
    else if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) warnings.push(`webhook "${h.name ?? url.host}" is sent over plain http: its bodies can be read on the way (use https)`);
    const secret = String(h.secret);
    if (secret.length < WEBHOOK_SECRET_MIN) problem([...path, 'secret'], `must be at least ${WEBHOOK_SECRET_MIN} characters (it has ${secret.length}): generate one with \`openssl rand -hex 32\` and give the receiver the same`);
    const name = String(h.name ?? url?.host ?? i);
    if (names.has(name)) problem(path, `a second webhook named "${name}": give each its own name`);
    names.add(name);
    return { name, url: String(h.url), secret, events: h.events };
  });
  return { webhooks, timeout_ms: n.timeout_ms, retries: n.retries, retry_ms: n.retry_ms, queue_limit: n.queue_limit, quota_percents: n.quota_percents, history: n.history };
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

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

function stageRef(item: unknown, path: Path, deps: ConfigDeps, problem: Problem): StageRef {
  const [name, given] = typeof item === 'string' ? [item, {}] : Object.entries(item as object)[0];
  // Not a name or a one-key map: the shape check says so; kept only to report its options too.
  const malformed = typeof item !== 'string' && Object.keys(item as object).length !== 1;
  const plugin = deps.plugins[name];
  if (!plugin) {
    problem(path, `unknown stage "${name}" (known: ${Object.keys(deps.plugins).join(', ')})`);
    return { name, options: {}, path };
  }
  const options = structuredClone(given ?? {});
  validateStage(plugin, options, typeof item === 'string' ? path : [...path, name], problem);
  return { name, options, path, ...(malformed ? { malformed } : {}) };
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

export function parseBytes(v: string | number): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) && v > 0 ? v : undefined;
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(v.trim());
  return m ? Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]) : undefined;
}

/** An origin exactly as a browser sends it in its Origin header. */
function isOrigin(s: string): boolean {
  try { const url = new URL(s); return /^https?:$/.test(url.protocol) && url.origin === s; } catch { return false; }
}

function isHttpUrl(s: string): boolean {
  try { return /^https?:$/.test(new URL(s).protocol); } catch { return false; }
}
