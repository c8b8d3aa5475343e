// Session stickiness in a pool of three: Claude Code's metadata.user_id, OpenAI's session_id header and Codex CLI's
// session-id / prompt_cache_key keep a conversation on one account, while requests without a shared session spread over
// all three; a session whose account is cooling down or busy is served elsewhere and moves there.
import t from 'tap';
import type { Gateway } from '../../app/gateway.ts';
import { metricValue, metricsText } from '../helpers/http.ts';
import { chat, credentialOf, faultProxy, poolConfig, poolGateway, postJson, sleep } from './helpers.ts';

const THREE = [1, 2, 3].map((i) => ({ id: `acct-${i}`, credential: `credential-${i}` }));
const ANTHROPIC = { 'anthropic-version': '2023-06-01' };

// Claude Code's metadata.user_id (the JSON form of 2.x: device, account and the session's id).
const claudeUser = (session: string) => JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: session });
// Each turn of a conversation repeats the history and adds a turn, so only the session signal stays the same.
const claudeTurn = (session: string, turn: number) => ({
  model: 'claude-sonnet-4-5', max_tokens: 50, metadata: { user_id: claudeUser(session) },
  system: [{ type: 'text', text: 'You are a Claude agent, built on Anthropic\'s Claude Agent SDK.' }],
  messages: Array.from({ length: 2 * turn + 1 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} of ${session}` })),
});

const served = (gateway: Gateway, from: number) => gateway.simulators.sim.requests.slice(from).map(credentialOf);

t.test('a session keeps landing on one account; requests without one spread over the pool', async (t) => {
  const { gateway } = await poolGateway(t, poolConfig(THREE));
  const sim = gateway.simulators.sim;

  // Requests that share nothing: least recently used rotates them over all three accounts.
  let from = sim.requests.length;
  for (let i = 0; i < 6; i++) t.equal((await postJson(gateway, '/v1/chat/completions', chat(`unrelated ${i}`))).status, 200);
  t.equal(new Set(served(gateway, from)).size, 3, 'without a session, all three accounts serve');

  for (const session of ['2efe0261-8b77-4596-81f1-ba2761c84569', '7d1c2a3b-0000-4000-8000-000000000002']) {
    from = sim.requests.length;
    for (let turn = 0; turn < 5; turn++) {
      t.equal((await postJson(gateway, '/v1/messages', claudeTurn(session, turn), ANTHROPIC)).status, 200);
      // Unrelated traffic in between moves least-recently-used on.
      await postJson(gateway, '/v1/chat/completions', chat(`noise ${session} ${turn}`));
    }
    const mine = sim.requests.slice(from).filter((r) => r.path === '/v1/messages').map(credentialOf);
    const noise = sim.requests.slice(from).filter((r) => r.path !== '/v1/messages').map(credentialOf);
    t.equal(mine.length, 5);
    t.equal(new Set(mine).size, 1, `Claude Code session ${session.slice(0, 8)}: every turn on ${mine[0]}`);
    t.equal(new Set(noise).size, 2, 'the requests in between rotated over the two other accounts');
  }

  for (const [label, headers, extra] of [
    ['OpenAI session_id header', { session_id: 'sess-openai-1' }, {}],
    ['Codex CLI session-id header', { 'session-id': '01a20052-100a-78b2-acd1-1a8c68c67298' }, {}],
    ['prompt_cache_key', {}, { prompt_cache_key: 'cache-key-7' }],
  ] as const) {
    from = sim.requests.length;
    for (let turn = 0; turn < 5; turn++) {
      t.equal((await postJson(gateway, '/v1/chat/completions', chat(`${label} turn ${turn}`, extra), headers)).status, 200);
      await postJson(gateway, '/v1/chat/completions', chat(`noise ${label} ${turn}`));
    }
    const all = served(gateway, from);
    const mine = all.filter((_, i) => i % 2 === 0);
    const noise = all.filter((_, i) => i % 2 === 1);
    t.equal(new Set(mine).size, 1, `${label}: every turn on ${mine[0]}`);
    // Least recently used never picks the account just used: without stickiness the turns would have moved too.
    t.same(new Set(noise).size, 2, `${label}: the requests in between rotated over the two other accounts`);
    t.notOk(noise.includes(mine[0]), `${label}: never onto the session's account`);
  }

  const m = await metricsText(gateway.url);
  t.equal(metricValue(m, 'gateway_sticky_total{result="miss"}')! >= 5, true, 'one miss per new session');
  t.ok(metricValue(m, 'gateway_sticky_total{result="hit"}')! >= 5 * 4, 'then hits');
  t.equal(metricValue(m, 'gateway_sticky_total{result="moved"}'), undefined, 'nothing moved');
});

