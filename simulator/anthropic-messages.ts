// Anthropic Messages upstream: POST /v1/messages whole and streamed, and count_tokens (wire-formats §5).
//
// Token rule: input_tokens = promptTokens() over the system prompt (when present) and each message, where a message
// counts its text blocks and the text inside its tool_result blocks (tool_use input counts nothing): Σ(3 + tokens) + 3.
// output_tokens is the reply's tokens; the cache counters are always 0.
import type { IncomingMessage } from 'node:http';
import type { Route, SimContext } from './context.ts';
import { type ErrorSpec, sendError } from './errors.ts';
import { isObject } from './incoming.ts';
import { planReply, type Reply, type ReplyInput } from './reply.ts';
import { sendJson, sendStream, sseFrame, type StreamPlan } from './respond.ts';
import { promptTokens, splitEvenly, splitTokens } from './tokens.ts';

type Message = Record<string, unknown>;

interface MessagesRequest {
  model: string;
  messages: Message[];
  system?: unknown;
  max_tokens?: unknown;
  stream?: unknown;
  tools?: unknown;
  tool_choice?: unknown;
}

const stopReasons = { stop: 'end_turn', length: 'max_tokens', tool: 'tool_use' } as const;

const VERSION_REQUIRED: ErrorSpec = { status: 400, message: 'anthropic-version: header is required' };

/** The real API refuses requests without anthropic-version before it looks at the body. */
export function requireVersion(req: IncomingMessage): ErrorSpec | undefined {
  return req.headers['anthropic-version'] === undefined ? VERSION_REQUIRED : undefined;
}

export const anthropicMessagesRoutes: Route[] = [
  { method: 'POST', path: '/v1/messages', dialect: 'anthropic', auth: true, requires: requireVersion, handler: createMessage },
  { method: 'POST', path: '/v1/messages/count_tokens', dialect: 'anthropic', auth: true, requires: requireVersion, handler: countMessageTokens },
];

async function createMessage(ctx: SimContext): Promise<void> {
  const request = validate(ctx, true);
  if ('status' in request) return sendError(ctx.res, ctx.dialect, request);
  const reply = planReply(replyInput(request));
  const inputTokens = inputTokensOf(request);
  if (request.stream === true) return sendStream(ctx, streamPlan(ctx, request.model, reply, inputTokens));
  sendJson(ctx, 200, {
    id: `msg_sim_${ctx.seq}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content: [reply.kind === 'text'
      ? { type: 'text', text: reply.text, citations: null }
      : { type: 'tool_use', id: toolUseId(ctx), name: reply.name, input: JSON.parse(reply.arguments) }],
    stop_reason: stopReasonOf(reply),
    stop_sequence: null,
    usage: {
      input_tokens: inputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: reply.tokens,
      service_tier: 'standard',
    },
  });
}

function countMessageTokens(ctx: SimContext): void {
  const request = validate(ctx, false);
  if ('status' in request) return sendError(ctx.res, ctx.dialect, request);
  sendJson(ctx, 200, { input_tokens: inputTokensOf(request) });
}

function validate(ctx: SimContext, needMaxTokens: boolean): MessagesRequest | ErrorSpec {
  const bad = (message: string): ErrorSpec => ({ status: 400, message });
  if (!ctx.jsonOk || !isObject(ctx.json)) return bad('The request body is not valid JSON.');
  const request = ctx.json;
  if (typeof request.model !== 'string' || request.model === '') return bad('model: Field required');
  if (!Array.isArray(request.messages)) return bad('messages: Field required');
  if (!request.messages.every(isObject)) return bad('messages: Input should be a valid list of message objects');
  if (needMaxTokens) {
    if (request.max_tokens === undefined) return bad('max_tokens: Field required');
    if (!(Number.isInteger(request.max_tokens) && (request.max_tokens as number) >= 1)) return bad('max_tokens: Input should be an integer of at least 1');
  }
  return request as unknown as MessagesRequest;
}

/** Text of a content value (string or blocks); tool_result blocks contribute their own content's text when asked. */
function textsOf(content: unknown, withToolResults: boolean): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block): string[] => {
    if (!isObject(block)) return [];
    if (block.type === 'text' && typeof block.text === 'string') return [block.text];
    return withToolResults && block.type === 'tool_result' ? textsOf(block.content, false) : [];
  });
}

function inputTokensOf(request: MessagesRequest): number {
  const system = textsOf(request.system, false);
  return promptTokens([...(system.length > 0 ? [system] : []), ...request.messages.map((m) => textsOf(m.content, true))]);
}

function replyInput(request: MessagesRequest): ReplyInput {
  const last = request.messages[request.messages.length - 1];
  const lastUser = request.messages.findLast((m) => m.role === 'user');
  const results = last?.role === 'user' && Array.isArray(last.content)
    ? last.content.filter((block) => isObject(block) && block.type === 'tool_result')
    : [];
  return {
    lastUserText: lastUser ? textsOf(lastUser.content, false).join(' ') : '',
    toolResult: results.length > 0 ? results.flatMap((block) => textsOf(block.content, false)).join(' ') : undefined,
    toolName: toolToCall(request),
    maxTokens: request.max_tokens as number,
  };
}

/** The custom tool to call, or undefined for a text reply; typed server tools (web_search_…) are never called. */
function toolToCall(request: MessagesRequest): string | undefined {
  const tools = Array.isArray(request.tools) ? request.tools.filter(isObject) : [];
  const choice = request.tool_choice;
  if (tools.length === 0 || (isObject(choice) && choice.type === 'none')) return undefined;
  if (isObject(choice) && choice.type === 'tool' && typeof choice.name === 'string') return choice.name;
  const first = tools.find((tool) => (tool.type === undefined || tool.type === 'custom') && typeof tool.name === 'string');
  return first?.name as string | undefined;
}

function stopReasonOf(reply: Reply): string {
  return stopReasons[reply.kind === 'tool' ? 'tool' : reply.finish];
}

function toolUseId(ctx: SimContext): string {
  return `toolu_sim_${ctx.seq}`;
}

function streamPlan(ctx: SimContext, model: string, reply: Reply, inputTokens: number): StreamPlan {
  const frames: string[] = [];
  const emit = (type: string, fields: object = {}) => frames.push(sseFrame(JSON.stringify({ type, ...fields }), type));
  emit('message_start', {
    message: {
      id: `msg_sim_${ctx.seq}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1, service_tier: 'standard' },
    },
  });
  emit('content_block_start', {
    index: 0,
    content_block: reply.kind === 'text' ? { type: 'text', text: '' } : { type: 'tool_use', id: toolUseId(ctx), name: reply.name, input: {} },
  });
  // Written by hand because the real service spaces this one payload differently from the rest.
  frames.push(sseFrame('{"type": "ping"}', 'ping'));
  const firstContent = frames.length;
  if (reply.kind === 'text') {
    for (const text of splitTokens(reply.text)) emit('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
  } else {
    // The real service opens tool input with an empty fragment.
    for (const partial_json of ['', ...splitEvenly(reply.arguments, 3)]) emit('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json } });
  }
  const endContent = frames.length;
  emit('content_block_stop', { index: 0 });
  emit('message_delta', { delta: { stop_reason: stopReasonOf(reply), stop_sequence: null }, usage: { output_tokens: reply.tokens } });
  emit('message_stop');
  const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
  return { frames, firstContent, endContent, errorFrame: () => sseFrame(JSON.stringify(error), 'error') };
}
