// Token counting is not a billed request: count_tokens and countTokens (routes declared `billed: false`) add nothing to
// /v1/usage (requests, tokens, spend), while the key's rpm still counts them. Through the official SDKs.
import t from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import { withGateway } from '../helpers/gateway.ts';
import { bearer } from '../helpers/http.ts';
import { rejection } from '../helpers/e2e.ts';

const KEY = 'sk-counter-0001';
const gw = await withGateway(t, `
server: { host: 127.0.0.1, port: 0 }
platforms:
  sim: { simulator: true }
groups:
  main:
    platform: sim
    models: [claude-haiku-4-5, gemini-2.5-flash]
    accounts:
      - { id: sim-1, credential: upstream-credential-1 }
keys:
  - { id: counter, key: ${KEY}, group: main, limits: { rpm: 5, quota_usd: 10 } }
pricing:
  claude-haiku-4-5: { input: 1000, output: 5000 }
  gemini-2.5-flash: { input: 1000, output: 2000 }
`);
const anthropic = new Anthropic({ apiKey: KEY, baseURL: gw.url, maxRetries: 0 });
const genai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: gw.url, apiVersion: 'v1beta' } });
const usage = async () => (await (await fetch(gw.url + '/v1/usage', { headers: bearer(KEY) })).json() as { usage: { total: Record<string, number> }; quota: { used: number } });
const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello there' }];

t.test('count calls record nothing; a message does; rpm counts both', async (t) => {
  // Simulator: "Hello there" as one turn = 3 + (3 + 2) = 8 input tokens.
  t.same(await anthropic.messages.countTokens({ model: 'claude-haiku-4-5', messages }), { input_tokens: 8 });
  t.equal((await genai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'Hello there' })).totalTokens, 8);
  await new Promise((r) => setTimeout(r, 100));
  const counted = await usage();
  t.match(counted.usage.total, { requests: 0, input_tokens: 0, cost: 0 }, 'two count calls: no request, no tokens, no spend');
  t.equal(counted.quota.used, 0);

  const message = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages });
  const cost = (message.usage.input_tokens * 1000 + message.usage.output_tokens * 5000) / 1e6;
  let after = await usage();
  for (let i = 0; i < 50 && after.usage.total.requests === 0; i++) after = await (new Promise((r) => setTimeout(r, 20)).then(usage));
  t.match(after.usage.total, { requests: 1, input_tokens: message.usage.input_tokens, output_tokens: message.usage.output_tokens, cost }, 'the message is billed');
  t.equal(after.quota.used, cost);

  // rpm 5: two counts and the message so far; a third count is the fifth request, the next one is refused.
  t.same(await anthropic.messages.countTokens({ model: 'claude-haiku-4-5', messages }), { input_tokens: 8 });
  t.equal((await genai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'Hello there' })).totalTokens, 8);
  const refused = await rejection(anthropic.messages.countTokens({ model: 'claude-haiku-4-5', messages }));
  t.ok(refused instanceof Anthropic.RateLimitError, 'the sixth request in the minute is over rpm, count call or not');
  t.equal((refused as InstanceType<typeof Anthropic.RateLimitError>).headers?.get('x-gateway-limit'), 'rpm');
  const gemini = await rejection(genai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'Hello there' }));
  t.equal((gemini as ApiError).status, 429);
  t.match((await usage()).usage.total, { requests: 1, cost }, 'still the one billed request');
});
