// Fallback across groups (groups.NAME.fallback), with the official SDKs: a request no account of its group can take
// (failing with 5xx, none enabled) moves to the next fallback group the key may use, translated when that group's
// platform speaks another format; the record names the serving group, the groups it fell back from and every attempt;
// the serving group's model_map and rate_multiplier apply. A dedicated fallback group serves only keys that list it in
// pools; a model no fallback group serves does not move.
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { loadConfig, ConfigError } from '../../core/config.ts';
import { formats, plugins, upstreamAuth } from '../../app/registry.ts';
import { metricValue, metricsText } from '../helpers/http.ts';
import { writeConfig } from '../helpers/gateway.ts';
import { credentialOf, poolGateway, records } from './helpers.ts';

const config = `
server: { host: 127.0.0.1, port: 0, body_limit: 1mb }
admin: { token: admin-secret-token-0123456789abcdef }
platforms:
  sim: { simulator: true }
  sim-anthropic: { simulator: true, format: [anthropic-messages] }
groups:
  primary:
    platform: sim
    models: ["gpt-*", "only-primary"]
    fallback: [reserved, backup]
    accounts:
      - { id: p1, credential: "sim-fault:status=500" }
  limited:
    platform: sim
    models: ["gpt-*"]
    fallback: [backup]
    accounts:
      - { id: l1, credential: "sim-fault:status=429;retry-after-ms=60000" }
  reserved:
    platform: sim
    dedicated: true
    models: ["gpt-*"]
    accounts:
      - { id: r1, credential: reserved-credential }
  empty:
    platform: sim
    models: ["gpt-*"]
    fallback: [backup]
    accounts:
      - { id: e1, credential: "", disabled: true }
  backup:
    platform: sim-anthropic
    models: ["gpt-*"]
    model_map: { "gpt-*": claude-sonnet-4-5 }
    rate_multiplier: 2
    accounts:
      - { id: b1, credential: backup-credential }
keys:
  - { id: plain, key: sk-fallback-0001, group: primary }
  - { id: with-reserved, key: sk-fallback-0002, group: primary, pools: [reserved] }
  - { id: empty-key, key: sk-fallback-0003, group: empty }
  - { id: limited-key, key: sk-fallback-0004, group: limited }
pricing:
  "gpt-*": { input: 1, output: 1 }
  "claude-*": { input: 3, output: 15 }
pipelines:
  relay: [auth, group-check, model-allowlist, rate-limit, metering, { proxy: { error_ms: 0 } }]
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
  - { method: POST, path: /v1/messages, format: anthropic-messages, pipeline: relay }
  - { method: GET,  path: /admin/usage, format: gateway, pipeline: [admin-auth, admin-usage] }
`;

const { gateway, logs } = await poolGateway(t, config);
const primary = gateway.simulators.sim;
const backup = gateway.simulators['sim-anthropic'];
const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
const record = async (id: string) => (await records(gateway)).find((r) => r.request_id === id);

t.test('a chat request whose group fails moves to the backup group (the dedicated one is not its key\'s), translated to Anthropic Messages', async (t) => {
  const before = { primary: primary.requests.length, backup: backup.requests.length };
  const { data, response } = await openai('sk-fallback-0001').chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello over there' }] }).withResponse();
  t.equal(data.choices[0].message.content, 'Echo: hello over there');
  t.equal(data.model, 'gpt-4o-mini', 'the client sees the model it asked for');
  t.equal(primary.requests.length - before.primary, 1, 'the primary account was tried once');
  const sent = backup.requests.slice(before.backup);
  t.equal(sent.length, 1);
  t.equal(sent[0].path, '/v1/messages');
  t.equal((sent[0].json as any).model, 'claude-sonnet-4-5', "the backup group's model_map");
  t.equal(credentialOf(sent[0]), 'backup-credential');
  const r = await record(response.headers.get('x-request-id')!);
  t.equal(r?.group, 'backup');
  t.equal(r?.platform, 'sim-anthropic');
  t.equal(r?.account, 'b1');
  t.equal(r?.upstream_model, 'claude-sonnet-4-5');
  t.strictSame(r?.fell_back_from, ['primary']);
  t.strictSame(r?.attempts, [
    { account: 'p1', status: 500, reason: 'upstream_error', group: 'primary' },
    { account: 'b1', status: 200, reason: 'ok' },
  ]);
  // Priced as claude-* (the upstream model) × the backup group's rate_multiplier 2.
  const expected = 2 * ((r!.input_tokens * 3 + r!.output_tokens * 15) / 1e6);
  t.ok(Math.abs(r!.cost - expected) < 1e-12, `cost ${r!.cost} = ${expected}`);
  const line = logs.find((l) => l.msg === 'request moved to a fallback group' && l.from === 'primary');
  t.match(line, { to: 'backup', code: 'UPSTREAM_FAILED' });
});

