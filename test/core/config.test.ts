// core/config.ts: normalisation and defaults, ${VAR} interpolation, FILE:LINE:COL problems, semantic checks, the --check CLI.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { ConfigError, loadConfig, parseBytes, parseConfig, type ConfigDeps } from '../../core/config.ts';
import { UNCAPPED, waitingLine } from '../../core/config-sections.ts';
import { formats, plugins, upstreamAuth } from '../../app/registry.ts';
import type { FormatAdapter } from '../../core/types.ts';
import { pos, refused } from '../helpers/config-text.ts';
import { demoConfig, writeConfig } from '../helpers/gateway.ts';

const FILE = '/etc/gw/gateway.yaml';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const deps = (env: NodeJS.ProcessEnv = {}, extra: Partial<ConfigDeps> = {}): ConfigDeps => ({ plugins, formats, upstreamAuth, env, ...extra });

const parse = (yaml: string, env: NodeJS.ProcessEnv = {}, extra: Partial<ConfigDeps> = {}) => parseConfig(yaml, FILE, deps(env, extra));

const problemsOf = (yaml: string, env: NodeJS.ProcessEnv = {}, extra: Partial<ConfigDeps> = {}): string[] => refused(() => parse(yaml, env, extra));

const ROUTE = '  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: [auth, group-check, proxy] }\n';
const SIM = 'platforms:\n  sim: { simulator: true }\n';

const MINIMAL = `${SIM}groups:
  g:
    platform: sim
    models: [gpt-4o-mini]
    accounts:
      - { id: a1, credential: cred-1 }
      - id: a2
        credential: cred-2
        priority: 2
        weight: 3
        concurrency: 16
        base_url: http://10.0.0.1:9000/
keys:
  - { id: k1, key: sk-one, group: g }
  - { id: k2, key_sha256: "${sha256('sk-two').toUpperCase()}", group: g }
routes:
${ROUTE}`;

t.test('a valid minimal config normalises with defaults', async (t) => {
  const { config, warnings } = parse(MINIMAL);
  t.strictSame(warnings, []);
  t.equal(config.file, FILE);
  t.strictSame(config.server, {
    host: '0.0.0.0', port: 8080, workers: 1, body_limit: 33554432,
    max_connections: 10000, headers_timeout_ms: 20000, request_timeout_ms: 300000, keepalive_timeout_ms: 65000, cors: { origins: [] }, trusted_proxies: [],
  });
  t.strictSame(config.store, {
    redis: '', path: '/etc/gw/data/gateway.db', prefix: 'gw:', retention_days: 30, records_per_key: 10000, records_total: 100000, timeout_ms: 2000,
  }, 'the embedded store is kept in data/gateway.db beside the config file');
  t.strictSame(config.admin, { token: '' });
  t.strictSame(config.pricing, {});
  t.strictSame(config.platforms, { sim: { name: 'sim', base_url: undefined, auth: undefined, formats: Object.keys(formats), simulator: true, forward_headers: ['x-simulator-*'] } });
  t.strictSame(config.groups, {
    g: {
      name: 'g', platform: 'sim', models: ['gpt-4o-mini'], model_map: {}, rate_multiplier: 1, dedicated: false,
      client_formats: undefined, upstream_format: undefined, default_max_tokens: 8192, conversation_ttl_ms: 604_800_000, fallback: [],
      accounts: [
        { id: 'a1', credential: 'cred-1', enabled: true, priority: 1, weight: 1, concurrency: UNCAPPED, base_url: undefined, models: undefined, model_map: undefined },
        { id: 'a2', credential: 'cred-2', enabled: true, priority: 2, weight: 3, concurrency: 16, base_url: 'http://10.0.0.1:9000', models: undefined, model_map: undefined },
      ],
    },
  });
  t.strictSame(config.keys, [
    { id: 'k1', sha256: sha256('sk-one'), group: 'g', pools: [], models: undefined, limits: {}, expires_at: undefined, disabled: false },
    { id: 'k2', sha256: sha256('sk-two'), group: 'g', pools: [], models: undefined, limits: {}, expires_at: undefined, disabled: false },
  ], 'key sha256 computed from key; key_sha256 accepted and lower-cased');
  t.equal(config.routes.length, 1);
  const route = config.routes[0];
  t.equal(route.method, 'POST');
  t.equal(route.path, '/v1/chat/completions');
  t.equal(route.format, 'openai-chat');
  t.equal(route.pool, undefined);
  t.strictSame(route.stages.map((s) => s.name), ['auth', 'group-check', 'proxy']);
  t.strictSame(route.stages.map((s) => s.path), [['routes', 0, 'pipeline', 0], ['routes', 0, 'pipeline', 1], ['routes', 0, 'pipeline', 2]]);
});

