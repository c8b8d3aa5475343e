// What encodeRequest sends a Gemini upstream is what the strict simulator (as strict as the real API) accepts: every
// canonical fixture, the recorded Gemini CLI request, schemas Gemini's `parameters` would refuse uncleaned, and tool
// loops whose thought signatures the simulator itself sealed; its answers, whole and streamed, decode back.
import t from 'tap';
import type { CanonMessage, CanonRequest, CanonResponse } from '../../core/canonical.ts';
import { startSimulator } from '../../simulator/server.ts';
import { FAULT_HEADER } from '../../simulator/faults.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { codec } from '../../adapters/gemini/codec/index.ts';
import { clientFixture } from '../helpers/client-fixtures.ts';
import { requests, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import { ctxFor, decodeAll } from './gemini-helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const MODEL = 'gemini-2.5-flash';

/** The request as the bridge sends it: the codec's path and body, the account's key. */
async function send(req: CanonRequest, headers: Record<string, string> = {}): Promise<{ status: number; text: string; body: Record<string, unknown> }> {
  const out = codec.encodeRequest({ ...req, model: MODEL }, ctxFor(req));
  const res = await fetch(sim.url + out.path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': 'sk-sim', ...headers },
    body: JSON.stringify(out.body),
  });
  return { status: res.status, text: await res.text(), body: out.body };
}

/** The simulator's answer, read back by the codec (streamed or whole, as the request asked). */
async function answer(req: CanonRequest): Promise<CanonResponse> {
  const { status, text } = await send(req);
  if (status !== 200) throw new Error(`${status}: ${text}`);
  return req.stream ? collectEvents(decodeAll(text, ctxFor(req))) : codec.decodeResponse(JSON.parse(text), ctxFor(req));
}

t.test('every canonical fixture request is accepted (200) and its answer decodes', async (t) => {
  for (const [name, req] of Object.entries(requests) as [string, CanonRequest][]) {
    if (name === 'imageUrl') continue; // refused by the codec: the bridge inlines url images first
    const { status, text } = await send(req);
    t.equal(status, 200, `${name}: ${status === 200 ? 'accepted' : text}`);
    if (status !== 200) continue;
    if (req.operation === 'count_tokens') {
      t.ok(codec.decodeCount(JSON.parse(text)).inputTokens > 0, `${name}: counted`);
      continue;
    }
    const res = req.stream ? collectEvents(decodeAll(text, ctxFor(req))) : codec.decodeResponse(JSON.parse(text), ctxFor(req));
    t.ok(res.content.length > 0 && res.usage.input > 0 && res.usage.output > 0, `${name}: an answer with usage`);
    t.equal(res.model, MODEL, `${name}: the upstream's model`);
  }
});

t.test('the stream and the whole answer decode alike; the usage is the simulator\'s own', async (t) => {
  const req = { ...requests.text, model: MODEL };
  const whole = await answer(req);
  const streamed = await answer({ ...req, stream: true });
  t.strictSame({ ...streamed, id: '' }, { ...whole, id: '' });
  t.match(whole, { stop: 'end', content: [{ type: 'text', text: 'Echo: Hello there' }] });
  const cut = await answer({ ...req, stream: true, maxOutputTokens: 2 });
  t.equal(cut.stop, 'max_tokens');
});

const tools = requests.toolRoundTrip.tools;
const ask = (text: string): CanonMessage => ({ role: 'user', content: [{ type: 'text', text }] });

t.test('a tool loop with thinking: the simulator\'s sealed signature comes back on the call and is replayed', async (t) => {
  const first: CanonRequest = { ...requests.toolRoundTrip, messages: [ask('Weather in Paris? use get_weather')], reasoning: { enabled: true, effort: 'low', show: true } };
  const turn = await answer(first);
  t.equal(turn.stop, 'tool_use', 'STOP with a functionCall is tool_use');
  const call = turn.content.find((b) => b.type === 'tool_call');
  t.match(call, { type: 'tool_call', id: 'call_1', name: 'get_weather', signature: { format: 'gemini' } }, 'an id minted, the signature kept as Gemini\'s');
  t.match(turn.content[0], { type: 'reasoning', text: /The user asks/ }, 'the thought shown');
  t.ok(turn.usage.reasoning > 0, 'thoughts counted');
  const streamed = await answer({ ...first, stream: true });
  t.strictSame(streamed.content.map((b) => b.type), turn.content.map((b) => b.type), 'the stream decodes into the same blocks');
  // Turn two: the call and its signature go back with the result; the simulator checks the signature is its own.
  const second: CanonRequest = {
    ...first,
    messages: [...first.messages, { role: 'assistant', content: turn.content }, { role: 'user', content: [{ type: 'tool_result', callId: call!.type === 'tool_call' ? call!.id : '', content: [{ type: 'text', text: '18 C' }] }] }],
  };
  const { status, text, body } = await send(second);
  t.equal(status, 200, text);
  const model = (body.contents as any[])[1];
  t.equal(model.parts.find((p: any) => p.functionCall).thoughtSignature, (call as any).signature.value, 'the real signature, not the placeholder');
  t.match(JSON.parse(text).candidates[0].content.parts.at(-1).text, /Tool result: .*18 C/);
});

