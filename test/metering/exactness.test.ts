// The ledger is exact: 49 mixed requests through the official SDKs (openai, @anthropic-ai/sdk, @google/genai) on the shipped
// gateway.yaml, every format, stream and non-stream, answers cut by their output cap, upstream failures mid-stream
// (midstream-error, truncate), upstream error statuses and clients leaving mid-stream. Each request id has exactly one
// record with the simulator's token numbers, its ending, and cost = tokens × the shipped prices; the rollups (/v1/usage
// totals, daily, per model) and the settlement metrics add up to the same. Run on MemoryStore and on RedisStore.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI, { toFile } from 'openai';
import { parse } from 'yaml';
import { withGateway } from '../helpers/gateway.ts';
import { SHIPPED_CONFIG } from '../helpers/e2e.ts';
import { bearer, metricsText } from '../helpers/http.ts';
import { admin, ADMIN, eventually } from '../admin/helpers.ts';
import { redisForTest } from '../store/redis-server.ts';

// ---- the shipped prices (USD per 1M tokens), checked against gateway.yaml below ----
const PRICES: Record<string, { input: number; output?: number; cache_read?: number; cache_write?: number; cache_write_1h?: number }> = {
  'gpt-4o-mini': { input: 0.15, output: 0.60, cache_read: 0.075 },
  'gpt-5*': { input: 1.25, output: 10.0, cache_read: 0.125 },
  'gpt-image-1': { input: 5.0, output: 40.0 },
  'claude-haiku-4-5*': { input: 1.0, output: 5.0, cache_read: 0.10, cache_write: 1.25, cache_write_1h: 2.0 },
  'claude-sonnet-4-5*': { input: 3.0, output: 15.0, cache_read: 0.30, cache_write: 3.75, cache_write_1h: 6.0 },
  'gemini-2.5-flash*': { input: 0.30, output: 2.50, cache_read: 0.075 },
  'gemini-2.5-pro*': { input: 1.25, output: 10.0, cache_read: 0.31 },
  // Embeddings read input only (test/e2e/embeddings.test.ts meters them).
  'text-embedding-3-small': { input: 0.02 },
  'text-embedding-3-large': { input: 0.13 },
  'gemini-embedding-001': { input: 0.15 },
  'gemini-embedding-2*': { input: 0.20 },
};
// The price entry each upstream model falls under (by hand; the group's rate_multiplier is 1).
const PRICE_OF: Record<string, string> = {
  'gpt-4o-mini': 'gpt-4o-mini', 'gpt-5': 'gpt-5*', 'gpt-image-1': 'gpt-image-1', 'claude-haiku-4-5': 'claude-haiku-4-5*',
  'claude-haiku-4-5-20251001': 'claude-haiku-4-5*', 'gemini-2.5-flash': 'gemini-2.5-flash*', 'gemini-2.5-pro': 'gemini-2.5-pro*',
};
/** No cache reads or writes in the simulator: input × input price + output × output price. */
const costOf = (model: string, input: number, output: number) => {
  const p = PRICES[PRICE_OF[model]];
  return (input * p.input + output * (p.output ?? 0)) / 1_000_000;
};

