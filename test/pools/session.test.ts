// Session signals, on request shapes the real clients send (Claude Code 2.1, Codex CLI 0.169, Gemini CLI 0.61, trimmed):
// headers first, then body ids, else a hash of the conversation's stable prefix; the lists are stage options.
import t from 'tap';
import { anthropicMessages } from '../../adapters/anthropic-messages/index.ts';
import { gemini } from '../../adapters/gemini/index.ts';
import { openaiChat } from '../../adapters/openai-chat/index.ts';
import { openaiResponses } from '../../adapters/openai-responses/index.ts';
import type { Ctx, FormatAdapter } from '../../core/types.ts';
import { SESSION_DEFAULTS, sessionKey, type SessionOptions } from '../../plugins/proxy/session.ts';
import { dig } from '../../plugins/dotted.ts';

const ctxOf = (format: FormatAdapter, headers: Record<string, string>, body?: Record<string, unknown>, method = 'POST') => ({
  req: { method, headers: { 'content-type': 'application/json', ...headers } },
  format,
  body: async () => Buffer.from(body === undefined ? '' : JSON.stringify(body)),
  json: async () => body,
}) as unknown as Ctx;
const key = (format: FormatAdapter, headers: Record<string, string>, body?: Record<string, unknown>, o: SessionOptions = SESSION_DEFAULTS) =>
  sessionKey(ctxOf(format, headers, body), o);

// Claude Code: x-claude-code-session-id, and metadata.user_id carrying the same session.
const claudeCode = (session: string, turns: number) => ({
  headers: { 'user-agent': 'claude-cli/2.1.330 (external, sdk-cli)', 'x-claude-code-session-id': session, 'anthropic-version': '2023-06-01' },
  body: {
    model: 'claude-sonnet-4-5', max_tokens: 32000, stream: true,
    metadata: { user_id: JSON.stringify({ device_id: 'f'.repeat(64), account_uuid: '', session_id: session }) },
    system: [{ type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.330.572;' }, { type: 'text', text: 'You are a Claude agent.', cache_control: { type: 'ephemeral' } }],
    tools: [{ name: 'Bash', description: 'Run a command', input_schema: { type: 'object' } }],
    messages: Array.from({ length: turns }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `turn ${i}` }] })),
  },
});

// Codex CLI: session-id and thread-id headers, prompt_cache_key = the session, a developer message first.
const codex = (session: string, turns: number) => ({
  headers: { 'session-id': session, 'thread-id': session, originator: 'codex_exec', 'user-agent': 'codex_exec/0.169.0' },
  body: {
    model: 'gpt-5', stream: true, store: false, prompt_cache_key: session, include: ['reasoning.encrypted_content'],
    input: [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex.' }] },
      ...Array.from({ length: turns }, (_, i) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `turn ${i}` }] }))],
    tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }],
  },
});

// Gemini CLI: no session signal at all; its first user turn carries the project context, then the prompt.
const geminiCli = (prompt: string, turns: number) => ({
  headers: { 'user-agent': 'GeminiCLI-tui/0.61.0/gemini-2.5-flash', 'x-gemini-api-privileged-user-id': '83a64ee5-cc73-438e-aafe-bce21c7a5c4e' },
  body: {
    systemInstruction: { parts: [{ text: 'You are an interactive CLI agent.' }], role: 'user' },
    tools: [{ functionDeclarations: [{ name: 'list_directory', parametersJsonSchema: { type: 'object' } }] }],
    contents: [{ role: 'user', parts: [{ text: 'This is the Gemini CLI. Context: /home/user' }, { text: prompt }] },
      ...Array.from({ length: turns }, (_, i) => ({ role: i % 2 ? 'user' : 'model', parts: [{ text: `turn ${i}` }] }))],
    generationConfig: { temperature: 1 },
  },
});

t.test('Claude Code: one key per session, from its session header or its metadata.user_id', async (t) => {
  const [a1, a5] = [claudeCode('2efe0261-8b77-4596-81f1-ba2761c84569', 1), claudeCode('2efe0261-8b77-4596-81f1-ba2761c84569', 5)];
  const b1 = claudeCode('aaaa0261-0000-4000-8000-000000000001', 1);
  const k = await key(anthropicMessages, a1.headers, a1.body);
  t.match(k, /^h:[\w-]{32}$/, 'from the header, hashed');
  t.equal(await key(anthropicMessages, a5.headers, a5.body), k, 'the fifth turn: the same session');
  t.not(await key(anthropicMessages, b1.headers, b1.body), k, 'another session: another key');
  // Without the header (a proxy dropped it), metadata.user_id still tells the sessions apart.
  const noHeader = { ...SESSION_DEFAULTS, session_headers: [] };
  const m = await key(anthropicMessages, {}, a1.body, noHeader);
  t.match(m, /^f:/);
  t.equal(await key(anthropicMessages, {}, a5.body, noHeader), m);
  t.not(await key(anthropicMessages, {}, b1.body, noHeader), m);
});