t.test('explicit values are kept; key options, limits and expiry normalise', async (t) => {
  const { config } = parse(`server: { host: 127.0.0.1, port: 0, workers: auto, body_limit: 512kb }
store: { redis: "redis://r:6379" }
admin: { token: tok-0123456789abcdef0123456789abcdef }
platforms:
  openai: { base_url: "https://api.openai.com/", auth: x-api-key }
  pool: { simulator: true }
groups:
  g: { platform: openai, rate_multiplier: 1.5, model_map: { a: b }, accounts: [ { id: x, credential: c, disabled: true } ] }
  d: { platform: pool, dedicated: true }
keys:
  - { id: k, key: s, group: g, pools: [d], models: ["gpt-*"], limits: { rpm: 60, quota_usd: 2.5 }, expires_at: "2027-01-01T00:00:00Z", disabled: true }
pricing:
  gpt-4o-mini: { input: 0.15, output: 0.6 }
routes:
  - { method: GET, path: /v1/models, format: openai-chat, pipeline: [auth, list-models], pool: d, upstream_path: /models }
`);
  t.match(config.server, { host: '127.0.0.1', port: 0, workers: 'auto', body_limit: 524288 });
  t.strictSame(config.store, {
    redis: 'redis://r:6379', path: '/etc/gw/data/gateway.db', prefix: 'gw:', retention_days: 30, records_per_key: 10000, records_total: 100000, timeout_ms: 2000,
  }, 'workers: auto with Redis is fine');
  t.strictSame(config.admin, { token: 'tok-0123456789abcdef0123456789abcdef' });
  t.match(config.platforms.openai, { name: 'openai', base_url: 'https://api.openai.com', auth: 'x-api-key', simulator: false });
  t.ok(config.platforms.openai.formats?.includes('openai-chat'));
  t.equal(config.groups.g.rate_multiplier, 1.5);
  t.strictSame(config.groups.g.model_map, { a: 'b' });
  t.equal(config.groups.g.accounts[0].enabled, false, 'a disabled account with a credential is not enabled');
  t.equal(config.groups.d.dedicated, true);
  t.strictSame(config.keys[0], {
    id: 'k', sha256: sha256('s'), group: 'g', pools: ['d'], models: ['gpt-*'], limits: { rpm: 60, quota_usd: 2.5 },
    expires_at: Date.UTC(2027, 0, 1), disabled: true,
  });
  t.strictSame(config.pricing, { 'gpt-4o-mini': { input: 0.15, output: 0.6 } });
  t.equal(config.routes[0].pool, 'd');
  t.equal(config.routes[0].upstream_path, '/models');
});

t.test('store.path: relative to the config file\'s folder, absolute as given, ":memory:" as is', async (t) => {
  const path = (p: string) => parse(`store: { path: "${p}" }\n${MINIMAL}`).config.store.path;
  t.equal(path('state/gw.db'), '/etc/gw/state/gw.db');
  t.equal(path('../var/gw.db'), '/etc/var/gw.db');
  t.equal(path('/var/lib/gateway/gw.db'), '/var/lib/gateway/gw.db');
  t.equal(path(':memory:'), ':memory:');
  const empty = `store: { path: "" }\n${MINIMAL}`;
  t.strictSame(problemsOf(empty), [`gateway.yaml:${pos(empty, '""')} store.path: must NOT have fewer than 1 characters`]);
});

t.test('workers: N with the embedded file store is refused at the workers line (each process would own the file)', async (t) => {
  for (const workers of ['2', 'auto']) {
    const yaml = `server: { workers: ${workers} }\n${MINIMAL}`;
    t.strictSame(problemsOf(yaml), [
      `gateway.yaml:${pos(yaml, workers)} server.workers: several workers cannot share the embedded store (store.path belongs to one process): set store.redis to share keys, limits and usage between processes, or use workers: 1`,
    ], `workers: ${workers}`);
  }
  const memory = `server: { workers: 2 }\nstore: { path: ":memory:" }\n${MINIMAL}`;
  t.equal(parse(memory).config.server.workers, 2, 'memory only: each worker has its own, as before');
  t.equal(parse(`server: { workers: 1 }\n${MINIMAL}`).config.server.workers, 1);
});

t.test('parseBytes', async (t) => {
  t.equal(parseBytes('32mb'), 33554432);
  t.equal(parseBytes('32MB'), 33554432);
  t.equal(parseBytes(' 512 kb '), 524288);
  t.equal(parseBytes('1gb'), 1073741824);
  t.equal(parseBytes('1.5kb'), 1536);
  t.equal(parseBytes('100'), 100);
  t.equal(parseBytes('100b'), 100);
  t.equal(parseBytes(4096), 4096);
  t.equal(parseBytes('lots'), undefined);
  t.equal(parseBytes('10tb'), undefined);
  t.equal(parseBytes('-1kb'), undefined);
  t.equal(parseBytes(''), undefined);
  t.equal(parseBytes('kb'), undefined);
});

t.test('body_limit: sizes and byte counts; an unreadable size is a problem', async (t) => {
  t.equal(parse(`server: { body_limit: 64kb }\nroutes:\n${ROUTE}`).config.server.body_limit, 65536);
  t.equal(parse(`server: { body_limit: 1000 }\nroutes:\n${ROUTE}`).config.server.body_limit, 1000);
  const yaml = `server: { body_limit: lots }\nroutes:\n${ROUTE}`;
  t.strictSame(problemsOf(yaml), [`gateway.yaml:${pos(yaml, 'lots')} server.body_limit: must be a size such as 32mb, 512kb or a byte count`]);
  const negative = `server: { body_limit: -5 }\nroutes:\n${ROUTE}`;
  let refused: string[] = [];
  try { parse(negative); } catch (err) { refused = (err as ConfigError).problems; }
  t.equal(refused.length, 1, 'a negative body_limit is refused');
});

