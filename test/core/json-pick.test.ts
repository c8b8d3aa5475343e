// pickJson reads the parts of a JSON answer the relay meters by, without parsing the rest: the same parts, values and
// duplicates rule as JSON.parse followed by reading those fields, over answers of every format and random JSON.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { pickJson, type JsonPick } from '../../core/json-pick.ts';
import { anthropicMessages } from '../../adapters/anthropic-messages/index.ts';
import { gemini } from '../../adapters/gemini/index.ts';
import { openaiChat } from '../../adapters/openai-chat/index.ts';
import { openaiEmbeddings } from '../../adapters/openai-embeddings/index.ts';
import { openaiImages } from '../../adapters/openai-images/index.ts';
import { seeded } from '../helpers/random.ts';
import { CLIENT_FIXTURES, fixtureFile } from '../helpers/client-fixtures.ts';

/** What JSON.parse gives, cut down to `pick`: the reference pickJson must equal. */
function project(v: unknown, pick: true | JsonPick): unknown {
  if (pick === true) return v;
  if (Array.isArray(v)) return pick['*'] === undefined ? [] : v.map((e) => project(e, pick['*']));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(pick)) if (Object.hasOwn(v, k)) out[k] = project((v as Record<string, unknown>)[k], pick[k]);
    return out;
  }
  return v;
}

const reference = (text: string, pick: JsonPick): unknown => {
  const v = JSON.parse(text) as unknown;
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? project(v, pick) : v;
};

/** JSON text with every object's fields in name order: equal for equal values, whatever order their fields came in. */
function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

// Field names the picks ask for appear everywhere, nested too, and inside strings (where only escaped quotes can be).
const NAMES = ['usage', 'choices', 'finish_reason', 'stop_reason', 'status', 'usageMetadata', 'candidates', 'finishReason', 'id', 'constructor', '__proto__', 'x', 'é"\\ü'];
const STRINGS = ['', 'plain', 'a "quoted" \\ back\\slash', '"usage": {"input_tokens": 9}', '}]{[,:', 'line\nbreak\ttab', 'emoji 🎉 \u2028', '\\"', '\\'];

function value(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 4 || r < 0.35) {
    const s = rand();
    if (s < 0.3) return Math.floor(rand() * 1e6) * (rand() < 0.5 ? 1 : -1);
    if (s < 0.4) return rand() * 1e-3;
    if (s < 0.5) return [true, false, null][Math.floor(rand() * 3)];
    return STRINGS[Math.floor(rand() * STRINGS.length)];
  }
  if (r < 0.65) return Array.from({ length: Math.floor(rand() * 5) }, () => value(rand, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 6); i > 0; i--) Object.defineProperty(o, NAMES[Math.floor(rand() * NAMES.length)], { value: value(rand, depth + 1), enumerable: true, configurable: true, writable: true });
  return o;
}

/** JSON text of `v` with random whitespace between tokens (JSON.stringify's indent, or none) and, sometimes, a duplicate field. */
function text(rand: () => number, v: unknown): string {
  const s = JSON.stringify(v, null, rand() < 0.3 ? (rand() < 0.5 ? 2 : '\t') : undefined);
  // A duplicate field at the top: JSON.parse keeps the later one.
  return rand() < 0.2 && s.startsWith('{') && s.length > 2 ? `{"usage": {"early": 1}, ${s.slice(1)}` : s;
}

// The parts each format's usage and stop reason read (a format declares them when its answers are mostly other parts).
const CHAT: JsonPick = { usage: true, choices: { '*': { finish_reason: true } } };
const MESSAGES: JsonPick = { usage: true, stop_reason: true };
const GEMINI: JsonPick = { usageMetadata: true, candidates: { '*': { finishReason: true } } };
const PICKS: [string, JsonPick][] = [
  ['chat', CHAT], ['responses', { usage: true, status: true }], ['messages', MESSAGES], ['gemini', GEMINI],
  ['openai-embeddings', openaiEmbeddings.answerParts!], ['openai-images', openaiImages.answerParts!],
  ['nested', { usage: { x: true, '*': true }, choices: { '*': { finish_reason: true, x: { '*': true } } }, constructor: true } as JsonPick],
];