t.test('Codex CLI: session-id header, else prompt_cache_key; never the developer message every session shares', async (t) => {
  const a = codex('01a20052-100a-78b2-acd1-1a8c68c67298', 1);
  const a3 = codex('01a20052-100a-78b2-acd1-1a8c68c67298', 3);
  const b = codex('01a20052-ffff-78b2-acd1-000000000000', 1);
  const k = await key(openaiResponses, a.headers, a.body);
  t.equal(await key(openaiResponses, a3.headers, a3.body), k);
  t.not(await key(openaiResponses, b.headers, b.body), k);
  const bodyOnly = { ...SESSION_DEFAULTS, session_headers: [] };
  t.equal(await key(openaiResponses, {}, a.body, bodyOnly), await key(openaiResponses, {}, a3.body, bodyOnly), 'prompt_cache_key');
  t.not(await key(openaiResponses, {}, a.body, bodyOnly), await key(openaiResponses, {}, b.body, bodyOnly));
  // Had it fallen back to the prefix, two Codex sessions would share an account forever (same developer message).
  const prefixOnly = { ...SESSION_DEFAULTS, session_headers: [], session_fields: [] };
  t.equal(await key(openaiResponses, {}, a.body, prefixOnly), await key(openaiResponses, {}, b.body, prefixOnly));
});

t.test('Gemini CLI: no session signal, so the stable prefix (system, tools, first content) is the session', async (t) => {
  const a1 = geminiCli('say hello', 0);
  const a4 = geminiCli('say hello', 4);
  const b = geminiCli('list my files', 0);
  const k = await key(gemini, a1.headers, a1.body);
  t.match(k, /^p:/);
  t.equal(await key(gemini, a4.headers, a4.body), k, 'later turns keep the first content');
  t.not(await key(gemini, b.headers, b.body), k, 'another first prompt: another session');
  const other = { ...a1.body, systemInstruction: { parts: [{ text: 'Another agent.' }], role: 'user' } };
  t.not(await key(gemini, {}, other), k, 'another system instruction: another session');
});

t.test('order, formats and edge cases', async (t) => {
  const body = { model: 'gpt-4o-mini', prompt_cache_key: 'pck', messages: [{ role: 'user', content: 'hi' }] };
  const h = await key(openaiChat, { session_id: 's1' }, body);
  t.equal(await key(openaiChat, { session_id: 's1', conversation_id: 'c9' }, body), h, 'session_id before conversation_id');
  t.equal(await key(openaiChat, { session_id: 's1' }, { ...body, prompt_cache_key: 'other' }), h, 'headers before the body');
  t.not(await key(openaiChat, { conversation_id: 'c9' }, body), h);
  t.equal(await key(openaiChat, { 'x-session-affinity': 'opencode-1' }, body), await key(openaiChat, { 'x-session-affinity': 'opencode-1' }, { messages: [] }));
  t.equal(await key(openaiChat, {}, body), await key(openaiChat, {}, { ...body, messages: [...body.messages, { role: 'assistant', content: 'x' }] }), 'prompt_cache_key');
  const plain = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
  t.not(await key(openaiChat, {}, plain), await key(anthropicMessages, {}, plain), 'the same words in two formats are two sessions');
  t.equal(await key(openaiResponses, {}, { model: 'gpt-5', input: 'hello' }), await key(openaiResponses, {}, { model: 'gpt-5', input: 'hello', max_output_tokens: 5 }), 'a string input is its own first item');
  t.equal(await key(openaiChat, {}, { model: 'gpt-4o-mini' }), undefined, 'nothing to tell conversations apart');
  t.equal(await sessionKey(ctxOf(openaiResponses, {}, undefined, 'GET'), SESSION_DEFAULTS), undefined, 'a GET has no body to read');
  const custom = { session_headers: ['x-tenant-session'], session_fields: ['user'], session_prefix: [] };
  t.equal(await key(openaiChat, { session_id: 's1' }, plain, custom), undefined, 'the lists are options: session_id no longer counts');
  t.match(await key(openaiChat, { 'x-tenant-session': 't' }, plain, custom), /^h:/);
  t.match(await key(openaiChat, {}, { ...plain, user: 'u-1' }, custom), /^f:/);
  t.same([dig({ a: [{ b: 1 }] }, 'a.0.b'), dig({ a: 'text' }, 'a.0'), dig({ a: { 0: 'x' } }, 'a.0'), dig({}, 'a.b')], [1, 'text', 'x', undefined]);
});