// ---- the simulator's numbers, by hand from its rules (simulator/tokens.ts, reply.ts, each format file) ----
// A token is a run of letters/digits or one other non-space character. Prompt = Σ over turns of (3 + tokens) + 3.
// The reply is "Echo: " + the last user text, streamed one token per content frame.
const SYS = 'Be brief.'; //                          3 tokens: Be, brief, .
const Q = 'What is 2 + 2?'; //                       6 tokens
const H = 'Hello there, wonderful world'; //         5 tokens: Hello, there, ",", wonderful, world
const Q_PROMPT = 18; //                              system + question: (3 + 3) + (3 + 6) + 3
const H_PROMPT = 11; //                              one user turn: (3 + 5) + 3
const Q_REPLY = 8; //                                "Echo: What is 2 + 2?": Echo, :, What, is, 2, +, 2, ?
const H_REPLY = 7; //                                "Echo: Hello there, wonderful world"
const CAP = 3; //                                    an output cap of 3 cuts the reply to "Echo: What" (3 tokens)
// A client that leaves after 4 content frames has "Echo", ":", " Hello", " there" = 17 characters: ceil(17 / 4) = 5.
const SEEN = 'Echo: Hello there';
const ESTIMATE = 5;
// Stream faults fire after 2 content frames ("Echo", ":"): Responses' response.failed bills those 2 tokens, Anthropic's
// message_start said output_tokens 1, Gemini's provisional chunks carry the prompt only, Chat's chunks carry nothing.
const FAULT_OUTPUT_RESPONSES = 2;
const PLACEHOLDER = 1;
// Chat with a tool: the prompt is the user turn only, (3 + 6) + 3 = 12; the call's arguments {"input":"What is 2 + 2?"}
// are 14 tokens: { " input " : " What is 2 + 2 ? " }.
const TOOL_PROMPT = 12;
const TOOL_ARGS = 14;
// Images: input = tokens of the prompt ("A red apple": 3) + 65 per input image; output = 272 per image.
const IMAGE_PROMPT = 'A red apple';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

const KEYS = { demo: 'sk-demo-key', 'demo-limited': 'sk-demo-limited' } as const;
type KeyId = keyof typeof KEYS;
type Ending = 'completed' | 'incomplete' | 'failed' | 'disconnected' | 'missing-terminal';

interface Clients { openai: OpenAI; anthropic: Anthropic; genai: GoogleGenAI }
interface Case {
  name: string;
  key: KeyId;
  model: string;
  upstream?: string;
  stream: boolean;
  /** The client's status: 200 unless given; 'server error' for an upstream failure the gateway may answer itself (e.g. after failing over). */
  status?: number | 'server error';
  ending: Ending;
  input: number;
  output: number;
  estimated?: true;
  /** What the SDK call did: finished, or threw (an error status, or a failure inside the stream). */
  sdk: 'ok' | 'error';
  /** A client leaving mid-stream (the text it read is checked too). */
  leaves?: true;
  run(c: Clients, id: string): Promise<unknown>;
}

const opts = (id: string, extra: Record<string, string> = {}) => ({ headers: { 'x-request-id': id, ...extra } });
const fault = (f: string) => ({ 'x-simulator-fault': f });
// Frames 200 ms apart: a client that leaves after a frame is gone long before the next one is relayed.
const SLOW = { 'x-simulator-chunk-delay-ms': '200' };
const geminiOpts = (id: string, extra: Record<string, string> = {}) => ({ httpOptions: { headers: { 'x-request-id': id, ...extra } } });

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) { /* read to the end */ }
}

/** Reads until `n` content events arrived, then leaves; returns the text the client had. */
async function leaveAfter<E>(stream: AsyncIterable<E>, text: (e: E) => string | undefined, n: number, abort: () => void): Promise<string> {
  let seen = '';
  let count = 0;
  for await (const event of stream) {
    const piece = text(event);
    if (piece === undefined || piece === '') continue;
    seen += piece;
    if (++count === n) break;
  }
  abort();
  return seen;
}

const chatQ = [{ role: 'system' as const, content: SYS }, { role: 'user' as const, content: Q }];
const chatH = [{ role: 'user' as const, content: H }];
const lookup = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { input: { type: 'string' } } } } }];

function chatCases(key: KeyId, tag: string): Case[] {
  const base = { key, model: 'gpt-4o-mini' };
  return [
    { ...base, name: `${tag}chat`, stream: false, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
      run: (c, id) => c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatQ }, opts(id)) },
    { ...base, name: `${tag}chat stream, include_usage`, stream: true, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
      run: async (c, id) => drain(await c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatQ, stream: true, stream_options: { include_usage: true } }, opts(id))) },
  ];
}