t.test('${VAR} and ${VAR:-default} interpolation', async (t) => {
  const yaml = `server: { host: "\${HOST:-127.0.0.1}", port: "\${PORT:-8080}" }
admin: { token: "\${TOKEN}" }
platforms:
  up: { base_url: "http://\${UP_HOST}:\${UP_PORT:-80}/v1", auth: bearer, format: openai-chat }
groups:
  g:
    platform: up
    accounts:
      - { id: a, credential: "\${CRED}" }
      - id: b
        credential: \${CRED_B:-fallback}
keys:
  - { id: k, key: "\${K}", group: g }
routes:
${ROUTE}`;
  const { config } = parse(yaml, { TOKEN: 'adm-0123456789abcdef0123456789abcdef', UP_HOST: 'up.local', CRED: '{"not": yaml}', K: 'sk-from-env' });
  t.equal(config.server.port, 8080, 'a quoted "${PORT:-8080}" becomes the integer 8080');
  t.equal(typeof config.server.port, 'number');
  t.equal(config.server.host, '127.0.0.1');
  t.equal(config.admin.token, 'adm-0123456789abcdef0123456789abcdef');
  t.equal(config.platforms.up.base_url, 'http://up.local:80/v1', 'several variables in one scalar');
  t.equal(config.groups.g.accounts[0].credential, '{"not": yaml}', 'the value is text, never parsed as YAML');
  t.equal(config.groups.g.accounts[1].credential, 'fallback', 'unquoted block scalars are interpolated too');
  t.equal(config.keys[0].sha256, sha256('sk-from-env'));

  const once = parse(`admin: { token: "\${TOKEN}" }\nroutes:\n${ROUTE}`, { TOKEN: '\${OTHER}-0123456789abcdef0123456789abcdef', OTHER: 'no' }).config;
  t.equal(once.admin.token, '\${OTHER}-0123456789abcdef0123456789abcdef', 'an interpolated value is not interpolated again');

  const set = parse(yaml, { TOKEN: 'adm-0123456789abcdef0123456789abcdef', UP_HOST: 'h', CRED: 'c', K: 'k', PORT: '9090', HOST: '0.0.0.0', CRED_B: 'real', UP_PORT: '8443' }).config;
  t.equal(set.server.port, 9090, 'a set variable wins over the default');
  t.equal(set.server.host, '0.0.0.0');
  t.equal(set.platforms.up.base_url, 'http://h:8443/v1');
  t.equal(set.groups.g.accounts[1].credential, 'real');

  const empty = parse(yaml, { TOKEN: 'adm-0123456789abcdef0123456789abcdef', UP_HOST: 'h', CRED: 'c', K: 'k', PORT: '' }).config;
  t.equal(empty.server.port, 8080, 'an empty variable takes the default, as in the shell');

  t.strictSame(problemsOf(`server: { port: "\${PORT}" }\nroutes:\n${ROUTE}`, { PORT: 'eighty' }), [
    `gateway.yaml:${pos(`server: { port: "\${PORT}" }`, '"${PORT}"')} server.port: must be integer`,
  ], 'an interpolated value is still validated by the schema');
});

t.test('an unset ${VAR} without a default is an error at FILE:LINE:COL', async (t) => {
  const yaml = `server:
  port: "\${PORT}"
admin: { token: "\${ADMIN_TOKEN}" }
platforms:
  p: { base_url: "\${BASE:-http://x}", format: openai-chat }
routes:
${ROUTE}`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:2:9 environment variable PORT is not set (use \${PORT:-default} to make it optional)`,
    `gateway.yaml:${pos(yaml, '"${ADMIN_TOKEN}"')} environment variable ADMIN_TOKEN is not set (use \${ADMIN_TOKEN:-default} to make it optional)`,
  ], 'every unset variable is reported, each at its own scalar');
});

t.test('an unknown field (typo) is reported at the key with its path', async (t) => {
  const yaml = `${SIM}groups:
  g:
    platform: sim
    accounts:
      - { id: a, credntial: x }
routes:
${ROUTE}`;
  t.strictSame(problemsOf(yaml), ['gateway.yaml:7:18 groups.g.accounts.0.credntial: unknown field "credntial"']);
  t.equal(pos(yaml, 'credntial'), '7:18', 'line 7, column 18 is where the key starts');

  const root = `sever: { port: 1 }\nroutes:\n${ROUTE}`;
  t.strictSame(problemsOf(root), ['gateway.yaml:1:1 sever: unknown field "sever"']);

  const block = `routes:
  - method: POST
    path: /x
    format: openai-chat
    pipeline: [auth, group-check, proxy]
    upstream_pth: /y
`;
  t.strictSame(problemsOf(block), ['gateway.yaml:6:5 routes.0.upstream_pth: unknown field "upstream_pth"']);
});

t.test('several problems are reported at once, each with its own line and column', async (t) => {
  const yaml = `server: { port: 70000, workrs: 2 }
${SIM}groups:
  g:
    platform: sim
    rate_multiplier: -1
    accounts:
      - { id: a, credential: c, concurency: 4 }
keys:
  - { id: k, key: s, group: g, limits: { rpm: fast } }
routes:
  - { method: FETCH, path: /x, format: openai-chat, pipeline: [auth, group-check, proxy] }
  - { path: /y, format: openai-chat, pipeline: [auth, group-check, proxy] }
`;
  const problems = problemsOf(yaml);
  t.equal(problems.length, 7);
  t.strictSame([...problems].sort(), [
    `gateway.yaml:${pos(yaml, '70000')} server.port: must be <= 65535`,
    `gateway.yaml:${pos(yaml, 'workrs')} server.workrs: unknown field "workrs"`,
    `gateway.yaml:${pos(yaml, '-1')} groups.g.rate_multiplier: must be >= 0`,
    `gateway.yaml:${pos(yaml, 'concurency')} groups.g.accounts.0.concurency: unknown field "concurency"`,
    `gateway.yaml:${pos(yaml, 'fast')} keys.0.limits.rpm: must be integer`,
    `gateway.yaml:${pos(yaml, 'FETCH')} routes.0.method: must be one of GET, POST, PUT, PATCH, DELETE`,
    `gateway.yaml:${pos(yaml, '{ path: /y')} routes.1: missing required field "method"`,
  ].sort());
  t.equal(pos(yaml, 'workrs'), '1:24');
  t.equal(pos(yaml, 'concurency'), '9:33');
});

t.test('semantic problems are all reported at once too', async (t) => {
  const yaml = `${SIM}groups:
  g: { platform: nowhere }
keys:
  - { id: k, key: s, group: missing }
routes:
  - { method: GET, path: "/a/{x", format: openai-chat, pipeline: [auth, group-check, proxy] }
  - { method: GET, path: "/b/*rest/more", format: openai-chat, pipeline: [prxy] }
  - { method: GET, path: /c, format: klingon, pipeline: relay }
`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:${pos(yaml, 'nowhere')} groups.g.platform: unknown platform "nowhere"`,
    `gateway.yaml:${pos(yaml, 'missing')} keys.0.group: unknown group "missing"`,
    `gateway.yaml:${pos(yaml, '"/a/{x"')} routes.0.path: unexpected "{" at offset 3: use {name} for one segment, {name*} for a whole segment with its colons, or *name at the end for the rest`,
    `gateway.yaml:${pos(yaml, '"/b/*rest/more"')} routes.1.path: unexpected "*" at offset 3: use {name} for one segment, {name*} for a whole segment with its colons, or *name at the end for the rest`,
    `gateway.yaml:${pos(yaml, 'prxy')} routes.1.pipeline.0: unknown stage "prxy" (known: ${Object.keys(plugins).join(', ')})`,
    `gateway.yaml:${pos(yaml, 'klingon')} routes.2.format: unknown format "klingon" (known: ${Object.keys(formats).join(', ')})`,
    `gateway.yaml:${pos(yaml, 'relay')} routes.2.pipeline: unknown pipeline "relay"`,
  ]);
});

