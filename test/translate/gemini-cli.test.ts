// The recorded Gemini CLI request decodes without loss of what matters (system, tools with their schemas, thinking,
// sampling, the SSE framing), its canonical form is complete for any other upstream, and Gemini CLI's next turn (the
// call it got, its {output} result) decodes into a tool loop.
import t from 'tap';
import type { CanonRequest } from '../../core/canonical.ts';
import { codec } from '../../adapters/gemini/codec/index.ts';
import { clientFixture } from '../helpers/client-fixtures.ts';
import { ctxFor, encodeAll, sseChunks } from './gemini-helpers.ts';

const fixture = clientFixture('gemini-cli');
const [path, query] = fixture.url.split('?');
const MODEL = 'gemini-2.5-flash';
const body = fixture.body as Record<string, any>;
const decode = (b: Record<string, unknown>) => codec.decodeRequest(b, 'generate', { model: MODEL, path, query });

t.test('everything the request says reaches the canonical request', async (t) => {
  const req = decode(body);
  t.match(req, { operation: 'generate', model: MODEL, stream: true, temperature: 1, topP: 0.95, topK: 64 });
  t.strictSame(req.reasoning, { enabled: true, budgetTokens: 8192, show: true });
  t.strictSame(req.extras, { gemini: { sse: true } });
  t.strictSame(req.system, [{ type: 'text', text: body.systemInstruction.parts[0].text }], 'the system instruction (its role is ignored)');
  t.strictSame(req.messages, [{ role: 'user', content: body.contents[0].parts.map((p: any) => ({ type: 'text', text: p.text })) }], 'both text parts, in order');
  const declared = body.tools[0].functionDeclarations;
  t.equal(req.tools.length, declared.length);
  t.strictSame(req.tools, declared.map((d: any) => ({ kind: 'function', name: d.name, description: d.description, parameters: d.parametersJsonSchema })),
    'parametersJsonSchema kept whole: nested objects, arrays, descriptions and required lists');
  t.equal(codec.streamContentType(req), 'text/event-stream');
});

t.test('the canonical request is complete for other upstreams: object schemas, no Gemini-only leftovers', async (t) => {
  const req = decode(body);
  for (const tool of req.tools) t.equal(tool.kind === 'function' && tool.parameters.type, 'object', `${tool.name}: an object schema`);
  const keys = Object.keys(req).sort();
  t.strictSame(keys, ['extras', 'messages', 'model', 'operation', 'reasoning', 'stream', 'system', 'temperature', 'tools', 'topK', 'topP']);
  // Encoded again for a Gemini account, nothing of it is lost either.
  const out = codec.encodeRequest(req, ctxFor(req));
  t.equal(out.path, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
  t.strictSame((out.body as any).contents, body.contents);
  t.strictSame((out.body as any).systemInstruction, { parts: body.systemInstruction.parts });
  t.strictSame((out.body as any).generationConfig, body.generationConfig);
  t.strictSame((out.body as any).tools[0].functionDeclarations.map((d: any) => d.name), body.tools[0].functionDeclarations.map((d: any) => d.name));
});

t.test('Gemini CLI\'s next turn: the call it was given (with the id the codec sent) and its {output} result', async (t) => {
  const first = decode(body);
  // What the CLI received: one call, streamed; it keeps the part as it came.
  const frames = sseChunks(encodeAll([
    { type: 'start', id: 'r1', model: 'claude-x' },
    { type: 'block_start', index: 0, block: { type: 'tool_call', id: 'toolu_01', name: 'list_directory' } },
    { type: 'delta', index: 0, arguments: '{"dir_path":"."}' },
    { type: 'block_end', index: 0 },
    { type: 'finish', stop: 'tool_use', usage: { input: 9000, cacheRead: 0, cacheWrite: 0, output: 20, reasoning: 0 } },
  ], ctxFor(first, MODEL)));
  const callPart = frames[0].candidates[0].content.parts[0];
  t.strictSame(callPart, { functionCall: { id: 'toolu_01', name: 'list_directory', args: { dir_path: '.' } } });
  t.equal(frames[0].candidates[0].finishReason, 'STOP', 'tool calls end with STOP');
  const next: CanonRequest = decode({
    ...body,
    contents: [
      ...body.contents,
      { role: 'model', parts: [callPart] },
      { role: 'user', parts: [{ functionResponse: { id: 'toolu_01', name: 'list_directory', response: { output: 'a.txt\nb.txt' } } }] },
    ],
  });
  t.strictSame(next.messages.slice(1), [
    { role: 'assistant', content: [{ type: 'tool_call', id: 'toolu_01', name: 'list_directory', arguments: '{"dir_path":"."}' }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'toolu_01', name: 'list_directory', content: [{ type: 'text', text: 'a.txt\nb.txt' }] }] },
  ], 'the id round-trips, the output is the result\'s text');
  const failed = decode({
    ...body,
    contents: [...body.contents, { role: 'model', parts: [callPart] }, { role: 'user', parts: [{ functionResponse: { id: 'toolu_01', name: 'list_directory', response: { error: 'ENOENT' } } }] }],
  });
  t.match(failed.messages[2].content[0], { type: 'tool_result', isError: true, content: [{ type: 'text', text: 'ENOENT' }] }, 'an {error} response is an error result');
});