const CASES: Case[] = [
  // ---- OpenAI Chat ----
  ...chatCases('demo', ''),
  { name: 'chat stream, usage forced upstream and hidden', key: 'demo', model: 'gpt-4o-mini', stream: true, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: async (c, id) => drain(await c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatQ, stream: true }, opts(id))) },
  { name: 'chat, max_tokens cap', key: 'demo', model: 'gpt-4o-mini', stream: false, ending: 'incomplete', input: Q_PROMPT, output: CAP, sdk: 'ok',
    run: (c, id) => c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatQ, max_tokens: CAP }, opts(id)) },
  { name: 'chat stream, max_completion_tokens cap', key: 'demo', model: 'gpt-4o-mini', stream: true, ending: 'incomplete', input: Q_PROMPT, output: CAP, sdk: 'ok',
    run: async (c, id) => drain(await c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatQ, max_completion_tokens: CAP, stream: true }, opts(id))) },
  { name: 'chat, alias gpt-4o served as gpt-4o-mini', key: 'demo', model: 'gpt-4o', upstream: 'gpt-4o-mini', stream: false, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: (c, id) => c.openai.chat.completions.create({ model: 'gpt-4o', messages: chatQ }, opts(id)) },
  { name: 'chat stream, alias', key: 'demo', model: 'gpt-4o', upstream: 'gpt-4o-mini', stream: true, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: async (c, id) => drain(await c.openai.chat.completions.create({ model: 'gpt-4o', messages: chatQ, stream: true }, opts(id))) },
  { name: 'chat, gpt-5', key: 'demo', model: 'gpt-5', stream: false, ending: 'completed', input: H_PROMPT, output: H_REPLY, sdk: 'ok',
    run: (c, id) => c.openai.chat.completions.create({ model: 'gpt-5', messages: chatH }, opts(id)) },
  { name: 'chat, tool call', key: 'demo', model: 'gpt-4o-mini', stream: false, ending: 'completed', input: TOOL_PROMPT, output: TOOL_ARGS, sdk: 'ok',
    run: (c, id) => c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: Q }], tools: lookup }, opts(id)) },
  { name: 'chat stream, tool call', key: 'demo', model: 'gpt-4o-mini', stream: true, ending: 'completed', input: TOOL_PROMPT, output: TOOL_ARGS, sdk: 'ok',
    run: async (c, id) => drain(await c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: Q }], tools: lookup, stream: true }, opts(id))) },
  { name: 'chat stream, upstream error mid-stream', key: 'demo', model: 'gpt-4o-mini', stream: true, ending: 'failed', input: 0, output: 0, sdk: 'error',
    run: async (c, id) => drain(await c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatQ, stream: true }, opts(id, fault('midstream-error')))) },
  { name: 'chat stream, upstream cut mid-stream', key: 'demo', model: 'gpt-4o-mini', stream: true, ending: 'missing-terminal', input: 0, output: 0, sdk: 'error',
    run: async (c, id) => drain(await c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatQ, stream: true }, opts(id, fault('truncate')))) },
  { name: 'chat, upstream body cut (gateway 502)', key: 'demo', model: 'gpt-4o-mini', stream: false, status: 502, ending: 'failed', input: 0, output: 0, sdk: 'error',
    run: (c, id) => c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatQ }, opts(id, fault('truncate'))) },
  { name: 'chat, upstream 500', key: 'demo', model: 'gpt-4o-mini', stream: false, status: 'server error', ending: 'failed', input: 0, output: 0, sdk: 'error',
    run: (c, id) => c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatQ }, opts(id, fault('status=500'))) },
  // Chat and Responses report usage only at the end: the stream is read on after the client left, for the upstream's count.
  { name: 'chat stream, client leaves', key: 'demo', model: 'gpt-4o-mini', stream: true, ending: 'disconnected', input: H_PROMPT, output: H_REPLY, sdk: 'ok', leaves: true,
    run: async (c, id) => {
      const stream = await c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatH, stream: true }, opts(id, SLOW));
      return leaveAfter(stream, (e) => e.choices[0]?.delta?.content ?? undefined, 4, () => stream.controller.abort());
    } },

  // ---- OpenAI Responses ----
  { name: 'responses', key: 'demo', model: 'gpt-5', stream: false, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: (c, id) => c.openai.responses.create({ model: 'gpt-5', instructions: SYS, input: Q }, opts(id)) },
  { name: 'responses stream', key: 'demo', model: 'gpt-5', stream: true, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: async (c, id) => drain(await c.openai.responses.create({ model: 'gpt-5', instructions: SYS, input: Q, stream: true }, opts(id))) },
  { name: 'responses, gpt-4o-mini', key: 'demo', model: 'gpt-4o-mini', stream: false, ending: 'completed', input: H_PROMPT, output: H_REPLY, sdk: 'ok',
    run: (c, id) => c.openai.responses.create({ model: 'gpt-4o-mini', input: H }, opts(id)) },
  { name: 'responses, max_output_tokens cap', key: 'demo', model: 'gpt-5', stream: false, ending: 'incomplete', input: Q_PROMPT, output: CAP, sdk: 'ok',
    run: (c, id) => c.openai.responses.create({ model: 'gpt-5', instructions: SYS, input: Q, max_output_tokens: CAP }, opts(id)) },
  { name: 'responses stream, max_output_tokens cap (response.incomplete)', key: 'demo', model: 'gpt-5', stream: true, ending: 'incomplete', input: Q_PROMPT, output: CAP, sdk: 'ok',
    run: async (c, id) => drain(await c.openai.responses.create({ model: 'gpt-5', instructions: SYS, input: Q, max_output_tokens: CAP, stream: true }, opts(id))) },
  { name: 'responses stream, response.failed mid-stream', key: 'demo', model: 'gpt-5', stream: true, ending: 'failed', input: Q_PROMPT, output: FAULT_OUTPUT_RESPONSES, sdk: 'ok',
    run: async (c, id) => drain(await c.openai.responses.create({ model: 'gpt-5', instructions: SYS, input: Q, stream: true }, opts(id, fault('midstream-error')))) },
  { name: 'responses stream, upstream cut mid-stream', key: 'demo', model: 'gpt-5', stream: true, ending: 'missing-terminal', input: 0, output: 0, sdk: 'ok',
    run: async (c, id) => drain(await c.openai.responses.create({ model: 'gpt-5', instructions: SYS, input: Q, stream: true }, opts(id, fault('truncate')))) },
  { name: 'responses stream, client leaves', key: 'demo', model: 'gpt-5', stream: true, ending: 'disconnected', input: H_PROMPT, output: H_REPLY, sdk: 'ok', leaves: true,
    run: async (c, id) => {
      const stream = await c.openai.responses.create({ model: 'gpt-5', input: H, stream: true }, opts(id, SLOW));
      return leaveAfter(stream, (e) => (e.type === 'response.output_text.delta' ? e.delta : undefined), 4, () => stream.controller.abort());
    } },

  // ---- Anthropic Messages ----
  { name: 'messages', key: 'demo', model: 'claude-haiku-4-5', stream: false, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: (c, id) => c.anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, system: SYS, messages: [{ role: 'user', content: Q }] }, opts(id)) },
  { name: 'messages stream', key: 'demo', model: 'claude-haiku-4-5', stream: true, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: async (c, id) => drain(await c.anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, system: SYS, messages: [{ role: 'user', content: Q }], stream: true }, opts(id))) },
  { name: 'messages.stream helper, dated model', key: 'demo', model: 'claude-haiku-4-5-20251001', stream: true, ending: 'completed', input: H_PROMPT, output: H_REPLY, sdk: 'ok',
    run: (c, id) => c.anthropic.messages.stream({ model: 'claude-haiku-4-5-20251001', max_tokens: 100, messages: [{ role: 'user', content: H }] }, opts(id)).finalMessage() },
  { name: 'messages, max_tokens cap', key: 'demo', model: 'claude-haiku-4-5', stream: false, ending: 'incomplete', input: Q_PROMPT, output: CAP, sdk: 'ok',
    run: (c, id) => c.anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: CAP, system: SYS, messages: [{ role: 'user', content: Q }] }, opts(id)) },
  { name: 'messages stream, max_tokens cap', key: 'demo', model: 'claude-haiku-4-5', stream: true, ending: 'incomplete', input: Q_PROMPT, output: CAP, sdk: 'ok',
    run: async (c, id) => drain(await c.anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: CAP, system: SYS, messages: [{ role: 'user', content: Q }], stream: true }, opts(id))) },
  { name: 'messages stream, error event mid-stream', key: 'demo', model: 'claude-haiku-4-5', stream: true, ending: 'failed', input: Q_PROMPT, output: PLACEHOLDER, sdk: 'error',
    run: async (c, id) => drain(await c.anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, system: SYS, messages: [{ role: 'user', content: Q }], stream: true }, opts(id, fault('midstream-error')))) },
  { name: 'messages stream, upstream cut mid-stream', key: 'demo', model: 'claude-haiku-4-5', stream: true, ending: 'missing-terminal', input: Q_PROMPT, output: PLACEHOLDER, sdk: 'error',
    run: async (c, id) => drain(await c.anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, system: SYS, messages: [{ role: 'user', content: Q }], stream: true }, opts(id, fault('truncate')))) },
  { name: 'messages stream, client leaves', key: 'demo', model: 'claude-haiku-4-5', stream: true, ending: 'disconnected', input: H_PROMPT, output: ESTIMATE, estimated: true, sdk: 'ok', leaves: true,
    run: async (c, id) => {
      const stream = await c.anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: H }], stream: true }, opts(id, SLOW));
      return leaveAfter(stream, (e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? e.delta.text : undefined), 4, () => stream.controller.abort());
    } },

  // ---- Gemini ----
  { name: 'generateContent', key: 'demo', model: 'gemini-2.5-flash', stream: false, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: (c, id) => c.genai.models.generateContent({ model: 'gemini-2.5-flash', contents: Q, config: { systemInstruction: SYS, ...geminiOpts(id) } }) },
  { name: 'generateContentStream', key: 'demo', model: 'gemini-2.5-flash', stream: true, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: async (c, id) => drain(await c.genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: Q, config: { systemInstruction: SYS, ...geminiOpts(id) } })) },
  { name: 'generateContent, gemini-2.5-pro', key: 'demo', model: 'gemini-2.5-pro', stream: false, ending: 'completed', input: H_PROMPT, output: H_REPLY, sdk: 'ok',
    run: (c, id) => c.genai.models.generateContent({ model: 'gemini-2.5-pro', contents: H, config: geminiOpts(id) }) },
  { name: 'generateContent, maxOutputTokens cap', key: 'demo', model: 'gemini-2.5-flash', stream: false, ending: 'incomplete', input: Q_PROMPT, output: CAP, sdk: 'ok',
    run: (c, id) => c.genai.models.generateContent({ model: 'gemini-2.5-flash', contents: Q, config: { systemInstruction: SYS, maxOutputTokens: CAP, ...geminiOpts(id) } }) },
  { name: 'generateContentStream, maxOutputTokens cap', key: 'demo', model: 'gemini-2.5-flash', stream: true, ending: 'incomplete', input: Q_PROMPT, output: CAP, sdk: 'ok',
    run: async (c, id) => drain(await c.genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: Q, config: { systemInstruction: SYS, maxOutputTokens: CAP, ...geminiOpts(id) } })) },
  { name: 'generateContentStream, error chunk mid-stream', key: 'demo', model: 'gemini-2.5-flash', stream: true, ending: 'failed', input: Q_PROMPT, output: 0, sdk: 'error',
    run: async (c, id) => drain(await c.genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: Q, config: { systemInstruction: SYS, ...geminiOpts(id, fault('midstream-error')) } })) },
  { name: 'generateContentStream, upstream cut mid-stream', key: 'demo', model: 'gemini-2.5-flash', stream: true, ending: 'missing-terminal', input: Q_PROMPT, output: 0, sdk: 'error',
    run: async (c, id) => drain(await c.genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: Q, config: { systemInstruction: SYS, ...geminiOpts(id, fault('truncate')) } })) },
  { name: 'generateContentStream, client leaves', key: 'demo', model: 'gemini-2.5-flash', stream: true, ending: 'disconnected', input: H_PROMPT, output: ESTIMATE, estimated: true, sdk: 'ok', leaves: true,
    run: async (c, id) => {
      const controller = new AbortController();
      const stream = await c.genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: H, config: { abortSignal: controller.signal, ...geminiOpts(id, SLOW) } });
      return leaveAfter(stream, (chunk) => chunk.text, 4, () => controller.abort());
    } },

  // ---- OpenAI Images ----
  { name: 'images.generate', key: 'demo', model: 'gpt-image-1', stream: false, ending: 'completed', input: 3, output: 272, sdk: 'ok',
    run: (c, id) => c.openai.images.generate({ model: 'gpt-image-1', prompt: IMAGE_PROMPT }, opts(id)) },
  { name: 'images.generate, n=2', key: 'demo', model: 'gpt-image-1', stream: false, ending: 'completed', input: 3, output: 544, sdk: 'ok',
    run: (c, id) => c.openai.images.generate({ model: 'gpt-image-1', prompt: IMAGE_PROMPT, n: 2 }, opts(id)) },
  { name: 'images.edit, multipart', key: 'demo', model: 'gpt-image-1', stream: false, ending: 'completed', input: 3 + 65, output: 272, sdk: 'ok',
    run: async (c, id) => c.openai.images.edit({ model: 'gpt-image-1', prompt: IMAGE_PROMPT, image: await toFile(PNG, 'a.png', { type: 'image/png' }) }, opts(id)) },

  // ---- the limited key: admitted (rpm, concurrency lease, quota) and settled the same way ----
  ...chatCases('demo-limited', 'limited: '),
  { name: 'limited: messages stream', key: 'demo-limited', model: 'claude-haiku-4-5', stream: true, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: async (c, id) => drain(await c.anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, system: SYS, messages: [{ role: 'user', content: Q }], stream: true }, opts(id))) },
  { name: 'limited: generateContentStream', key: 'demo-limited', model: 'gemini-2.5-flash', stream: true, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: async (c, id) => drain(await c.genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: Q, config: { systemInstruction: SYS, ...geminiOpts(id) } })) },
  { name: 'limited: responses stream', key: 'demo-limited', model: 'gpt-5', stream: true, ending: 'completed', input: Q_PROMPT, output: Q_REPLY, sdk: 'ok',
    run: async (c, id) => drain(await c.openai.responses.create({ model: 'gpt-5', instructions: SYS, input: Q, stream: true }, opts(id))) },
  { name: 'limited: chat stream, client leaves', key: 'demo-limited', model: 'gpt-4o-mini', stream: true, ending: 'disconnected', input: H_PROMPT, output: H_REPLY, sdk: 'ok', leaves: true,
    run: async (c, id) => {
      const stream = await c.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: chatH, stream: true }, opts(id, SLOW));
      return leaveAfter(stream, (e) => e.choices[0]?.delta?.content ?? undefined, 4, () => stream.controller.abort());
    } },
  { name: 'limited: messages stream, client leaves', key: 'demo-limited', model: 'claude-haiku-4-5', stream: true, ending: 'disconnected', input: H_PROMPT, output: ESTIMATE, estimated: true, sdk: 'ok', leaves: true,
    run: async (c, id) => {
      const stream = await c.anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: H }], stream: true }, opts(id, SLOW));
      return leaveAfter(stream, (e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? e.delta.text : undefined), 4, () => stream.controller.abort());
    } },
];