t.test('random JSON: the same parts as JSON.parse', async (t) => {
  let compared = 0;
  let withParts = 0;
  for (let seed = 1; seed <= 3000; seed++) {
    const rand = seeded(seed);
    const top: Record<string, unknown> = {};
    for (let i = Math.floor(rand() * 8); i > 0; i--) Object.defineProperty(top, NAMES[Math.floor(rand() * NAMES.length)], { value: value(rand, 0), enumerable: true, configurable: true, writable: true });
    const s = text(rand, rand() < 0.05 ? value(rand, 0) : top);
    for (const [name, pick] of PICKS) {
      const want = reference(s, pick);
      const got = pickJson(s, pick);
      if (canon(got) !== canon(want)) {
        t.fail(`seed ${seed}, ${name}: ${canon(got)} instead of ${canon(want)} from ${s.slice(0, 300)}`);
        return;
      }
      compared++;
      if (want && typeof want === 'object' && Object.keys(want).length) withParts++;
    }
  }
  t.equal(compared, 3000 * PICKS.length, `${compared} texts and picks agree`);
  t.ok(withParts > compared / 3, `${withParts} of them with parts to read`);
});

t.test('answers as the upstreams send them', async (t) => {
  const content = 'x'.repeat(20_000) + '"usage": {"prompt_tokens": 999} \\"finish_reason\\":\\"length\\"';
  const chat = JSON.stringify({
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"usage":{"a":1}}' } }] }, logprobs: null, finish_reason: 'length' }],
    usage: { prompt_tokens: 9, completion_tokens: 12, total_tokens: 21, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 2 } },
  }, null, 2);
  const picked = pickJson(chat, CHAT);
  t.strictSame(picked, { choices: [{ finish_reason: 'length' }], usage: JSON.parse(chat).usage });
  t.strictSame(openaiChat.usageFromBody(picked), openaiChat.usageFromBody(JSON.parse(chat)));
  t.equal(openaiChat.incomplete!(picked), true);

  const message = JSON.stringify({
    id: 'msg_1', type: 'message', role: 'assistant', model: 'claude',
    content: [{ type: 'tool_use', id: 'tu', name: 'n', input: { usage: { input_tokens: 1e6 }, stop_reason: 'max_tokens' } }],
    stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 7, cache_read_input_tokens: 1 },
  });
  const m = pickJson(message, MESSAGES);
  t.equal(anthropicMessages.incomplete!(m), false);
  t.strictSame(m, { stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 7, cache_read_input_tokens: 1 } }, 'a tool input\'s own fields are not the answer\'s');

  const embeddings = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: Array.from({ length: 3072 }, (_, i) => Math.sin(i) / 7) }], model: 'e', usage: { prompt_tokens: 8, total_tokens: 8 } });
  t.strictSame(pickJson(embeddings, openaiEmbeddings.answerParts!), { usage: { prompt_tokens: 8, total_tokens: 8 } });

  const chunks = JSON.stringify([{ candidates: [{ finishReason: 'MAX_TOKENS' }], usageMetadata: { promptTokenCount: 3 } }]);
  t.strictSame(pickJson(chunks, GEMINI), JSON.parse(chunks), 'an array answer is parsed whole');
  t.equal(gemini.incomplete!(pickJson(chunks, GEMINI)), true);
  for (const client of ['claude-code', 'claude-code-default', 'codex-cli', 'gemini-cli'] as const) {
    const file = fixtureFile(client);
    const s = readFileSync(new URL(file, CLIENT_FIXTURES), 'utf8');
    for (const [name, pick] of PICKS) t.strictSame(pickJson(s, pick), reference(s, pick), `${file}, ${name}`);
  }
});

t.test('malformed text: a SyntaxError, never a hang or a wrong part', async (t) => {
  const pick = CHAT;
  for (const bad of ['{', '{"usage"', '{"usage":', '{"usage": {"a": 1}', '{"x": "unterminated', '{"x": [1, 2', '{"x": {"y": "\\"}}',
    '{"usage" 1}', '{"usage": 1 "x": 2}', '{"x": 1,}', '{usage: 1}', '{"usage": tru}', '{"usage": [1, 2}']) {
    t.throws(() => pickJson(bad, pick), SyntaxError, bad);
  }
  t.strictSame(pickJson('  {"usage": {"prompt_tokens": 1}} trailing', pick), { usage: { prompt_tokens: 1 } }, 'what follows the object is not read');
  t.strictSame(pickJson('{"x": {"y": "}"}, "usage": 2}', pick), { usage: 2 });
  t.strictSame(pickJson('{"constructor": {"a": 1}, "toString": 2}', pick), {}, 'fields named like Object.prototype\'s are not asked for');
  const proto = pickJson('{"__proto__": {"polluted": 1}}', JSON.parse('{"__proto__": true}') as JsonPick) as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(proto), Object.prototype, 'a "__proto__" field reaches no prototype');
  t.strictSame(Object.getOwnPropertyDescriptor(proto, '__proto__')?.value, { polluted: 1 }, 'it is a field, as JSON.parse makes it');
});
