// rate-limit renews the concurrency lease of a running request (one timer per stage for all of them): a request that
// outlives lease_ms still holds its slot, and the slot is free again once it ends.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { chatConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { startUpstream } from '../helpers/upstream.ts';

const answer = JSON.stringify({
  id: 'chatcmpl-beat', object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});

const upstream = await startUpstream(t, async (req, res) => {
  await sleep(Number(req.headers['x-wait-ms'] ?? 0));
  res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
});

const gw = await withGateway(t, chatConfig({
  keyId: 'beat', key: 'sk-beat-0001', limits: 'concurrency: 1',
  platform: `{ base_url: "${upstream.url}", format: openai-chat, forward_headers: [x-wait-ms] }`,
  chain: 'auth, group-check, model-allowlist, { rate-limit: { lease_ms: 1000, heartbeat_ms: 100 } }, metering, proxy',
}));

const chat = (waitMs: number) => post(gw.url + '/v1/chat/completions', chatBody(), { ...bearer('sk-beat-0001'), 'x-wait-ms': String(waitMs) });

t.test('a request running past lease_ms keeps its slot; the slot is free once it ends', async (t) => {
  const long = chat(2200);
  await sleep(1500); // past the 1 s lease: only the heartbeats keep it
  const refused = await chat(0);
  t.equal(refused.status, 429, 'the second request is refused while the first runs');
  t.equal(refused.headers.get('x-gateway-limit'), 'concurrency');
  await refused.text();
  t.equal((await long).status, 200);
  const next = await chat(0);
  t.equal(next.status, 200, 'admitted once the first ended');
  await next.text();
});