const clientsFor = (url: string, key: string): Clients => ({
  openai: new OpenAI({ apiKey: key, baseURL: url + '/v1', maxRetries: 0 }),
  anthropic: new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 }),
  genai: new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url, apiVersion: 'v1beta' } }),
});

interface Totals { requests: number; input_tokens: number; output_tokens: number; cost_nano: number }
const addTo = (into: Totals, c: Case) => {
  into.requests += 1;
  into.input_tokens += c.input;
  into.output_tokens += c.output;
  // The stores add each record's cost as whole nano-dollars.
  into.cost_nano += Math.round(costOf(c.upstream ?? c.model, c.input, c.output) * 1e9);
  return into;
};
const zero = (): Totals => ({ requests: 0, input_tokens: 0, output_tokens: 0, cost_nano: 0 });

/** Compares one /v1/usage totals block with the expected sums (tokens exactly, cost to 1e-9). */
function sameTotals(t: Test, got: any, want: Totals, label: string) {
  t.match(got, { requests: want.requests, input_tokens: want.input_tokens, output_tokens: want.output_tokens, cache_read_tokens: 0, cache_creation_tokens: 0, total_tokens: want.input_tokens + want.output_tokens }, label);
  t.ok(Math.abs(got.cost - want.cost_nano / 1e9) <= 1e-9, `${label}: cost ${got.cost} = ${want.cost_nano / 1e9}`);
  t.equal(got.actual_cost, got.cost, `${label}: actual_cost`);
}

