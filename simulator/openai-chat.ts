// OpenAI Chat Completions upstream: POST /v1/chat/completions, whole and streamed (docs/wire-formats.md#openai-chat).
//
// Token rule: prompt_tokens = promptTokens() over each message's text (string content or text parts; tool_calls count
// nothing): Σ(3 + tokens) + 3. completion_tokens is the reply's tokens plus, when reasoning_effort asked for reasoning
// (any value but "none"), the hidden reasoning's tokens, which completion_tokens_details.reasoning_tokens repeats.
//
// Requests are checked against strict/openai-chat.ts first. Tool calls stream as OpenAI does: per call, a head fragment
// with index, id, type and name, then argument pieces keyed by the same index.
import type { SimContext } from './context.ts';
import { sendError } from './errors.ts';
import { isObject } from './incoming.ts';
import { callId, outputTokens, planReply, type Reply, type ReplyInput } from './reply.ts';
import { sendJson, sendStream, sseFrame, type StreamPlan } from './respond.ts';
import { type ChatBody, refuseChat } from './strict/openai-chat.ts';
import { promptTokens, splitEvenly, splitTokens } from './tokens.ts';

const finishReasons = { stop: 'stop', length: 'length', tool: 'tool_calls' } as const;

const NOT_JSON = 'We could not parse the JSON body of your request. (HINT: This likely means you aren\'t using your HTTP library correctly.)';

export async function chatCompletions(ctx: SimContext): Promise<void> {
  if (!ctx.jsonOk) return sendError(ctx.res, ctx.dialect, { status: 400, message: NOT_JSON });
  if (!isObject(ctx.json)) return sendError(ctx.res, ctx.dialect, { status: 400, message: 'The request body must be a JSON object.', code: 'invalid_type' });
  const refusal = refuseChat(ctx.json);
  if (refusal) return sendError(ctx.res, ctx.dialect, refusal);
  const request = ctx.json as ChatBody;
  const reply = planReply(replyInput(request));
  const usage = usageOf(promptTokens(request.messages.map((m) => textOf(m.content))), reply);
  const base = {
    id: `chatcmpl-sim-${ctx.seq}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    service_tier: 'default',
    system_fingerprint: 'fp_simulator',
  };
  if (request.stream === true) {
    const includeUsage = isObject(request.stream_options) && request.stream_options.include_usage === true;
    return sendStream(ctx, streamPlan(ctx, base, reply, usage, includeUsage));
  }
  sendJson(ctx, 200, {
    id: base.id,
    object: base.object,
    created: base.created,
    model: base.model,
    choices: [{ index: 0, message: messageOf(ctx, reply), logprobs: null, finish_reason: finishOf(reply) }],
    usage,
    service_tier: base.service_tier,
    system_fingerprint: base.system_fingerprint,
  });
}

/** Text of a message's content: a string, or the text parts of an array. */
function textOf(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.filter((part) => isObject(part) && part.type === 'text' && typeof part.text === 'string').map((part) => part.text as string);
}

function replyInput(request: ChatBody): ReplyInput {
  const last = request.messages[request.messages.length - 1];
  const lastUser = request.messages.findLast((m) => m.role === 'user');
  const cap = request.max_completion_tokens ?? request.max_tokens;
  return {
    lastUserText: lastUser ? textOf(lastUser.content).join(' ') : '',
    toolResult: last.role === 'tool' ? textOf(last.content).join(' ') : undefined,
    toolNames: toolNames(request),
    parallel: request.parallel_tool_calls !== false,
    maxTokens: typeof cap === 'number' ? cap : undefined,
    reasoning: typeof request.reasoning_effort === 'string' && request.reasoning_effort !== 'none',
  };
}

/** The function tools the model may call (just the named one when tool_choice names one). */
function toolNames(request: ChatBody): string[] {
  const tools = Array.isArray(request.tools) ? request.tools.filter(isObject) : [];
  const choice = request.tool_choice;
  if (tools.length === 0 || choice === 'none') return [];
  if (isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string') return [choice.function.name];
  return tools
    .filter((tool) => tool.type === 'function' && isObject(tool.function) && typeof tool.function.name === 'string')
    .map((tool) => (tool.function as Record<string, unknown>).name as string);
}

function usageOf(prompt: number, reply: Reply) {
  const completion = outputTokens(reply);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reply.reasoning?.tokens ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function finishOf(reply: Reply): string {
  return finishReasons[reply.kind === 'tool' ? 'tool' : reply.finish];
}

function toolCallsOf(ctx: SimContext, reply: Reply & { kind: 'tool' }) {
  return reply.calls.map((call, i) => ({ id: callId('call', ctx.seq, i), type: 'function', function: { name: call.name, arguments: call.arguments } }));
}

function messageOf(ctx: SimContext, reply: Reply) {
  if (reply.kind === 'text') return { role: 'assistant', content: reply.text, refusal: null, annotations: [] };
  return { role: 'assistant', content: null, tool_calls: toolCallsOf(ctx, reply), refusal: null, annotations: [] };
}

function streamPlan(ctx: SimContext, base: object, reply: Reply, usage: object, includeUsage: boolean): StreamPlan {
  // Without include_usage the chunks carry no usage key at all (docs/wire-formats.md#chat-stream).
  const usageField = includeUsage ? { usage: null } : {};
  const chunk = (delta: object, finish: string | null) => sseFrame(JSON.stringify({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...usageField,
  }));
  const frames: string[] = [];
  if (reply.kind === 'text') {
    frames.push(chunk({ role: 'assistant', content: '', refusal: null }, null));
    for (const piece of splitTokens(reply.text)) frames.push(chunk({ content: piece }, null));
  } else {
    toolCallsOf(ctx, reply).forEach((call, index) => {
      const head = { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } };
      frames.push(chunk(index === 0 ? { role: 'assistant', content: null, tool_calls: [head], refusal: null } : { tool_calls: [head] }, null));
      for (const arguments_ of splitEvenly(call.function.arguments, 3)) frames.push(chunk({ tool_calls: [{ index, function: { arguments: arguments_ } }] }, null));
    });
  }
  const endContent = frames.length;
  frames.push(chunk({}, finishOf(reply)));
  if (includeUsage) {
    frames.push(sseFrame(JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })));
  }
  frames.push(sseFrame('[DONE]'));
  const error = { error: { message: 'simulated mid-stream failure', type: 'server_error', param: null, code: null } };
  return { frames, firstContent: 1, endContent, errorFrame: () => sseFrame(JSON.stringify(error)) };
}
