// The defaults file under an operator's gateway.yaml (core/config-merge.ts): routes and pipelines left out come whole
// from the defaults, a plain list or map replaces them, { extends: default, add, remove } changes them; every problem
// points at the file and line it is in, the defaults file's own included.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { defaults, formats, plugins, upstreamAuth } from '../../app/registry.ts';
import { parseConfig } from '../../core/config.ts';
import { pos, refused } from '../helpers/config-text.ts';
import { writeConfig } from '../helpers/gateway.ts';

const FILE = '/etc/gw/gateway.yaml';
const OPERATOR = `platforms:
  sim: { simulator: true }
groups:
  g: { platform: sim, models: ["*"], accounts: [{ id: a, credential: c }] }
keys:
  - { id: k, key: sk-k, group: g }
pricing:
  gpt-4o-mini: { input: 1, output: 2 }
`;

/** A small defaults file of our own, so positions in it are known. */
const SMALL = `pipelines:
  relay: [auth, group-check, model-allowlist, proxy]
  models: [auth, group-check, list-models]
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
  - { method: GET,  path: /v1/models, format: openai-chat, pipeline: models }
  - { method: GET,  path: "/admin/keys/{id}", format: gateway, pipeline: [admin-auth, { admin-keys: { action: get } }] }
  - { method: DELETE, path: "/admin/keys/{id}", format: gateway, pipeline: [admin-auth, { admin-keys: { action: delete } }] }
`;
const small = writeConfig(SMALL, 'defaults.yaml');

/** Loaded over `defaultsFile` (null: none). */
const load = (yaml: string, defaultsFile: string | null = small) => parseConfig(yaml, FILE, { plugins, formats, upstreamAuth, env: {}, defaults: defaultsFile ?? undefined });
const problemsOf = (yaml: string, defaultsFile?: string | null) => refused(() => load(yaml, defaultsFile));
const routes = (yaml: string) => load(yaml).config.routes.map((r) => `${r.method} ${r.path}`);

t.test('a file without routes or pipelines gets the shipped defaults whole', async (t) => {
  const shipped = parseYaml(readFileSync(defaults, 'utf8')) as { routes: { method: string; path: string }[]; pipelines: Record<string, unknown> };
  const { config, layout } = load(OPERATOR, defaults);
  t.strictSame(config.routes.map((r) => `${r.method} ${r.path}`), shipped.routes.map((r) => `${r.method} ${r.path}`), 'every default route, in order');
  t.ok(config.routes.length > 50, `${config.routes.length} routes`);
  t.equal(layout.sections.get('routes'), 'defaults');
  t.equal(layout.sections.get('pipelines'), 'defaults');
  t.strictSame([...layout.pipelines.keys()], Object.keys(shipped.pipelines));
  t.equal(config.routes.find((r) => r.path === '/v1/chat/completions')?.stages.map((s) => s.name).join(','), 'auth,group-check,model-allowlist,rate-limit,metering,proxy');
});

t.test('a plain list replaces the default routes, a plain map the default pipelines', async (t) => {
  const own = `${OPERATOR}routes:\n  - { method: POST, path: /mine, format: openai-chat, pipeline: relay }\n`;
  t.strictSame(routes(own), ['POST /mine'], 'only the file\'s routes; they may name the default pipelines');
  const both = `${OPERATOR}pipelines:\n  mine: [auth, group-check, proxy]\nroutes:\n  - { method: POST, path: /mine, format: openai-chat, pipeline: mine }\n`;
  const { config, layout } = load(both);
  t.strictSame(config.routes.map((r) => r.stages.map((s) => s.name)), [['auth', 'group-check', 'proxy']]);
  t.strictSame([...layout.pipelines.keys()], ['mine'], 'the default pipelines are gone');
});

t.test('extends: default: add appends, or takes the place of a default route of the same method and path', async (t) => {
  const yaml = `${OPERATOR}routes:
  extends: default
  add:
    - { method: POST, path: /extra, format: openai-chat, pipeline: relay }
    - { method: GET, path: /v1/models, format: openai-chat, pipeline: [auth, list-models] }
`;
  const { config, layout } = load(yaml);
  t.strictSame(config.routes.map((r) => `${r.method} ${r.path}`), ['POST /v1/chat/completions', 'GET /v1/models', 'GET /admin/keys/{id}', 'DELETE /admin/keys/{id}', 'POST /extra']);
  t.strictSame(config.routes[1].stages.map((s) => s.name), ['auth', 'list-models'], 'the file\'s /v1/models, in the default\'s place');
  t.strictSame(layout.routes[1].path, ['routes', 'add', 1]);
  t.strictSame(layout.routes[1].replaces?.path, ['routes', 1], 'and it says which default it replaced');
  t.equal(layout.sections.get('routes'), 'extended');
  t.equal(layout.sections.get('pipelines'), 'defaults');
});

