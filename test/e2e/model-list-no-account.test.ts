// A key whose group has no enabled account, on the shipped gateway.yaml with the user keys set and no vendor credential:
// each official SDK's model list parses an empty list and x-gateway-warning says why; a request is refused 503.
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { withLoggedGateway } from '../helpers/gateway.ts';
import { DEMO_KEY, rejection, SHIPPED_CONFIG } from '../helpers/e2e.ts';

const KEYS = { OPENAI_USER_KEY: 'sk-openai-user-e2e', ANTHROPIC_USER_KEY: 'sk-anthropic-user-e2e', GEMINI_USER_KEY: 'sk-gemini-user-e2e' };
// The gateway interpolates only this environment: OPENAI_API_KEY and the others are unset, their accounts disabled.
const { gateway } = await withLoggedGateway(t, SHIPPED_CONFIG, KEYS);
const WARNING = 'no_enabled_account';

t.test('OpenAI SDK: models.list is an empty page with the warning; the demo key\'s list has models and no warning', async (t) => {
  const openai = (apiKey: string) => new OpenAI({ apiKey, baseURL: gateway.url + '/v1', maxRetries: 0 });
  const { data, response } = await openai(KEYS.OPENAI_USER_KEY).models.list().withResponse();
  t.same(data.data, [], 'no model the group could serve');
  t.equal(response.headers.get('x-gateway-warning'), WARNING);
  const one = await openai(KEYS.OPENAI_USER_KEY).models.retrieve('gpt-4o-mini').withResponse();
  t.equal(one.data.id, 'gpt-4o-mini', 'a model the key may use can still be looked up');
  t.equal(one.response.headers.get('x-gateway-warning'), WARNING, 'with the same warning');
  const refused = await rejection(openai(KEYS.OPENAI_USER_KEY).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }));
  t.ok(refused instanceof OpenAI.APIError);
  t.equal((refused as InstanceType<typeof OpenAI.APIError>).status, 503, 'what the warning announces');

  const demo = await openai(DEMO_KEY).models.list().withResponse();
  t.ok(demo.data.data.length > 0, 'a served group lists its models');
  t.equal(demo.response.headers.get('x-gateway-warning'), null, 'without a warning');
});

t.test('Anthropic SDK: models.list is an empty page with the warning', async (t) => {
  const client = new Anthropic({ apiKey: KEYS.ANTHROPIC_USER_KEY, baseURL: gateway.url, maxRetries: 0 });
  const { data, response } = await client.models.list().withResponse();
  t.same(data.data, []);
  t.equal(data.has_more, false);
  t.equal(response.headers.get('x-gateway-warning'), WARNING);
  const all = [];
  for await (const model of client.models.list()) all.push(model);
  t.same(all, [], 'the SDK\'s auto-paging ends at once');
});

t.test('Gemini SDK: models.list is an empty pager with the warning', async (t) => {
  const ai = new GoogleGenAI({ apiKey: KEYS.GEMINI_USER_KEY, httpOptions: { baseUrl: gateway.url, apiVersion: 'v1beta' } });
  const pager = await ai.models.list();
  t.same(pager.page, []);
  t.equal(pager.sdkHttpResponse?.headers?.['x-gateway-warning'], WARNING);
  const all = [];
  for await (const model of pager) all.push(model);
  t.same(all, []);
});
