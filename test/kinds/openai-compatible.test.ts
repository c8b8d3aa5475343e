// Kind openai-compatible: a chat-completions server with auth none (a plain local server) and with bearer (the
// simulator), the official OpenAI SDK for chat and a Responses client translated to chat, its /v1/models listed.
import t from 'tap';
import OpenAI from 'openai';
import { withGateway } from '../helpers/gateway.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { startSimulator } from '../../simulator/server.ts';

t.test('openai-compatible', async (t) => {
  const local = await startUpstream(t, (req, res) => {
    if (req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'llama-3-8b', object: 'model', owned_by: 'local' }, { id: 'qwen-7b', object: 'model', owned_by: 'local' }] }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      id: 'chatcmpl-local', object: 'chat.completion', created: 1, model: 'llama-3-8b',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello from local' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
    }));
  });
  const sim = await startSimulator({ host: '127.0.0.1', port: 0 });
  t.teardown(() => sim.close());
  const gw = await withGateway(t, `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
platforms:
  local: { kind: openai-compatible, base_url: "${local.url}", auth: none, format: [openai-chat] }
  hosted: { kind: openai-compatible, base_url: "${sim.url}", auth: bearer, format: [openai-chat] }
groups:
  local: { platform: local, models: ["*"], accounts: [{ id: local-1 }] }
  hosted: { platform: hosted, models: ["gpt-4o*"], accounts: [{ id: hosted-1, credential: hosted-token-1 }] }
keys:
  - { id: a, key: sk-local-0001, group: local }
  - { id: b, key: sk-hosted-0002, group: hosted }
`);
  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  await t.test('auth none: nothing is sent as a credential', async (t) => {
    const chat = await openai('sk-local-0001').chat.completions.create({ model: 'llama-3-8b', messages: [{ role: 'user', content: 'hi' }] });
    t.equal(chat.choices[0].message.content, 'hello from local');
    const sent = local.exchanges.find((e) => e.url === '/v1/chat/completions')!;
    t.equal(sent.headers.authorization, undefined, 'no authorization header');
    t.equal(sent.headers['api-key'], undefined);
    t.equal(sent.headers['x-api-key'], undefined);
  });

  await t.test('its /v1/models lists the server\'s models', async (t) => {
    const ids = [];
    for await (const m of openai('sk-local-0001').models.list()) ids.push(m.id);
    t.same(ids.sort(), ['llama-3-8b', 'qwen-7b']);
  });

  await t.test('bearer: chat (stream and not) and a Responses client translated to chat', async (t) => {
    sim.clear();
    const chat = await openai('sk-hosted-0002').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    t.ok(chat.choices[0].message.content);
    t.equal(sim.requests[0].headers.authorization, 'Bearer hosted-token-1');
    let text = '';
    for await (const c of await openai('sk-hosted-0002').chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] })) text += c.choices[0]?.delta?.content ?? '';
    t.ok(text);
    sim.clear();
    const resp = await openai('sk-hosted-0002').responses.create({ model: 'gpt-4o-mini', input: 'hi' });
    t.equal(resp.object, 'response');
    t.ok(resp.output_text);
    t.equal(sim.requests[0].path, '/v1/chat/completions', 'sent as chat completions');
    let deltas = 0;
    for await (const e of await openai('sk-hosted-0002').responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true })) if (e.type === 'response.output_text.delta') deltas++;
    t.ok(deltas > 0, 'a streamed Responses answer, translated');
  });
});