t.test('extends: default: remove takes out a path (every method) or one "METHOD /path"', async (t) => {
  const remove = (entries: string) => routes(`${OPERATOR}routes: { extends: default, remove: [${entries}] }\n`);
  t.strictSame(remove('"/admin/keys/{id}"'), ['POST /v1/chat/completions', 'GET /v1/models']);
  t.strictSame(remove('"DELETE /admin/keys/{id}"'), ['POST /v1/chat/completions', 'GET /v1/models', 'GET /admin/keys/{id}']);
  t.strictSame(remove('/v1/models, /v1/chat/completions'), ['GET /admin/keys/{id}', 'DELETE /admin/keys/{id}']);
  t.strictSame(routes(`${OPERATOR}routes: { extends: default }\n`), routes(OPERATOR), 'extends alone: the defaults');
});

t.test('a removed route or pipeline the defaults do not have is an error at its line in gateway.yaml', async (t) => {
  const yaml = `${OPERATOR}pipelines:
  extends: default
  remove: [relay, nope]
routes:
  extends: default
  remove: [/v1/models, /v1/nothing, "PATCH /admin/keys/{id}"]
`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:${pos(yaml, '/v1/nothing')} routes.remove.1: "/v1/nothing" is not a default route: name the path of one (every method) or "METHOD /path"`,
    `gateway.yaml:${pos(yaml, '"PATCH')} routes.remove.2: "PATCH /admin/keys/{id}" is not a default route: name the path of one (every method) or "METHOD /path"`,
    `gateway.yaml:${pos(yaml, 'nope')} pipelines.remove.1: "nope" is not a default pipeline (relay, models)`,
  ]);
});

t.test('pipelines extends: add replaces a default pipeline or adds one; the default routes use the replacement', async (t) => {
  const yaml = `${OPERATOR}pipelines:
  extends: default
  add:
    relay: [auth, group-check, proxy]
    extra: [auth, usage]
routes:
  extends: default
  add:
    - { method: GET, path: /mine, format: openai-chat, pipeline: extra }
`;
  const { config, layout } = load(yaml);
  t.strictSame(config.routes[0].stages.map((s) => s.name), ['auth', 'group-check', 'proxy'], 'POST /v1/chat/completions (a default route) runs the file\'s relay');
  t.strictSame(config.routes.at(-1)!.stages.map((s) => s.name), ['auth', 'usage']);
  t.strictSame([...layout.pipelines.keys()], ['relay', 'models', 'extra']);
  t.strictSame(layout.pipelines.get('relay')?.replaces?.path, ['pipelines', 'relay']);
});

t.test('problems in routes and pipelines point at the file they were written in', async (t) => {
  const broken = writeConfig(`${SMALL.replace('list-models]', 'list-modelz]')}  - { method: GET, path: /x, format: klingon, pipeline: relay }\n`, 'defaults.yaml');
  const defaultsText = readFileSync(broken, 'utf8');
  const yaml = `${OPERATOR}routes:
  extends: default
  add:
    - { method: GET, path: /y, format: openai-chat, pipeline: nowhere, typo: 1 }
`;
  t.strictSame(problemsOf(yaml, broken).sort(), [
    `defaults.yaml:${pos(defaultsText, 'list-modelz')} pipelines.models.2: unknown stage "list-modelz" (known: ${Object.keys(plugins).join(', ')})`,
    `defaults.yaml:${pos(defaultsText, 'klingon')} routes.4.format: unknown format "klingon" (known: ${Object.keys(formats).join(', ')})`,
    `gateway.yaml:${pos(yaml, 'nowhere')} routes.add.0.pipeline: unknown pipeline "nowhere"`,
    `gateway.yaml:${pos(yaml, 'typo')} routes.add.0.typo: unknown field "typo"`,
  ].sort());
});

t.test('the defaults file holds routes and pipelines only; its syntax errors name it', async (t) => {
  const extra = writeConfig(`server: { port: 1 }\n${SMALL}`, 'defaults.yaml');
  t.strictSame(problemsOf(OPERATOR, extra), ['defaults.yaml:1:1 server: unknown field "server": a defaults file holds routes and pipelines only']);
  const bad = writeConfig(`${SMALL}  - { method: GET\n`, 'defaults.yaml');
  const problems = problemsOf(OPERATOR, bad);
  t.ok(problems.length >= 1);
  for (const p of problems) t.match(p, /^defaults\.yaml:\d+:\d+ /, p);
  t.match(refused(() => load(OPERATOR, '/nonexistent/defaults.yaml'))[0], /^\/nonexistent\/defaults\.yaml: ENOENT/);
});

t.test('a plain map of pipelines under the default routes: one problem, at the map, saying how to keep them', async (t) => {
  const yaml = `${OPERATOR}pipelines:\n  relay: [auth, group-check, proxy]\n`;
  t.strictSame(problemsOf(yaml), [
    `gateway.yaml:${pos(yaml, 'pipelines:')} pipelines: replaces every default pipeline, and the default routes use "models", which it lacks: extend the defaults instead (pipelines: { extends: default, add: { ... } }) or declare them`,
  ]);
});

t.test('the extend form: extends names the defaults, only add and remove beside it', async (t) => {
  const yaml = `${OPERATOR}routes: { extends: mine, add: [], drop: [/x] }\n`;
  t.strictSame(problemsOf(yaml).sort(), [
    `gateway.yaml:${pos(yaml, 'drop')} routes.drop: unknown field "drop"`,
    `gateway.yaml:${pos(yaml, 'mine')} routes.extends: must be "default"`,
  ].sort());
  const noDefaults = `${OPERATOR}routes: { extends: default }\n`;
  t.strictSame(problemsOf(noDefaults, null), [`gateway.yaml:${pos(noDefaults, 'default }')} routes.extends: there is no defaults file to extend`]);
  t.strictSame(problemsOf(OPERATOR, null), ['gateway.yaml:1:1 (root): missing required field "routes"'], 'without a defaults file, routes are required');
});

t.test('the configuration reference\'s example of extends: default loads as it says', async (t) => {
  const reference = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  t.ok(reference.includes('\n## Routes and pipelines\n'), 'the section is there');
  const section = reference.slice(reference.indexOf('\n## Routes and pipelines\n'));
  const example = /```yaml\n([\s\S]*?)```/.exec(section)![1];
  const vip = '  vip-pool: { platform: sim, dedicated: true, models: ["*"], accounts: [{ id: v, credential: c }] }\n';
  const { config, layout } = load(`${OPERATOR.replace('keys:\n', `${vip}keys:\n`)}${example}`, defaults);
  const all = config.routes.map((r) => `${r.method} ${r.path}`);
  t.notOk(all.includes('GET /docs'), '/docs removed');
  t.notOk(all.includes('POST /admin/keys'), 'POST /admin/keys removed');
  t.ok(all.includes('GET /admin/keys'), 'GET /admin/keys kept');
  t.strictSame(all.slice(-3), ['POST /openai/v1/chat/completions', 'POST /vip/v1/chat/completions', 'POST /v1/files/*rest'], 'added after the defaults');
  t.equal(all.indexOf('POST /v1/chat/completions'), 0, 'the chat route replaced in its place');
  t.strictSame(layout.routes[0].path, ['routes', 'add', 2]);
  t.equal((config.routes[0].stages.at(-1)?.options as { header_timeout_ms?: number }).header_timeout_ms, 60000, 'with its own proxy options');
});

t.test('the configuration reference\'s production gateway.yaml: only its own sections, every default route, credentials from files', async (t) => {
  const reference = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  t.ok(reference.includes('\n## A production gateway.yaml\n'), 'the section is there');
  const example = /```yaml\n([\s\S]*?)```/.exec(reference.slice(reference.indexOf('\n## A production gateway.yaml\n')))![1];
  const dir = dirname(writeConfig('', 'secret-holder'));
  for (const name of ['openai_api_key_2', 'anthropic_api_key']) writeFileSync(join(dir, name), `sk-${name}\n`);
  const env = { GATEWAY_ADMIN_TOKEN: 'a'.repeat(40), REDIS_URL: 'redis://127.0.0.1:1', OPENAI_API_KEY: 'sk-env', CI_GATEWAY_KEY: 'sk-ci' };
  const { config, layout } = parseConfig(example.replaceAll('/run/secrets/', `${dir}/`), FILE, { plugins, formats, upstreamAuth, env, defaults });
  t.strictSame(Object.keys(parseYaml(example)).sort(), ['admin', 'groups', 'keys', 'platforms', 'pricing', 'store']);
  t.equal(layout.sections.get('routes'), 'defaults');
  t.equal(config.routes.length, (parseYaml(readFileSync(defaults, 'utf8')) as { routes: unknown[] }).routes.length, 'every default route');
  t.strictSame(config.groups.team.accounts.map((a) => a.credential), ['sk-env', 'sk-openai_api_key_2']);
  t.equal(config.groups.claude.accounts[0].credential, 'sk-anthropic_api_key');
});