t.test('a stage named in a pipeline is checked there', async (t) => {
  const yaml = `pipelines:
  relay: [auth, nope]
routes:
  - { method: GET, path: /x, format: openai-chat, pipeline: relay }
`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:2:17 pipelines.relay.1: unknown stage "nope" (known: ${Object.keys(plugins).join(', ')})`,
  ]);
  const { config } = parse(`pipelines:\n  relay: [auth, group-check, proxy]\nroutes:\n  - { method: GET, path: /x, format: openai-chat, pipeline: relay }\n`);
  t.strictSame(config.routes[0].stages.map((s) => [s.name, s.path]), [['auth', ['pipelines', 'relay', 0]], ['group-check', ['pipelines', 'relay', 1]], ['proxy', ['pipelines', 'relay', 2]]]);
});

t.test('a bad stage in a pipeline shared by two routes is reported once', async (t) => {
  const yaml = `pipelines:
  relay: [auth, nope]
routes:
  - { method: GET, path: /x, format: openai-chat, pipeline: relay }
  - { method: GET, path: /y, format: openai-chat, pipeline: relay }
`;
  const problems = problemsOf(yaml);
  t.equal(problems[0], `gateway.yaml:2:17 pipelines.relay.1: unknown stage "nope" (known: ${Object.keys(plugins).join(', ')})`);
  t.equal(problems.length, 1, 'one problem, not one per route');
});

t.test('stage options: validated by the plugin schema, defaults filled, problems name the stage', async (t) => {
  const { config } = parse(`routes:
  - { method: POST, path: /a, format: openai-chat, pipeline: [auth, group-check, proxy] }
  - { method: POST, path: /b, format: openai-chat, pipeline: [auth, group-check, { proxy: { header_timeout_ms: 5000 } }] }
  - { method: POST, path: /c, format: openai-chat, pipeline: [auth, group-check, { proxy: null }] }
  - { method: POST, path: /d, format: openai-chat, pipeline: [auth, group-check, { proxy: { header_timeout_ms: "250" } }] }
`);
  const proxyOptions = config.routes.map((r) => r.stages[2].options as Record<string, unknown>);
  t.equal(proxyOptions[0].header_timeout_ms, 300000, 'default filled for a bare stage name');
  t.equal(proxyOptions[1].header_timeout_ms, 5000);
  t.equal(proxyOptions[2].header_timeout_ms, 300000, 'a null options map means defaults');
  t.equal(proxyOptions[3].header_timeout_ms, 250, 'a numeric string is coerced');
  t.not(proxyOptions[0], proxyOptions[2], 'each stage gets its own options object');

  const yaml = `routes:
  - { method: GET, path: /x, format: openai-chat, pipeline: [auth, group-check, { proxy: { header_timeout_ms: soon } }] }
  - { method: GET, path: /y, format: openai-chat, pipeline: [auth, group-check, { proxy: { retries: 3 } }] }
  - { method: GET, path: /z, format: openai-chat, pipeline: [auth, group-check, { proxy: { header_timeout_ms: 0 } }] }
`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:${pos(yaml, 'soon')} routes.0.pipeline.2.proxy.header_timeout_ms: must be integer (stage proxy)`,
    `gateway.yaml:${pos(yaml, 'retries')} routes.1.pipeline.2.proxy.retries: unknown field "retries" (stage proxy)`,
    `gateway.yaml:${pos(yaml, '0 }')} routes.2.pipeline.2.proxy.header_timeout_ms: must be >= 1 (stage proxy)`,
  ]);
});

