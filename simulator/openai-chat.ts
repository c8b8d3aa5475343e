// OpenAI Chat Completions upstream: POST /v1/chat/completions, whole and streamed (wire-formats §1).
import type { SimContext } from './context.ts';
import { sendError } from './errors.ts';
import { planReply, type Reply, type ReplyInput } from './reply.ts';
import { sendJson, sendStream, sseFrame, type StreamPlan } from './respond.ts';
import { isObject } from './incoming.ts';
import { promptTokens, splitEvenly, splitTokens } from './tokens.ts';

interface ChatRequest {
  model: string;
  messages: Array<Record<string, unknown>>;
  stream?: unknown;
  stream_options?: { include_usage?: unknown };
  max_completion_tokens?: unknown;
  max_tokens?: unknown;
  tools?: unknown;
  tool_choice?: unknown;
}

interface Problem { message: string; param: string | null; code: string | null }

const finishReasons = { stop: 'stop', length: 'length', tool: 'tool_calls' } as const;

export async function chatCompletions(ctx: SimContext): Promise<void> {
  const request = validate(ctx);
  if ('message' in request) {
    sendError(ctx.res, ctx.dialect, { status: 400, ...request });
    return;
  }
  const reply = planReply(replyInput(request));
  const usage = usageOf(promptTokensOf(request.messages), reply.tokens);
  const base = {
    id: `chatcmpl-sim-${ctx.seq}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    service_tier: 'default',
    system_fingerprint: 'fp_simulator',
  };
  if (request.stream === true) {
    const includeUsage = request.stream_options?.include_usage === true;
    await sendStream(ctx, streamPlan(ctx, base, reply, usage, includeUsage));
    return;
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

function validate(ctx: SimContext): ChatRequest | Problem {
  if (!ctx.jsonOk) {
    return { message: 'We could not parse the JSON body of your request. (HINT: This likely means you aren\'t using your HTTP library correctly.)', param: null, code: null };
  }
  const body = ctx.json;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { message: 'The request body must be a JSON object.', param: null, code: 'invalid_type' };
  }
  const request = body as Record<string, unknown>;
  if (typeof request.model !== 'string' || request.model === '') {
    return { message: 'you must provide a model parameter', param: 'model', code: null };
  }
  if (request.messages === undefined) {
    return { message: "Missing required parameter: 'messages'.", param: 'messages', code: 'missing_required_parameter' };
  }
  const messages = request.messages;
  if (!Array.isArray(messages) || messages.length === 0 || !messages.every(isObject)) {
    return { message: "Invalid 'messages': expected a non-empty array of message objects.", param: 'messages', code: 'invalid_type' };
  }
  for (const name of ['max_completion_tokens', 'max_tokens']) {
    const cap = request[name];
    if (cap !== undefined && cap !== null && !(Number.isInteger(cap) && (cap as number) >= 1)) {
      return { message: `Invalid '${name}': expected an integer of at least 1.`, param: name, code: 'invalid_value' };
    }
  }
  return request as unknown as ChatRequest;
}

/** Text of a message's content: a string, or the text parts of an array. */
function textOf(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.filter((part) => isObject(part) && part.type === 'text' && typeof part.text === 'string').map((part) => part.text as string);
}

function promptTokensOf(messages: ChatRequest['messages']): number {
  return promptTokens(messages.map((m) => textOf(m.content)));
}

function replyInput(request: ChatRequest): ReplyInput {
  const last = request.messages[request.messages.length - 1];
  const lastUser = request.messages.findLast((m) => m.role === 'user');
  const cap = request.max_completion_tokens ?? request.max_tokens;
  return {
    lastUserText: lastUser ? textOf(lastUser.content).join(' ') : '',
    toolResult: last.role === 'tool' ? textOf(last.content).join(' ') : undefined,
    toolName: toolToCall(request),
    maxTokens: typeof cap === 'number' ? cap : undefined,
  };
}

/** The function tool the model should call, or undefined for a text reply. */
function toolToCall(request: ChatRequest): string | undefined {
  const tools = Array.isArray(request.tools) ? request.tools.filter(isObject) : [];
  const choice = request.tool_choice;
  if (tools.length === 0 || choice === 'none') return undefined;
  if (isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string') {
    return choice.function.name;
  }
  const first = tools.find((tool) => tool.type === 'function' && isObject(tool.function) && typeof tool.function.name === 'string');
  return first ? ((first.function as Record<string, unknown>).name as string) : undefined;
}

function usageOf(prompt: number, completion: number) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function finishOf(reply: Reply): string {
  return finishReasons[reply.kind === 'tool' ? 'tool' : reply.finish];
}

function toolCallId(ctx: SimContext): string {
  return `call_sim_${ctx.seq}`;
}

function messageOf(ctx: SimContext, reply: Reply) {
  if (reply.kind === 'text') return { role: 'assistant', content: reply.text, refusal: null, annotations: [] };
  const call = { id: toolCallId(ctx), type: 'function', function: { name: reply.name, arguments: reply.arguments } };
  return { role: 'assistant', content: null, tool_calls: [call], refusal: null, annotations: [] };
}

function streamPlan(ctx: SimContext, base: object, reply: Reply, usage: object, includeUsage: boolean): StreamPlan {
  // Without include_usage the chunks carry no usage key at all (wire-formats §1.4).
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
    const head = { index: 0, id: toolCallId(ctx), type: 'function', function: { name: reply.name, arguments: '' } };
    frames.push(chunk({ role: 'assistant', content: null, tool_calls: [head], refusal: null }, null));
    for (const piece of splitEvenly(reply.arguments, 3)) frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null));
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
