// gateway.yaml's notifications, auth_throttle and server.trusted_proxies: their defaults (from the schema), and each
// problem refused with FILE:LINE:COL, never quoting a secret.
import t from 'tap';
import { ConfigError, parseConfig } from '../../core/config.ts';
import { formats, plugins, upstreamAuth } from '../../app/registry.ts';

const FILE = '/etc/gw/gateway.yaml';
const BASE = `
platforms:
  sim: { simulator: true }
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: [auth, group-check, proxy] }
`;
const parse = (yaml: string, env: NodeJS.ProcessEnv = {}) => parseConfig(BASE + yaml, FILE, { plugins, formats, upstreamAuth, env });
function problems(yaml: string, env: NodeJS.ProcessEnv = {}): string[] {
  try { parse(yaml, env); } catch (err) { if (err instanceof ConfigError) return err.problems; throw err; }
  throw new Error('the config was accepted');
}

t.test('defaults: no webhook, the throttles on, no trusted proxy', async (t) => {
  const { config } = parse('');
  t.same(config.notifications, { webhooks: [], timeout_ms: 5000, retries: 5, retry_ms: 1000, queue_limit: 1000, quota_percents: [80, 100], history: 200 });
  t.same(config.auth_throttle, {
    keys: { slow_after: 10, delay_ms: 250, max_delay_ms: 2000, block_after: 30, window_ms: 600_000, block_ms: 900_000 },
    admin: { slow_after: 3, delay_ms: 250, max_delay_ms: 2000, block_after: 10, window_ms: 600_000, block_ms: 900_000 },
    max_addresses: 10_000,
  });
  t.same(config.server.trusted_proxies, []);
});

t.test('a webhook: named by its host unless named, every event unless listed, its secret from the environment', async (t) => {
  const { config, warnings } = parse(`
notifications:
  webhooks:
    - { url: "https://hooks.example.com/T0/B0/abc?token=x", secret: "\${HOOK_SECRET}" }
    - { name: pager, url: "http://127.0.0.1:9/hook", secret: pager-secret-0123456789, events: [store.down, store.up] }
  retries: 2
`, { HOOK_SECRET: 'from-the-environment-0123' });
  t.same(config.notifications.webhooks, [
    { name: 'hooks.example.com', url: 'https://hooks.example.com/T0/B0/abc?token=x', secret: 'from-the-environment-0123', events: ['key.quota', 'account.attention', 'group.exhausted', 'store.down', 'store.up'] },
    { name: 'pager', url: 'http://127.0.0.1:9/hook', secret: 'pager-secret-0123456789', events: ['store.down', 'store.up'] },
  ]);
  t.equal(config.notifications.retries, 2);
  t.same(warnings, [], 'plain http to a loopback receiver is no warning');
  t.match(parse('notifications: { webhooks: [{ url: "http://hooks.example.com/x", secret: 0123456789abcdef0 }] }').warnings,
    ['webhook "hooks.example.com" is sent over plain http: its bodies can be read on the way (use https)']);
});

t.test('problems: a short or missing secret, a URL that is not http(s), two hooks of one name, an unknown event, a bad proxy range', async (t) => {
  const found = problems(`
notifications:
  webhooks:
    - { url: "https://a.example.com/1", secret: short-secret }
    - { url: "ftp://a.example.com/2", secret: 0123456789abcdef0 }
    - { url: "https://a.example.com/3", secret: 0123456789abcdef0 }
    - { name: "bad name", url: "https://b.example.com", secret: 0123456789abcdef0, events: [key.quota, key.gone] }
    - { url: "https://c.example.com" }
server: { trusted_proxies: [10.0.0.0/8, 10.0.0.0/33, proxy.local] }
`);
  t.match(found, [
    /gateway\.yaml:\d+:\d+ notifications\.webhooks\.3\.name: must match pattern/,
    /gateway\.yaml:\d+:\d+ notifications\.webhooks\.3\.events\.1: must be one of key\.quota, account\.attention, group\.exhausted, store\.down, store\.up/,
    /gateway\.yaml:\d+:\d+ notifications\.webhooks\.4: missing required field "secret"/,
  ]);
  for (const text of [
    'notifications.webhooks.0.secret: must be at least 16 characters (it has 12)',
    'notifications.webhooks.1.url: is not an http(s) URL',
    'notifications.webhooks.2: a second webhook named "a.example.com": give each its own name',
    'server.trusted_proxies.1: "10.0.0.0/33" is not an IP address or CIDR range',
    'server.trusted_proxies.2: "proxy.local" is not an IP address or CIDR range',
  ]) t.ok(found.some((p) => p.includes(text)), text);
  t.notOk(found.some((p) => p.includes('short-secret')), 'a secret is never quoted');
  t.match(problems('notifications: { webhooks: [{ url: "https://a.example.com", secret: "${UNSET_SECRET}" }] }'), [/environment variable UNSET_SECRET is not set/]);
  t.match(problems('auth_throttle: { keys: { slow_after: -1 } }'), [/auth_throttle\.keys\.slow_after: must be >= 0/]);
});