t.test('a malformed stage list is refused', async (t) => {
  const yaml = `routes:
  - { method: GET, path: /x, format: openai-chat, pipeline: [] }
  - { method: GET, path: /y, format: openai-chat, pipeline: [{ proxy: {}, auth: {} }] }
`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:${pos(yaml, '[]')} routes.0.pipeline: must be a pipeline name, or an inline list of stages`,
    `gateway.yaml:${pos(yaml, '[{')} routes.1.pipeline: must be a pipeline name, or an inline list of stages`,
  ]);
});

t.test('accounts with an empty credential are disabled with exactly one warning each', async (t) => {
  const yaml = `${SIM}groups:
  g:
    platform: sim
    accounts:
      - { id: a, credential: "\${OPENAI_API_KEY:-}" }
      - { id: b }
      - { id: c, credential: "", disabled: true }
      - { id: d, credential: live }
routes:
${ROUTE}`;
  const { config, warnings } = parse(yaml);
  t.strictSame(config.groups.g.accounts.map((a) => [a.id, a.credential, a.enabled]), [['a', '', false], ['b', '', false], ['c', '', false], ['d', 'live', true]]);
  t.strictSame(warnings, ['account "b" of group "g" has an empty credential; it is disabled'],
    'an account disabled on purpose is not warned about, nor one waiting for its variable');
  t.strictSame(config.waiting, [{ kind: 'account', id: 'a', group: 'g', variables: ['OPENAI_API_KEY'] }], 'that one waits for it');
  t.equal(waitingLine(config.waiting), 'disabled until their variables are set: account a of group g (OPENAI_API_KEY)');
  const set = parse(yaml, { OPENAI_API_KEY: 'sk-real' });
  t.strictSame([set.warnings, set.config.waiting], [['account "b" of group "g" has an empty credential; it is disabled'], []]);
  t.equal(waitingLine([]), undefined);
});

t.test('a disabled account keeps why: disabled on purpose, or no credential and the variables that left it empty', async (t) => {
  const yaml = `${SIM}groups:
  g:
    platform: sim
    accounts:
      - { id: unset, credential: "\${OPENAI_API_KEY:-}" }
      - { id: empty, credential: "\${EMPTY_KEY}" }
      - { id: either, credential: "\${FIRST_KEY:-}\${SECOND_KEY:-}" }
      - { id: blank, credential: "" }
      - { id: off, credential: "\${OFF_KEY:-}", disabled: true }
      - { id: partly, credential: "\${PREFIX:-}-\${OPENAI_API_KEY:-}" }
      - { id: live, credential: "\${LIVE_KEY}" }
routes:
${ROUTE}`;
  const { config } = parse(yaml, { EMPTY_KEY: '', LIVE_KEY: 'sk-live' });
  t.strictSame(config.groups.g.accounts.map((a) => [a.id, a.enabled, a.off]), [
    ['unset', false, { reason: 'no_credential', variables: ['OPENAI_API_KEY'] }],
    ['empty', false, { reason: 'no_credential', variables: ['EMPTY_KEY'] }],
    ['either', false, { reason: 'no_credential', variables: ['FIRST_KEY', 'SECOND_KEY'] }],
    ['blank', false, { reason: 'no_credential', variables: [] }],
    ['off', false, { reason: 'disabled', variables: [] }],
    ['partly', true, undefined],
    ['live', true, undefined],
  ]);
});

t.test('keys: empty key skipped with a warning; duplicates, both forms, missing form, pools, expiry', async (t) => {
  const empty = parse(`${SIM}groups:\n  g: { platform: sim }\nkeys:\n  - { id: blank, key: "\${ALICE_KEY:-}", group: g }\n  - { id: ok, key: s, group: g }\nroutes:\n${ROUTE}`);
  t.strictSame(empty.config.keys.map((k) => k.id), ['ok']);
  t.strictSame([empty.warnings, empty.config.waiting], [[], [{ kind: 'key', id: 'blank', variables: ['ALICE_KEY'] }]], 'a key left out until its variable is set');
  const literal = parse(`${SIM}groups:\n  g: { platform: sim }\nkeys:\n  - { id: blank, key: "", group: g }\nroutes:\n${ROUTE}`);
  t.strictSame(literal.warnings, ['key "blank" is empty; it is disabled'], 'an empty key the file itself gives is warned about');

  const hex = sha256('a');
  const yaml = `${SIM}groups:
  g: { platform: sim }
  d: { platform: sim, dedicated: true }
keys:
  - { id: both, key: a, key_sha256: "${hex}", group: g }
  - { id: both, key: b, group: g }
  - { id: same, key_sha256: "${hex.toUpperCase()}", group: g }
  - { id: w, key: c, group: g, pools: [g, d, zz], expires_at: someday }
  - { id: none, group: g }
routes:
${ROUTE}`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:${pos(yaml, '{ id: both, key: a')} keys.0: give key or key_sha256, not both`,
    `gateway.yaml:${pos(yaml, 'both', 2)} keys.1.id: duplicate key id "both"`,
    `gateway.yaml:${pos(yaml, '{ id: same')} keys.2: key "same" has the same secret as another key`,
    `gateway.yaml:${pos(yaml, 'g, d, zz')} keys.3.pools.0: "g" is not a dedicated group`,
    `gateway.yaml:${pos(yaml, 'zz')} keys.3.pools.2: "zz" is not a dedicated group`,
    `gateway.yaml:${pos(yaml, 'someday')} keys.3.expires_at: "someday" is not an ISO 8601 time`,
    `gateway.yaml:${pos(yaml, '{ id: none')} keys.4: missing key (or key_sha256)`,
  ]);

  const badHex = `${SIM}groups:\n  g: { platform: sim }\nkeys:\n  - { id: k, key_sha256: "abc", group: g }\nroutes:\n${ROUTE}`;
  t.strictSame(problemsOf(badHex), [`gateway.yaml:${pos(badHex, '"abc"')} keys.0.key_sha256: must match pattern "^[0-9a-fA-F]{64}$"`]);
});

