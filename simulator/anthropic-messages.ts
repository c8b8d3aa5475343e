// Anthropic Messages upstream: POST /v1/messages whole and streamed, and count_tokens (docs/wire-formats.md#anthropic-messages).
//
// Token rule: input_tokens = promptTokens() over the system prompt (when present) and each message, where a message
// counts its text blocks and the text inside its tool_result blocks (tool_use input and thinking blocks count nothing):
// Σ(3 + tokens) + 3. output_tokens is the reply's tokens plus its thinking's tokens (thinking is billed as output, also
// when display is omitted); the cache counters are always 0.
//
// Requests are checked against strict/anthropic.ts first; thinking (`enabled` or `adaptive`) answers with a thinking
// block whose signature only this dialect's key verifies.
import type { IncomingMessage } from 'node:http';
import type { Route, SimContext } from './context.ts';
import { type ErrorSpec, sendError } from './errors.ts';
import { isObject } from './incoming.ts';
import { type AnthropicReply, streamPlan } from './anthropic-stream.ts';
import { callId, outputTokens, planReply, type Reply, type ReplyInput } from './reply.ts';
import { sendJson, sendStream } from './respond.ts';
import { sign } from './signatures.ts';
import { type AnthropicSubject, refuseAnthropic } from './strict/anthropic.ts';
import { blocksOf, type Message } from './strict/anthropic-turns.ts';
import { promptTokens } from './tokens.ts';

type MessagesRequest = AnthropicSubject['body'];

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
  const checked = read(ctx, 'create');
  if ('refusal' in checked) return sendError(ctx.res, ctx.dialect, checked.refusal);
  const { request } = checked;
  const answer = answerOf(ctx, request);
  const inputTokens = inputTokensOf(request);
  if (request.stream === true) return sendStream(ctx, streamPlan(ctx, request.model as string, answer, inputTokens));
  sendJson(ctx, 200, {
    id: `msg_sim_${ctx.seq}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content: answer.blocks,
    stop_reason: answer.stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: inputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: answer.outputTokens,
      service_tier: 'standard',
    },
  });
}

function countMessageTokens(ctx: SimContext): void {
  const checked = read(ctx, 'count_tokens');
  if ('refusal' in checked) return sendError(ctx.res, ctx.dialect, checked.refusal);
  const { request } = checked;
  sendJson(ctx, 200, { input_tokens: inputTokensOf(request) });
}

function read(ctx: SimContext, endpoint: AnthropicSubject['endpoint']): { request: MessagesRequest } | { refusal: ErrorSpec } {
  if (!ctx.jsonOk || !isObject(ctx.json)) return { refusal: { status: 400, message: 'The request body is not valid JSON.' } };
  const body = ctx.json as MessagesRequest;
  const refusal = refuseAnthropic({ body, endpoint });
  return refusal ? { refusal } : { request: body };
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

function thinkingOf(request: MessagesRequest): Record<string, unknown> | undefined {
  const thinking = isObject(request.thinking) ? request.thinking : undefined;
  return thinking?.type === 'enabled' || thinking?.type === 'adaptive' ? thinking : undefined;
}

function replyInput(request: MessagesRequest): ReplyInput {
  // A system message after the last turn (Claude Code's per-turn instructions) does not hide that turn's tool results.
  const last: Message | undefined = request.messages.findLast((m) => m.role !== 'system');
  const lastUser = request.messages.findLast((m) => m.role === 'user');
  const results = last?.role === 'user' ? blocksOf(last).filter((block) => block.type === 'tool_result') : [];
  const choice = isObject(request.tool_choice) ? request.tool_choice : {};
  return {
    lastUserText: lastUser ? textsOf(lastUser.content, false).join(' ') : '',
    toolResult: results.length > 0 ? results.flatMap((block) => textsOf(block.content, false)).join(' ') : undefined,
    toolNames: toolNames(request),
    parallel: choice.disable_parallel_tool_use !== true,
    maxTokens: request.max_tokens as number,
    reasoning: thinkingOf(request) !== undefined,
  };
}

/** The custom tools the model may call; typed server tools (web_search_…) are never called. */
function toolNames(request: MessagesRequest): string[] {
  const tools = Array.isArray(request.tools) ? request.tools.filter(isObject) : [];
  const choice = isObject(request.tool_choice) ? request.tool_choice : {};
  if (tools.length === 0 || choice.type === 'none') return [];
  if (choice.type === 'tool' && typeof choice.name === 'string') return [choice.name];
  return tools.filter((tool) => (tool.type === undefined || tool.type === 'custom') && typeof tool.name === 'string').map((tool) => tool.name as string);
}

/** The reply as Anthropic content blocks: thinking first (text hidden when display is omitted), then text or tool_use. */
function answerOf(ctx: SimContext, request: MessagesRequest): AnthropicReply {
  const reply: Reply = planReply(replyInput(request));
  const blocks: Array<Record<string, unknown>> = [];
  if (reply.reasoning) {
    const shown = thinkingOf(request)?.display === 'omitted' ? '' : reply.reasoning.text;
    blocks.push({ type: 'thinking', thinking: shown, signature: sign('anthropic', shown) });
  }
  if (reply.kind === 'text') blocks.push({ type: 'text', text: reply.text, citations: null });
  else reply.calls.forEach((call, i) => blocks.push({ type: 'tool_use', id: callId('toolu', ctx.seq, i), name: call.name, input: JSON.parse(call.arguments) }));
  return { blocks, stopReason: stopReasons[reply.kind === 'tool' ? 'tool' : reply.finish], outputTokens: outputTokens(reply) };
}