t.test('a session whose account cools down is served elsewhere and moves there', async (t) => {
  let simUrl = '';
  const proxy = await faultProxy(t, () => simUrl);
  const { gateway } = await poolGateway(t, poolConfig(THREE.slice(0, 2).map((a) => ({ ...a, base_url: proxy.url }))));
  simUrl = gateway.simulators.sim.url;
  // Least recently used alternates new sessions between the two accounts: s1 and s3 share one.
  const first = new Map<string, string>();
  for (const s of ['s1', 's2', 's3']) {
    t.equal((await postJson(gateway, '/v1/chat/completions', chat(`hello from ${s}`), { session_id: s })).status, 200);
    first.set(s, proxy.seen.at(-1)!);
  }
  t.equal(first.get('s1'), first.get('s3'), 's1 and s3 are on one account');
  t.not(first.get('s1'), first.get('s2'), 's2 on the other');
  const bound = first.get('s1')!;
  const other = first.get('s2')!;

  // The account of s1 and s3 starts answering 429 (reset in 30 s).
  proxy.failing.set(bound, { status: 429, retryAfter: 30 });
  const before = proxy.seen.length;
  t.equal((await postJson(gateway, '/v1/chat/completions', chat('s1 again'), { session_id: 's1' })).status, 200, 's1 fails over');
  t.same(proxy.seen.slice(before), [bound, other], 's1 tried its account (429), then the other');
  t.equal((await postJson(gateway, '/v1/chat/completions', chat('s3 again'), { session_id: 's3' })).status, 200, 's3 is served');
  t.same(proxy.seen.slice(before + 2), [other], 's3 went straight to the other account: its own is cooling down');
  let m = await metricsText(gateway.url);
  t.equal(metricValue(m, 'gateway_sticky_total{result="moved"}'), 1, 's3 was moved');

  // Both sessions now live on the other account, even after the first one recovers.
  proxy.failing.delete(bound);
  const later = proxy.seen.length;
  for (const s of ['s1', 's3', 's1', 's3']) await postJson(gateway, '/v1/chat/completions', chat(`${s} later`), { session_id: s });
  t.same(proxy.seen.slice(later), [other, other, other, other], 'rebound after success');
  m = await metricsText(gateway.url);
  t.equal(metricValue(m, 'gateway_sticky_total{result="moved"}'), 1, 'no further moves');
});

t.test('a session whose account is busy is served elsewhere and moves there', async (t) => {
  const { gateway } = await poolGateway(t, poolConfig(THREE.slice(0, 2).map((a) => ({ ...a, concurrency: 1 }))));
  const sim = gateway.simulators.sim;
  t.equal((await postJson(gateway, '/v1/chat/completions', chat('busy one'), { session_id: 'busy' })).status, 200);
  const home = credentialOf(sim.requests.at(-1)!);
  // A slow stream of the same session holds its account's only slot.
  const slow = await postJson(gateway, '/v1/chat/completions', chat('one two three four five six seven eight nine', { stream: true }), { session_id: 'busy', 'x-simulator-chunk-delay-ms': '100' });
  const holding = slow.text();
  await sleep(50);
  t.equal((await postJson(gateway, '/v1/chat/completions', chat('busy two'), { session_id: 'busy' })).status, 200, 'served without waiting');
  const away = credentialOf(sim.requests.at(-1)!);
  t.not(away, home, 'by the other account');
  t.equal((await postJson(gateway, '/v1/chat/completions', chat('busy three'), { session_id: 'busy' })).status, 200);
  t.equal(credentialOf(sim.requests.at(-1)!), away, 'the session moved with it');
  t.match(await holding, /\[DONE\]/);
  const m = await metricsText(gateway.url);
  t.equal(metricValue(m, 'gateway_sticky_total{result="moved"}'), 1, 'busy two was moved');
  t.equal(metricValue(m, 'gateway_sticky_total{result="hit"}'), 2, 'the slow stream and busy three were hits');
});