t.test('routes: a pool must be a dedicated group', async (t) => {
  const yaml = `${SIM}groups:
  g: { platform: sim }
  d: { platform: sim, dedicated: true }
routes:
  - { method: POST, path: /a, format: openai-chat, pipeline: [auth, group-check, proxy], pool: g }
  - { method: POST, path: /b, format: openai-chat, pipeline: [auth, group-check, proxy], pool: nope }
  - { method: POST, path: /c, format: openai-chat, pipeline: [auth, group-check, proxy], pool: d }
`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:${pos(yaml, 'g }\n  - { method: POST, path: /b')} routes.0.pool: "g" is not a dedicated group`,
    `gateway.yaml:${pos(yaml, 'nope')} routes.1.pool: "nope" is not a dedicated group`,
  ]);
});

t.test('platforms: formats default from the adapters, declared formats, auth styles, base URLs', async (t) => {
  const fake = (name: string, platforms: string[]) => ({ ...formats['openai-chat'], name, platforms }) as FormatAdapter;
  const fakeFormats = { alpha: fake('alpha', ['acme']), beta: fake('beta', ['acme', 'other']), gamma: fake('gamma', []) };
  const { config } = parse(`platforms:
  sim: { simulator: true }
  acme: { base_url: https://acme.example }
  other: { base_url: https://other.example }
  pinned: { base_url: https://p.example, format: gamma }
  multi: { base_url: https://m.example, format: [alpha, gamma] }
routes:
  - { method: POST, path: /x, format: alpha, pipeline: [auth, group-check, proxy] }
`, {}, { formats: fakeFormats });
  t.strictSame(config.platforms.sim.formats, ['alpha', 'beta', 'gamma'], 'a simulator platform serves every format');
  t.strictSame(config.platforms.acme.formats, ['alpha', 'beta'], 'a vendor platform gets the formats whose adapter lists it');
  t.strictSame(config.platforms.other.formats, ['beta']);
  t.strictSame(config.platforms.pinned.formats, ['gamma'], 'a declared format replaces the default');
  t.strictSame(config.platforms.multi.formats, ['alpha', 'gamma']);

  const openaiFormats = parse(`platforms:\n  openai: { base_url: https://api.openai.com }\nroutes:\n${ROUTE}`).config.platforms.openai.formats ?? [];
  t.ok(openaiFormats.includes('openai-chat'), 'the real openai-chat adapter names the openai platform');
  t.strictSame(openaiFormats.filter((f) => !formats[f].platforms.includes('openai')), [], 'and only adapters that name openai are listed');

  const yaml = `platforms:
  acme-ai: { base_url: "https://api.acme.example" }
  x: { base_url: ftp://a, auth: basic, format: [nope] }
  y: {}
routes:
${ROUTE}`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:${pos(yaml, '{ base_url: "https')} platforms.acme-ai: no format is native to this platform; declare format`,
    `gateway.yaml:${pos(yaml, '[nope]')} platforms.x.format: unknown format "nope" (known: ${Object.keys(formats).join(', ')})`,
    `gateway.yaml:${pos(yaml, 'basic')} platforms.x.auth: unknown auth style "basic" (known: bearer, x-api-key, x-goog-api-key, api-key, none)`,
    `gateway.yaml:${pos(yaml, 'ftp://a')} platforms.x.base_url: "ftp://a" is not an http(s) URL`,
    `gateway.yaml:${pos(yaml, '{}')} platforms.y: no format is native to this platform; declare format`,
    `gateway.yaml:${pos(yaml, '{}')} platforms.y: missing base_url (or simulator: true)`,
  ]);
});

t.test('an account base_url must be an http(s) URL', async (t) => {
  const yaml = `${SIM}groups:\n  g: { platform: sim, accounts: [ { id: a, credential: c, base_url: "not a url" } ] }\nroutes:\n${ROUTE}`;
  t.strictSame(problemsOf(yaml), [`gateway.yaml:${pos(yaml, '"not a url"')} groups.g.accounts.0.base_url: "not a url" is not an http(s) URL`]);
});

t.test('YAML syntax errors are reported with a position and stop there', async (t) => {
  const dup = `server: { port: 1 }\nserver: { port: 2 }\nroutes:\n${ROUTE}`;
  const dupProblems = problemsOf(dup);
  t.equal(dupProblems.length, 1);
  t.match(dupProblems[0], /^gateway\.yaml:2:1 Map keys must be unique/);

  const unclosed = `routes:\n  - { method: GET, path: /x, format: openai-chat, pipeline: [auth, group-check, proxy]\n`;
  const problems = problemsOf(unclosed);
  t.ok(problems.length >= 1);
  for (const p of problems) t.match(p, /^gateway\.yaml:\d+:\d+ \S/, 'FILE:LINE:COL then a message');
  t.match(problems[0], /^gateway\.yaml:3:1 .*Flow map/);

  const tab = `routes:\n\t- { method: GET, path: /x, format: openai-chat, pipeline: [auth, group-check, proxy] }\n`;
  t.match(problemsOf(tab)[0], /^gateway\.yaml:2:1 /);
});

t.test('an empty file is missing routes', async (t) => {
  t.strictSame(problemsOf(''), ['gateway.yaml:1:1 (root): missing required field "routes"']);
  t.strictSame(problemsOf('# only a comment\n'), ['gateway.yaml:1:1 (root): missing required field "routes"']);
});

t.test('ConfigError lists every problem in its message', async (t) => {
  const err = new ConfigError(['a:1:1 x: one', 'a:2:2 y: two']);
  t.equal(err.name, 'ConfigError');
  t.ok(err instanceof Error);
  t.strictSame(err.problems, ['a:1:1 x: one', 'a:2:2 y: two']);
  t.equal(err.message, 'invalid configuration:\n  a:1:1 x: one\n  a:2:2 y: two');
});

t.test('loadConfig reads the file; a missing file is a ConfigError naming it', async (t) => {
  const file = writeConfig(demoConfig());
  const { config, warnings } = loadConfig(file, deps());
  t.equal(config.file, file);
  t.strictSame(warnings, []);
  t.strictSame(config.keys.map((k) => k.id), ['alice', 'bob', 'off', 'old']);
  t.equal(config.keys[3].expires_at, Date.UTC(2020, 0, 1), 'an unquoted YAML timestamp is read as an ISO time');
  t.equal(config.keys[2].disabled, true);
  t.equal(config.server.body_limit, 65536);
  t.strictSame(config.routes.map((r) => `${r.method} ${r.path}`), ['POST /v1/chat/completions', 'POST /chat/completions', 'GET /v1/models', 'POST /pool/v1/chat/completions']);

  const missing = join(file, '..', 'absent.yaml');
  try {
    loadConfig(missing, deps());
    t.fail('expected a ConfigError');
  } catch (err) {
    t.ok(err instanceof ConfigError);
    t.equal((err as ConfigError).problems.length, 1);
    t.match((err as ConfigError).problems[0], new RegExp(`^${missing.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: ENOENT`));
  }

  const badYaml = `routes:\n  - { method: GET, path: /x, format: openai-chat, pipeline: [auth, group-check, proxy], typo: 1 }\n`;
  t.equal(pos(badYaml, 'typo'), '2:89');
  const bad = writeConfig(badYaml, 'other-name.yaml');
  let named: unknown;
  try { loadConfig(bad, deps()); } catch (err) { named = err; }
  t.strictSame((named as ConfigError).problems, ['other-name.yaml:2:89 routes.0.typo: unknown field "typo"'], 'problems carry the file\'s own name');
});

t.test('CLI: node app/main.ts --check', async (t) => {
  const main = join(import.meta.dirname, '..', '..', 'app', 'main.ts');
  const check = (file: string, env: NodeJS.ProcessEnv = {}) => spawnSync(process.execPath, [main, '--check', '--config', file], {
    encoding: 'utf8', env: { PATH: process.env.PATH, ...env }, timeout: 30_000,
  });

  const good = writeConfig(demoConfig());
  const ok = check(good);
  t.equal(ok.status, 0, ok.stderr);
  t.equal(ok.stdout, '', 'a good file: no output at all');
  t.equal(ok.stderr, '');

  const warn = writeConfig(demoConfig().replace('credential: upstream-credential-1', 'credential: "${UPSTREAM_CRED:-}"'));
  t.equal(check(warn).stderr, '', 'an account waiting for its variable is no warning');
  const literal = writeConfig(demoConfig().replace('credential: upstream-credential-1', 'credential: ""'));
  const warned = check(literal);
  t.equal(warned.status, 0, 'warnings do not fail the check');
  t.equal(warned.stderr, 'warning: account "sim-1" of group "main" has an empty credential; it is disabled\n');
  const required = writeConfig(demoConfig().replace('credential: upstream-credential-1', 'credential: "${UPSTREAM_CRED}"'));
  t.not(check(required).status, 0, 'a required variable unset fails the check');
  t.strictSame([check(required, { UPSTREAM_CRED: 'x' }).status, check(required, { UPSTREAM_CRED: 'x' }).stderr], [0, ''], 'the check reads the process environment');

  const badYaml = demoConfig()
    .replace('{ id: sim-1, credential: upstream-credential-1 }', '{ id: sim-1, credntial: upstream-credential-1 }')
    .replace('port: 0,', 'port: 99999,');
  const bad = writeConfig(badYaml);
  const failed = check(bad);
  t.not(failed.status, 0);
  t.equal(failed.stdout, '');
  t.strictSame(failed.stderr.trim().split('\n').sort(), [
    `gateway.yaml:${pos(badYaml, 'credntial')} groups.main.accounts.0.credntial: unknown field "credntial"`,
    `gateway.yaml:${pos(badYaml, '99999')} server.port: must be <= 65535`,
  ].sort());

  const missing = check(join(good, '..', 'nope.yaml'));
  t.equal(missing.status, 1);
  t.match(missing.stderr, /nope\.yaml: ENOENT/);
});

t.test('admin.token: 32 characters at least, no spaces, no key\'s secret; empty is allowed (the admin API is off)', async (t) => {
  const long = 'k'.repeat(40);
  const yaml = (token: string) => `${SIM}groups:
  g: { platform: sim, models: [m], accounts: [{ id: a, credential: c }] }
admin: { token: "\${TOKEN}" }
keys:
  - { id: plain, key: ${long}, group: g }
  - { id: hashed, key_sha256: ${sha256(`${long}-2`)}, group: g }
routes:
${ROUTE}`;
  const at = `gateway.yaml:${pos(yaml(''), '"${TOKEN}"')} admin.token:`;
  const how = 'generate one with `openssl rand -hex 32` (e.g. GATEWAY_ADMIN_TOKEN=$(openssl rand -hex 32)), or leave it empty to turn the admin API off';
  t.strictSame(problemsOf(yaml(''), { TOKEN: 'x'.repeat(31) }), [`${at} must be at least 32 characters (it has 31): ${how}`]);
  t.strictSame(problemsOf(yaml(''), { TOKEN: `${'x'.repeat(16)} ${'y'.repeat(16)}` }), [`${at} must not contain spaces (it is sent as Authorization: Bearer <token>): ${how}`]);
  t.strictSame(problemsOf(yaml(''), { TOKEN: long }), [`${at} is the secret of key "plain": the admin token must be a secret of its own; ${how}`]);
  t.strictSame(problemsOf(yaml(''), { TOKEN: `${long}-2` }), [`${at} is the secret of key "hashed": the admin token must be a secret of its own; ${how}`]);
  t.equal(parse(yaml(''), { TOKEN: 'x'.repeat(32) }).config.admin.token, 'x'.repeat(32), '32 characters are enough');
  t.equal(parse(yaml(''), { TOKEN: '' }).config.admin.token, '', 'empty: accepted');
});

t.test('stage contracts: a chain whose stage lacks what it requires is refused at load, pointing at the stage', async (t) => {
  const yaml = `${SIM}groups:
  g: { platform: sim, models: [m], accounts: [{ id: a, credential: c }] }
admin: { token: t-0123456789abcdef0123456789abcdef }
pipelines:
  misordered: [group-check, auth, model-allowlist, rate-limit, metering, proxy]
  unguarded: [{ admin-keys: { action: list } }]
routes:
  - { method: POST, path: /a, format: openai-chat, pipeline: misordered }
  - { method: GET, path: /b, format: gateway, pipeline: unguarded }
  - { method: POST, path: /c, format: openai-chat, pipeline: [auth, model-allowlist, proxy] }
`;
  const problems = problemsOf(yaml);
  t.same(problems, [
    `gateway.yaml:${pos(yaml, 'group-check, auth')} pipelines.misordered.0: stage "group-check" requires "key", which no earlier stage of this chain provides (put auth before it)`,
    `gateway.yaml:${pos(yaml, '{ admin-keys')} pipelines.unguarded.0: stage "admin-keys" requires "admin", which no earlier stage of this chain provides (put admin-auth before it)`,
    `gateway.yaml:${pos(yaml, 'model-allowlist, proxy] }')} routes.2.pipeline.1: stage "model-allowlist" requires "group", which no earlier stage of this chain provides (put group-check before it)`,
    `gateway.yaml:${pos(yaml, 'proxy] }')} routes.2.pipeline.2: stage "proxy" requires "group", which no earlier stage of this chain provides (put group-check before it)`,
  ]);
  t.ok(parse(yaml.replace('[group-check, auth,', '[auth, group-check,').replace('[{ admin-keys', '[admin-auth, { admin-keys').replace('[auth, model-allowlist', '[auth, group-check, model-allowlist')), 'the same chains in order are accepted');
});

t.test('--check refuses a mis-ordered pipeline with FILE:LINE:COL and exit 1', async (t) => {
  const file = writeConfig(`${SIM}groups:\n  g: { platform: sim, models: [m], accounts: [{ id: a, credential: c }] }\nroutes:\n  - { method: POST, path: /a, format: openai-chat, pipeline: [rate-limit, auth] }\n`);
  const run = spawnSync(process.execPath, [join(import.meta.dirname, '../../app/main.ts'), '--check', '--config', file], { encoding: 'utf8' });
  t.equal(run.status, 1);
  t.match(run.stderr, /gateway\.yaml:6:\d+ routes\.0\.pipeline\.0: stage "rate-limit" requires "key", which no earlier stage of this chain provides \(put auth before it\)/);
});

t.test('translation settings of a group: client_formats must name formats, upstream_format one of the platform\'s with a codec', async (t) => {
  const yaml = `platforms:
  imgs: { base_url: "https://img.example", format: [openai-images] }
  anth: { base_url: "https://an.example", format: [anthropic-messages] }
groups:
  a: { platform: anth, client_formats: [openai-chat, klingon], upstream_format: gemini }
  b: { platform: imgs, upstream_format: openai-images }
  c: { platform: anth, upstream_format: anthropic-messages, default_max_tokens: 1000 }
routes:
${ROUTE}`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:${pos(yaml, 'klingon')} groups.a.client_formats.1: unknown format "klingon" (known: ${Object.keys(formats).join(', ')})`,
    `gateway.yaml:${pos(yaml, 'gemini }')} groups.a.upstream_format: "gemini" is not a format of platform "anth" that can be translated to (anthropic-messages)`,
    `gateway.yaml:${pos(yaml, 'openai-images }')} groups.b.upstream_format: "openai-images" is not a format of platform "imgs" that can be translated to (none)`,
  ]);
});
