// Responses state on upstreams that cannot keep it: the gateway keeps a translated conversation per key, so
// previous_response_id continues it and GET /v1/responses/{id} reads it back, whole or streamed; store: false keeps
// nothing; another key never reads it.
import t from 'tap';
import OpenAI from 'openai';
import { bridgeGateway, KEYS, OTHER_ANTHROPIC_KEY, type UpstreamFormat } from './bridge-config.ts';

const gw = await bridgeGateway(t);
const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

/** What the upstream was last asked: its messages/contents as JSON text. */
const lastBody = (up: UpstreamFormat) => gw.simulators[`sim-${up}`].requests.at(-1)!.body;

for (const up of ['anthropic-messages', 'gemini', 'openai-chat'] as const) {
  t.test(`Responses client on a ${up} group`, async (t) => {
    const openai = client(KEYS[up]);
    const first = await openai.responses.create({ model: 'gpt-5', instructions: 'Be brief.', input: 'My name is Ada.' });
    t.match(first.id, /^resp_[0-9a-f]{48}$/);
    t.match(first.output_text, /^Echo: My name is Ada\./);

    const second = await openai.responses.create({ model: 'gpt-5', previous_response_id: first.id, input: 'What is my name?' });
    t.equal(second.previous_response_id, first.id);
    const sent = lastBody(up);
    t.ok(sent.includes('My name is Ada.') && sent.includes('Echo: My name is Ada.') && sent.includes('What is my name?'),
      'the upstream got the kept turns, then the new one');

    const read = await openai.responses.retrieve(first.id);
    t.strictSame(read, first, 'GET /v1/responses/{id}: the answer as the client first saw it');

    // A streamed answer is kept too, under the id its response.created named.
    const stream = await openai.responses.create({ model: 'gpt-5', previous_response_id: second.id, input: 'And again?', stream: true });
    let id = '';
    let completed: unknown;
    for await (const e of stream) {
      if (e.type === 'response.created') id = e.response.id;
      if (e.type === 'response.completed') completed = e.response;
    }
    t.match(id, /^resp_/);
    // The SDK adds output_text to the objects it returns whole, not to stream events.
    const { output_text: text, ...third } = await openai.responses.retrieve(id);
    t.strictSame(third, completed, 'the streamed answer, as response.completed carried it');
    t.equal(text, 'Echo: And again?');
    const fourth = await openai.responses.create({ model: 'gpt-5', previous_response_id: id, input: 'Last one.' });
    t.ok(lastBody(up).includes('And again?') && lastBody(up).includes('My name is Ada.'), 'three turns deep');
    t.match(fourth.output_text, /Last one\./);
  });
}

t.test('store: false keeps nothing; an unknown id is a 404 naming previous_response_id', async (t) => {
  const openai = client(KEYS['anthropic-messages']);
  const unkept = await openai.responses.create({ model: 'gpt-5', input: 'Do not keep this.', store: false });
  t.equal((unkept as unknown as { store: boolean }).store, false);
  const missing = await openai.responses.create({ model: 'gpt-5', previous_response_id: unkept.id, input: 'Hm?' }).catch((e) => e);
  t.ok(missing instanceof OpenAI.NotFoundError, String(missing));
  t.equal(missing.error?.param, 'previous_response_id');
  t.match(missing.error?.message, `Previous response with id '${unkept.id}' not found.`);
  const read = await openai.responses.retrieve(unkept.id).catch((e) => e);
  t.ok(read instanceof OpenAI.NotFoundError, 'GET: 404');
});

t.test('another key of the same group never reads or continues a kept conversation', async (t) => {
  const mine = await client(KEYS['anthropic-messages']).responses.create({ model: 'gpt-5', input: 'A secret: 42.' });
  const other = client(OTHER_ANTHROPIC_KEY);
  t.ok(await other.responses.retrieve(mine.id).catch((e) => e) instanceof OpenAI.NotFoundError);
  t.ok(await other.responses.create({ model: 'gpt-5', previous_response_id: mine.id, input: 'What was it?' }).catch((e) => e) instanceof OpenAI.NotFoundError);
  t.notOk(lastBody('anthropic-messages').includes('What was it?'), 'refused before any upstream');
});