t.test('a stream moves too, and an Anthropic client reaches the backup natively', async (t) => {
  const stream = await openai('sk-fallback-0001').chat.completions
    .create({ model: 'gpt-5', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'stream it' }] });
  let text = '';
  let usage: unknown;
  for await (const chunk of stream) { text += chunk.choices[0]?.delta?.content ?? ''; usage ??= chunk.usage ?? undefined; }
  t.equal(text, 'Echo: stream it');
  t.ok(usage, 'the usage chunk arrived');

  const anthropic = new Anthropic({ apiKey: 'sk-fallback-0001', baseURL: gateway.url, maxRetries: 0 });
  const before = backup.requests.length;
  const msg = await anthropic.messages.create({ model: 'gpt-5', max_tokens: 64, messages: [{ role: 'user', content: 'native there' }] });
  t.equal(msg.content[0].type === 'text' && msg.content[0].text, 'Echo: native there');
  t.equal((backup.requests[before].json as any).model, 'claude-sonnet-4-5');
});

t.test('a group with no enabled account falls back; the record says so with no attempt of its own', async (t) => {
  const { data, response } = await openai('sk-fallback-0003').chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'nobody home' }] }).withResponse();
  t.equal(data.choices[0].message.content, 'Echo: nobody home');
  const r = await record(response.headers.get('x-request-id')!);
  t.equal(r?.group, 'backup');
  t.strictSame(r?.fell_back_from, ['empty']);
  t.equal(r?.attempts, undefined, 'the one attempt succeeded');
});

t.test('rate limited upstream (429), then cooling down: both move, and the cooling account is not asked again', async (t) => {
  const limited = () => primary.requests.filter((r) => credentialOf(r).includes('status=429')).length;
  for (const [i, attempts] of [[1, [{ account: 'l1', status: 429, reason: 'rate_limited', group: 'limited' }, { account: 'b1', status: 200, reason: 'ok' }]], [2, undefined]] as const) {
    const { data, response } = await openai('sk-fallback-0004').chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `limited ${i}` }] }).withResponse();
    t.equal(data.choices[0].message.content, `Echo: limited ${i}`);
    const r = await record(response.headers.get('x-request-id')!);
    t.equal(r?.group, 'backup');
    t.strictSame(r?.fell_back_from, ['limited']);
    t.strictSame(r?.attempts, attempts);
  }
  t.equal(limited(), 1, 'the cooling account got only the first request');
});

t.test('a key that lists the dedicated group in pools moves there first', async (t) => {
  const before = backup.requests.length;
  const { data, response } = await openai('sk-fallback-0002').chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'reserved for me' }] }).withResponse();
  t.equal(data.choices[0].message.content, 'Echo: reserved for me');
  const r = await record(response.headers.get('x-request-id')!);
  t.equal(r?.group, 'reserved');
  t.equal(r?.account, 'r1');
  t.equal(r?.upstream_model, 'gpt-4o-mini', 'no model_map in the reserved group');
  t.equal(backup.requests.length, before);
});

t.test('no move for a model no fallback group serves: the group\'s own error', async (t) => {
  const before = backup.requests.length;
  const err = await openai('sk-fallback-0001').chat.completions
    .create({ model: 'only-primary', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
  t.equal(err.status, 502);
  t.equal(err.code, 'UPSTREAM_FAILED');
  t.equal(backup.requests.length, before, 'nothing reached the backup group');
});

t.test('the fallback counter', async (t) => {
  const text = await metricsText(gateway.url);
  t.equal(metricValue(text, 'gateway_group_fallbacks_total{from="primary",to="backup"}'), 3);
  t.equal(metricValue(text, 'gateway_group_fallbacks_total{from="primary",to="reserved"}'), 1);
  t.equal(metricValue(text, 'gateway_group_fallbacks_total{from="empty",to="backup"}'), 1);
  t.equal(metricValue(text, 'gateway_group_fallbacks_total{from="limited",to="backup"}'), 2);
});

t.test('a fallback to an unknown group or to the group itself is refused at load', async (t) => {
  const bad = config.replace('fallback: [reserved, backup]', 'fallback: [nowhere, primary]');
  const err = (() => { try { loadConfig(writeConfig(bad), { plugins, formats, upstreamAuth, env: {} }); } catch (e) { return e; } })();
  t.ok(err instanceof ConfigError);
  t.match(String((err as Error).message), /groups\.primary\.fallback\.0: unknown group "nowhere"/);
  t.match(String((err as Error).message), /groups\.primary\.fallback\.1: a group cannot fall back to itself/);
});