async function exactness(t: Test, store: string, env: Record<string, string>) {
  const shipped = readFileSync(SHIPPED_CONFIG, 'utf8');
  t.same(parse(shipped).pricing, PRICES, 'the prices used here are the shipped ones');
  const yaml = shipped.replace(/^store:.*$/m, store);
  t.not(yaml, shipped, 'the store line was replaced');
  const gateway = await withGateway(t, yaml, { GATEWAY_ADMIN_TOKEN: ADMIN, ...env });
  const accounts: string[] = parse(shipped).groups.demo.accounts.map((a: { id: string }) => a.id);
  const clients = { demo: clientsFor(gateway.url, KEYS.demo), 'demo-limited': clientsFor(gateway.url, KEYS['demo-limited']) };

  const run = randomUUID().slice(0, 8);
  const ids = new Map<Case, string>();
  const sdk = new Map<Case, 'ok' | 'error'>();
  const seen = new Map<Case, unknown>();
  const go = async (c: Case) => {
    const id = `exact-${run}-${ids.size}`;
    ids.set(c, id);
    try { seen.set(c, await c.run(clients[c.key], id)); sdk.set(c, 'ok'); } catch { sdk.set(c, 'error'); }
  };
  // One at a time: concurrent aborted fetches leave unused keep-alive connections that hold the gateway's close for 10 s.
  for (const c of CASES) await go(c);
  const leaving = CASES.filter((c) => c.leaves);

  t.test('the SDK calls went as planned', async (t) => {
    for (const c of CASES) t.equal(sdk.get(c), c.sdk, c.name);
    for (const c of leaving) t.equal(seen.get(c), SEEN, `${c.name}: the client read "${SEEN}" and left`);
  });

  const N = CASES.length;
  const listed = async () => {
    const out: any[] = [];
    for (const key of Object.keys(KEYS)) out.push(...(await admin(gateway, 'GET', `/admin/usage?key=${key}&limit=500`)).body.records);
    return out;
  };
  await eventually(listed, (rs) => rs.length >= N, 5000);
  // Anything settled twice would show up by now.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const records = await listed();

  t.test('every request id recorded exactly once', async (t) => {
    t.equal(records.length, N, `${N} records for ${N} requests`);
    const recorded = records.map((r) => r.client_request_id).sort();
    t.same(recorded, [...ids.values()].sort(), 'the same client ids, none lost, none doubled');
    t.equal(new Set(records.map((r) => r.request_id)).size, N, 'each under a gateway request id of its own');
  });

  t.test('each record: the simulator\'s tokens, the ending, and cost = tokens × shipped price', async (t) => {
    for (const c of CASES) {
      const r = records.find((x) => x.client_request_id === ids.get(c));
      if (!r) { t.fail(`${c.name}: no record`); continue; }
      t.match(r, {
        key_id: c.key, group: 'demo', platform: 'demo', model: c.model, upstream_model: c.upstream ?? c.model, stream: c.stream, ending: c.ending,
        input_tokens: c.input, output_tokens: c.output, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0,
      }, c.name);
      if (c.status === 'server error') t.ok(r.status >= 500 && r.status <= 599, `${c.name}: status ${r.status}`);
      else t.equal(r.status, c.status ?? 200, `${c.name}: status`);
      t.ok(accounts.includes(r.account), `${c.name}: served by ${r.account}, an account of the group`);
      t.equal(r.estimated, c.estimated, `${c.name}: ${c.estimated ? 'marked as an estimate' : 'the upstream\'s own count'}`);
      t.ok(Math.abs(r.cost - costOf(c.upstream ?? c.model, c.input, c.output)) <= 1e-9, `${c.name}: cost ${r.cost}`);
    }
  });

  t.test('rollups: /v1/usage totals, today, daily and per model equal the sums of the expected records', async (t) => {
    for (const key of Object.keys(KEYS) as KeyId[]) {
      const mine = CASES.filter((c) => c.key === key);
      const total = mine.reduce(addTo, zero());
      const usage = await (await fetch(gateway.url + '/v1/usage', { headers: bearer(KEYS[key]) })).json() as any;
      sameTotals(t, usage.usage.total, total, `${key} total`);
      sameTotals(t, usage.usage.today, total, `${key} today`);
      const days = usage.daily_usage.reduce((s: Totals, d: any) => ({
        requests: s.requests + d.requests, input_tokens: s.input_tokens + d.input_tokens, output_tokens: s.output_tokens + d.output_tokens,
        cost_nano: s.cost_nano + Math.round(d.cost * 1e9),
      }), zero());
      t.same(days, total, `${key}: the days add up to the total`);
      const models = new Map<string, Totals>();
      for (const c of mine) addTo(models.get(c.model) ?? models.set(c.model, zero()).get(c.model)!, c);
      t.same(usage.model_stats.map((m: any) => m.model).sort(), [...models.keys()].sort(), `${key}: one row per requested model`);
      for (const [model, want] of models) sameTotals(t, usage.model_stats.find((m: any) => m.model === model), want, `${key} ${model}`);
      const viaAdmin = await admin(gateway, 'GET', `/admin/keys/${key}/usage`);
      t.same(viaAdmin.body.usage, usage, `${key}: the operator sees the same numbers`);
    }
  });

  t.test('settlement metrics: one settlement per request, by ending; tokens by direction', async (t) => {
    const text = await metricsText(gateway.url);
    const sum = (prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix)).reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    for (const ending of ['completed', 'incomplete', 'failed', 'disconnected', 'missing-terminal'] as const) {
      t.equal(sum(`gateway_settlements_total{ending="${ending}"}`), CASES.filter((c) => c.ending === ending).length, ending);
    }
    t.equal(sum('gateway_settlements_total{'), N);
    const all = CASES.reduce(addTo, zero());
    t.equal(sum('gateway_tokens_total{direction="input"'), all.input_tokens);
    t.equal(sum('gateway_tokens_total{direction="output"'), all.output_tokens);
    const uncached = text.split('\n').filter((l) => l.startsWith('gateway_prompt_tokens_total{') && l.includes('cache="uncached"'));
    t.equal(uncached.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0), all.input_tokens, 'prompt tokens by account: the uncached ones add up');
    t.ok(uncached.every((l) => /account="demo-[123]"/.test(l)), 'labelled with the serving account');
    t.comment(`${store.includes(':memory:') ? 'MemoryStore' : 'RedisStore'}: ${N} requests (${CASES.filter((c) => c.stream).length} streamed), `
      + `endings ${JSON.stringify(Object.fromEntries(['completed', 'incomplete', 'failed', 'missing-terminal', 'disconnected'].map((e) => [e, CASES.filter((c) => c.ending === e).length])))}, `
      + `${all.input_tokens} input + ${all.output_tokens} output tokens (${CASES.filter((c) => c.estimated).reduce((s, c) => s + c.output, 0)} estimated), cost ${(all.cost_nano / 1e9).toFixed(9)} USD`);
  });
}

t.test('MemoryStore', (t) => exactness(t, 'store: { path: ":memory:" }', {}));

t.test('RedisStore', async (t) => {
  const { url: redisUrl, prefix } = await redisForTest(t, 'exact');
  await exactness(t, `store: { redis: "${redisUrl}", prefix: "${prefix}" }`, {});
});