t.test('parallel calls to one function get ids of their own, unique across the conversation', async (t) => {
  const twoTools = [...tools, { ...tools[0], name: 'get_time', description: 'Local time' }];
  const history: CanonMessage[] = [
    ask('hi'), { role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'get_time', arguments: '{}' }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'call_1', content: [{ type: 'text', text: 'noon' }] }] },
    { role: 'assistant', content: [{ type: 'text', text: 'It is noon.' }] },
    ask('now get_weather and get_time'),
  ];
  const res = await answer({ ...requests.text, tools: twoTools, messages: history });
  const ids = res.content.flatMap((b) => (b.type === 'tool_call' ? [b.id] : []));
  t.strictSame(ids, ['call_2', 'call_3'], 'call_1 is taken by the history');
});

t.test('signatures of another provider never reach Gemini; its calls carry the documented placeholder', async (t) => {
  const req: CanonRequest = {
    ...requests.toolRoundTrip,
    messages: [
      ask('Weather in Paris?'),
      {
        role: 'assistant', content: [
          { type: 'reasoning', text: 'Let me look.', signature: { format: 'anthropic-messages', value: 'sig-abc' } },
          { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}', signature: { format: 'openai-responses', value: 'enc' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', callId: 'toolu_1', content: [{ type: 'text', text: '18 C' }] }] },
    ],
  };
  const { status, text, body } = await send(req);
  t.equal(status, 200, text);
  t.strictSame((body.contents as any[])[1].parts, [{ functionCall: { id: 'toolu_1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'skip_thought_signature_validator' }]);
});

t.test('schemas Gemini\'s parameters would refuse are cleaned, and the simulator accepts them', async (t) => {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    additionalProperties: false,
    $defs: { unit: { type: 'string', enum: ['C', 'F'] } },
    properties: {
      city: { type: 'string', minLength: 1, format: 'uri' },
      unit: { $ref: '#/$defs/unit' },
      days: { type: ['integer', 'null'], exclusiveMinimum: 0, maximum: 14 },
      kind: { const: 'forecast' },
      tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      extra: { type: 'object', propertyNames: { pattern: '^[a-z]+$' }, additionalProperties: { type: 'string' } },
      level: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
      mode: { oneOf: [{ type: 'string' }, { type: 'number' }] },
    },
    required: ['city', 'ghost'],
  };
  const req: CanonRequest = { ...requests.forcedTool, tools: [{ kind: 'function', name: 'get_weather', parameters: schema }] };
  const { status, text, body } = await send(req);
  t.equal(status, 200, text);
  t.strictSame((body.tools as any)[0].functionDeclarations[0].parameters, {
    type: 'object',
    properties: {
      city: { type: 'string', minLength: 1 },
      unit: { type: 'string', enum: ['C', 'F'] },
      days: { type: 'integer', maximum: 14, minimum: 0, nullable: true },
      kind: { enum: ['forecast'] },
      tags: { type: 'array', items: { type: 'string' } },
      extra: { type: 'object' },
      level: { nullable: true, type: 'integer' },
      mode: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    },
    required: ['city'],
  });
  // A schema that refers to itself cannot be inlined: it goes whole as parametersJsonSchema.
  const tree = { type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } } }, $defs: {} };
  const recursive = await send({ ...req, tools: [{ kind: 'function', name: 'walk', parameters: { ...tree, properties: { node: { $ref: '#/$defs/node' } }, $defs: { node: tree } } }], toolChoice: { type: 'auto' } });
  t.equal(recursive.status, 200, recursive.text);
  const declared = (recursive.body.tools as any)[0].functionDeclarations[0];
  t.ok(declared.parametersJsonSchema && !declared.parameters, 'parametersJsonSchema for a recursive schema');
});

t.test('the recorded Gemini CLI request, decoded and encoded again for a Gemini account, is accepted', async (t) => {
  const fixture = clientFixture('gemini-cli');
  const [path, query] = fixture.url.split('?');
  const req = codec.decodeRequest(fixture.body, 'generate', { model: MODEL, path, query });
  const { status, text, body } = await send(req);
  t.equal(status, 200, text);
  t.match(body, { generationConfig: { temperature: 1, topP: 0.95, topK: 64, thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 } } });
  const res = collectEvents(decodeAll(text, ctxFor(req)));
  t.equal(res.stop, 'tool_use', 'the simulator calls the first declared tool');
  t.match(res.content, [{ type: 'reasoning' }, { type: 'tool_call', id: 'call_1', name: 'update_topic' }]);
});

t.test('a mid-stream failure decodes into the error event, after what arrived', async (t) => {
  const { status, text } = await send({ ...requests.streamText, model: MODEL }, { [FAULT_HEADER]: 'midstream-error' });
  t.equal(status, 200);
  const events = decodeAll(text, ctxFor(requests.streamText));
  t.match(events.at(-1), { type: 'error', error: { status: 500, kind: 'server', code: 'INTERNAL' } });
  t.notOk(events.some((e) => e.type === 'finish'), 'never a clean finish');
  t.ok(events.some((e) => e.type === 'delta'), 'the text before it');
  const limited = await send(requests.text, { [FAULT_HEADER]: 'status=429' });
  t.match(codec.decodeError(limited.status, limited.text), { status: 429, kind: 'rate_limit', code: 'RESOURCE_EXHAUSTED' });
});
