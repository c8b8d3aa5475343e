// Reasoning signatures: replayed as minted they are accepted; another vendor's, or an edited one, is refused in the
// refusing vendor's own words. This is what lets a translation test prove a signature never crosses providers.
import Anthropic from '@anthropic-ai/sdk';
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { seal, sign, unseal, verify } from '../../simulator/signatures.ts';
import { postJson } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());
const HEADERS = { 'x-api-key': 'sk-ant-upstream', 'anthropic-version': '2023-06-01' };
const anthropic = new Anthropic({ apiKey: 'sk-ant-upstream', baseURL: sim.url, maxRetries: 0 });

const ask = { role: 'user' as const, content: 'Weather in Paris?' };
const claudeTools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: {} } }];
const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
const gemini = '/v1beta/models/gemini-2.5-flash:generateContent';
const geminiTools = [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: {} } }] }];
const geminiThinking = { thinkingConfig: { includeThoughts: true } };
const responsesTools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }];

/** One signed tool-call turn from each dialect, to replay at home and abroad. */
async function signedTurns() {
  const claude = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 2048, thinking, tools: claudeTools, messages: [ask] });
  const google = await (await postJson(sim, gemini, { contents: [{ role: 'user', parts: [{ text: ask.content }] }], tools: geminiTools, generationConfig: geminiThinking })).json();
  const openai = await (await postJson(sim, '/v1/responses', {
    model: 'gpt-5', input: ask.content, tools: responsesTools, reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], store: false,
  })).json();
  return {
    claude: claude.content,
    googleContent: google.candidates[0].content,
    openaiOutput: openai.output as Array<Record<string, unknown>>,
    anthropicSignature: (claude.content[0] as { signature: string }).signature,
    geminiSignature: google.candidates[0].content.parts[1].thoughtSignature as string,
    openaiEncrypted: openai.output[0].encrypted_content as string,
  };
}
const turns = await signedTurns();

const claudeReplay = (content: Array<{ type: string; id?: string }>) => postJson(sim, '/v1/messages', {
  model: 'claude-sonnet-4-5', max_tokens: 2048, thinking, tools: claudeTools,
  messages: [ask, { role: 'assistant', content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: content.find((b) => b.type === 'tool_use')!.id, content: '21' }] }],
}, HEADERS);
const geminiReplay = (modelContent: unknown) => postJson(sim, gemini, {
  contents: [{ role: 'user', parts: [{ text: ask.content }] }, modelContent, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp_c: 21 } } }] }],
  tools: geminiTools, generationConfig: geminiThinking,
});
const responsesReplay = (output: unknown[]) => postJson(sim, '/v1/responses', {
  model: 'gpt-5', tools: responsesTools, reasoning: { effort: 'low' }, include: ['reasoning.encrypted_content'], store: false,
  input: [{ role: 'user', content: ask.content }, ...output, { type: 'function_call_output', call_id: (output[1] as { call_id: string }).call_id, output: '21' }],
});

t.test('Anthropic: its own thinking block replayed byte for byte is accepted, and the tool loop goes on', async (t) => {
  const res = await claudeReplay(turns.claude);
  t.equal(res.status, 200);
  t.match((await res.json()).content, [{ type: 'thinking' }, { type: 'text', text: 'Tool result: 21' }]);
});

t.test('Anthropic: a Gemini or OpenAI token as signature, or an edited thinking text, is refused', async (t) => {
  const expected = { type: 'error', error: { type: 'invalid_request_error', message: 'messages.1.content.0: Invalid `signature` in `thinking` block' } };
  const block = turns.claude[0] as { type: 'thinking'; thinking: string; signature: string };
  for (const content of [
    [{ ...block, signature: turns.geminiSignature }, turns.claude[1]],
    [{ ...block, signature: turns.openaiEncrypted }, turns.claude[1]],
    [{ ...block, thinking: block.thinking + ' ' }, turns.claude[1]],
  ]) {
    const res = await claudeReplay(content);
    t.equal(res.status, 400);
    t.same(await res.json(), expected);
  }
});

t.test('Gemini: its own thought signature replayed is accepted; another vendor\'s is a corrupted signature', async (t) => {
  t.equal((await geminiReplay(turns.googleContent)).status, 200);
  const parts = turns.googleContent.parts as Array<Record<string, unknown>>;
  for (const foreign of [turns.anthropicSignature, turns.openaiEncrypted]) {
    const res = await geminiReplay({ ...turns.googleContent, parts: [parts[0], { ...parts[1], thoughtSignature: foreign }] });
    t.equal(res.status, 400);
    t.same(await res.json(), { error: { code: 400, message: 'Corrupted thought signature.', status: 'INVALID_ARGUMENT' } });
  }
});

t.test('Responses: its own reasoning item replayed with store:false is accepted; another vendor\'s token as encrypted_content is refused', async (t) => {
  t.equal((await responsesReplay(turns.openaiOutput)).status, 200);
  for (const foreign of [turns.anthropicSignature, turns.geminiSignature]) {
    const res = await responsesReplay([{ ...turns.openaiOutput[0], encrypted_content: foreign }, turns.openaiOutput[1]]);
    t.equal(res.status, 400);
    const abbreviated = `${foreign.slice(0, 4)}...${foreign.slice(-4)}`;
    t.same(await res.json(), { error: { message: `The encrypted content ${abbreviated} could not be verified.`, type: 'invalid_request_error', param: null, code: 'invalid_encrypted_content' } });
  }
});

t.test('Anthropic with thinking on: dropping the thinking block from the tool loop is refused, as the real API does', async (t) => {
  const res = await claudeReplay([turns.claude[1]]);
  t.equal(res.status, 400);
  t.match((await res.json()).error.message, /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`\./);
});

t.test('sign/verify and seal/unseal: keys are per vendor, tokens are unique, tampering is detected', async (t) => {
  const a = sign('anthropic', 'x');
  t.not(a, sign('anthropic', 'x'), 'a fresh nonce each time');
  t.ok(verify('anthropic', 'x', a));
  t.notOk(verify('anthropic', 'y', a), 'bound to its text');
  t.notOk(verify('gemini', 'x', a), 'bound to its vendor');
  t.notOk(verify('anthropic', 'x', a.slice(0, -4) + 'AAA='), 'tampered');
  t.notOk(verify('anthropic', 'x', 'not base64!'));
  const s = seal('openai', 'reasoning text');
  t.equal(unseal('openai', s), 'reasoning text');
  t.equal(unseal('gemini', s), undefined);
  t.equal(unseal('openai', Buffer.from(Buffer.from(s, 'base64').toString('latin1').replace(/text$/, 'TEXT'), 'latin1').toString('base64')), undefined, 'an edited text fails its MAC');
});
