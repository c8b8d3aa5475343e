// OpenAI Responses upstream: create (whole and streamed), retrieve, input_tokens, and previous_response_id chains (docs/wire-formats.md#openai-responses).
//
// Token rule: a request's own input is promptTokens() over its turns (instructions, then each input item; message
// items count their input_text/output_text parts, function_call_output items their output, function_call and reasoning
// items nothing), i.e. Σ(3 + tokens) + 3. A request chained with previous_response_id adds the previous response's
// input_tokens + output_tokens, so a chain grows as the real context would. output_tokens is the reply's tokens plus,
// when `reasoning` asked for it (any effort but "none"), the reasoning's tokens, repeated in output_tokens_details.
//
// Requests are checked against strict/openai-responses.ts first. Reasoning answers with a reasoning item first: its
// summary when reasoning.summary is set, its encrypted_content (sealed with this dialect's key) when include asks.
import type { Route, SimContext } from './context.ts';
import { sendError } from './errors.ts';
import { isObject } from './incoming.ts';
import { type OutputItem, type ResponseState, streamPlan, usageOf } from './openai-responses-stream.ts';
import { callId, outputTokens, planReply, type Reply, type ReplyInput } from './reply.ts';
import { sendJson, sendStream } from './respond.ts';
import type { StoredResponse } from './response-store.ts';
import { seal } from './signatures.ts';
import { refuseResponses } from './strict/openai-responses.ts';
import { promptTokens } from './tokens.ts';

type Item = Record<string, unknown>;

interface ResponsesRequest {
  model?: unknown;
  input?: unknown;
  instructions?: unknown;
  stream?: unknown;
  stream_options?: unknown;
  max_output_tokens?: unknown;
  previous_response_id?: unknown;
  store?: unknown;
  tools?: unknown;
  tool_choice?: unknown;
  reasoning?: unknown;
  include?: unknown;
  [field: string]: unknown;
}

interface Problem { status: number; message: string; param: string | null; code: string | null }

export const responsesRoutes: Route[] = [
  { method: 'POST', path: '/v1/responses', dialect: 'openai', auth: true, handler: createResponse },
  { method: 'POST', path: '/v1/responses/input_tokens', dialect: 'openai', auth: true, handler: countInputTokens },
  { method: 'GET', path: /^\/v1\/responses\/([^/]+)$/, dialect: 'openai', auth: true, handler: retrieveResponse },
];

async function createResponse(ctx: SimContext): Promise<void> {
  const checked = check(ctx, true);
  if ('message' in checked) return sendError(ctx.res, ctx.dialect, checked);
  const { request, items, previous } = checked;
  const reply = planReply(replyInput(request, items));
  const inputTokens = inputTokensOf(request, items, previous);
  const usage = usageOf(inputTokens, outputTokens(reply), reply.reasoning?.tokens ?? 0);
  const snapshot = snapshotMaker(ctx, request);
  const output = outputItems(ctx, request, reply);
  const incomplete = reply.kind === 'text' && reply.finish === 'length';
  const final = snapshot({ status: incomplete ? 'incomplete' : 'completed', error: null, output: output.map((item) => item.final), usage });
  const stored = request.store !== false && !(request.stream === true && ctx.fault.midstream);
  // Stored before answering, so a client may chain onto it the moment it has read the reply.
  if (stored) ctx.state.responses.put(ctx.credential, { body: final, contextTokens: usage.total_tokens });
  if (request.stream !== true) return sendJson(ctx, 200, final);
  const options = isObject(request.stream_options) ? request.stream_options : {};
  await sendStream(ctx, streamPlan({ items: output, final, snapshot, inputTokens, obfuscate: options.include_obfuscation !== false }));
}

function countInputTokens(ctx: SimContext): void {
  const checked = check(ctx, false);
  if ('message' in checked) return sendError(ctx.res, ctx.dialect, checked);
  sendJson(ctx, 200, { object: 'response.input_tokens', input_tokens: inputTokensOf(checked.request, checked.items, checked.previous) });
}

function retrieveResponse(ctx: SimContext): void {
  const id = ctx.params[0];
  const stored = ctx.state.responses.get(ctx.credential, id);
  if (stored) return sendJson(ctx, 200, stored.body);
  sendError(ctx.res, ctx.dialect, { status: 404, message: `Response with id '${id}' not found.`, type: 'invalid_request_error', code: null });
}

function check(ctx: SimContext, needsModel: boolean): { request: ResponsesRequest; items: Item[]; previous?: StoredResponse } | Problem {
  if (!ctx.jsonOk || !isObject(ctx.json)) {
    return { status: 400, message: 'We could not parse the JSON body of your request. The body must be a JSON object.', param: null, code: null };
  }
  const request: ResponsesRequest = ctx.json;
  const refusal = refuseResponses({ body: request, needsModel });
  if (refusal) return { param: null, code: null, ...refusal };
  const items = itemsOf(request.input);
  const previousId = request.previous_response_id;
  if (previousId === undefined || previousId === null) return { request, items };
  // Ids are scoped to the credential that created them, as the real service scopes them to an account.
  const previous = typeof previousId === 'string' ? ctx.state.responses.get(ctx.credential, previousId) : undefined;
  if (!previous) {
    return { status: 400, message: `Previous response with id '${String(previousId)}' not found.`, param: 'previous_response_id', code: 'previous_response_not_found' };
  }
  return { request, items, previous };
}

function itemsOf(input: unknown): Item[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}

/** Text parts of a message's content, or of a function_call_output's output (a string or parts). */
function textsOf(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.filter((part) => isObject(part) && typeof part.text === 'string').map((part) => part.text as string);
}

function itemTexts(item: Item): string[] {
  if (item.type === 'function_call_output') return textsOf(item.output);
  return item.type === undefined || item.type === 'message' ? textsOf(item.content) : [];
}

function inputTokensOf(request: ResponsesRequest, items: Item[], previous: StoredResponse | undefined): number {
  const instructions = typeof request.instructions === 'string' && request.instructions !== '' ? [[request.instructions]] : [];
  return (previous?.contextTokens ?? 0) + promptTokens([...instructions, ...items.map(itemTexts)]);
}

/** Reasoning is asked for by a `reasoning` object whose effort is not "none". */
function reasoningOf(request: ResponsesRequest): Record<string, unknown> | undefined {
  return isObject(request.reasoning) && request.reasoning.effort !== 'none' ? request.reasoning : undefined;
}

function replyInput(request: ResponsesRequest, items: Item[]): ReplyInput {
  const last = items[items.length - 1];
  const lastUser = items.findLast((item) => item.role === 'user' && (item.type === undefined || item.type === 'message'));
  return {
    lastUserText: lastUser ? textsOf(lastUser.content).join(' ') : '',
    toolResult: last?.type === 'function_call_output' ? textsOf(last.output).join(' ') : undefined,
    toolNames: toolNames(request),
    parallel: request.parallel_tool_calls !== false,
    maxTokens: typeof request.max_output_tokens === 'number' ? request.max_output_tokens : undefined,
    reasoning: reasoningOf(request) !== undefined,
  };
}

/** The function tools the model may call (Responses tools are flat: {type:"function", name}); just the named one when tool_choice names one. */
function toolNames(request: ResponsesRequest): string[] {
  const tools = Array.isArray(request.tools) ? request.tools.filter(isObject) : [];
  const choice = request.tool_choice;
  if (tools.length === 0 || choice === 'none') return [];
  if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string') return [choice.name];
  return tools.filter((tool) => tool.type === 'function' && typeof tool.name === 'string').map((tool) => tool.name as string);
}

function outputItems(ctx: SimContext, request: ResponsesRequest, reply: Reply): OutputItem[] {
  const items: OutputItem[] = [];
  if (reply.reasoning) items.push(reasoningItem(ctx, request, reply.reasoning.text));
  if (reply.kind === 'tool') {
    reply.calls.forEach((call, i) => {
      const ids = { id: callId('fc', ctx.seq, i), type: 'function_call' };
      const head = { ...ids, status: 'in_progress', arguments: '', call_id: callId('call', ctx.seq, i), name: call.name };
      const final = { ...ids, status: 'completed', call_id: head.call_id, name: call.name, arguments: call.arguments };
      items.push({ kind: 'function_call', head, final, name: call.name, arguments: call.arguments });
    });
    return items;
  }
  const status = reply.finish === 'length' ? 'incomplete' : 'completed';
  const head = { id: `msg_sim_${ctx.seq}`, type: 'message', status: 'in_progress', role: 'assistant', content: [] };
  const final = { ...head, status, content: [{ type: 'output_text', text: reply.text, annotations: [], logprobs: [] }] };
  items.push({ kind: 'message', head, final, text: reply.text });
  return items;
}

/** The reasoning item: its summary only when reasoning.summary asks, its encrypted_content only when include asks. */
function reasoningItem(ctx: SimContext, request: ResponsesRequest, text: string): OutputItem {
  const asked = reasoningOf(request) ?? {};
  const summary = typeof asked.summary === 'string' ? text : undefined;
  const encrypted = Array.isArray(request.include) && request.include.includes('reasoning.encrypted_content');
  const head = { id: `rs_sim_${ctx.seq}`, type: 'reasoning', summary: [] };
  const final = {
    ...head,
    summary: summary === undefined ? [] : [{ type: 'summary_text', text: summary }],
    ...(encrypted ? { encrypted_content: seal('openai', text) } : {}),
  };
  return { kind: 'reasoning', head, final, summary };
}

/** Builds the response object at any stage, echoing the request's settings as the real service does. */
function snapshotMaker(ctx: SimContext, request: ResponsesRequest): (state: ResponseState) => Record<string, unknown> & { id: string; status: string } {
  const createdAt = Math.floor(Date.now() / 1000);
  return (state) => ({
    id: `resp_sim_${ctx.seq}`,
    object: 'response',
    created_at: createdAt,
    status: state.status,
    completed_at: state.status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    error: state.error,
    incomplete_details: state.status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: request.model,
    output: state.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: reasoningOf(request)?.effort ?? null, summary: reasoningOf(request)?.summary ?? null },
    store: request.store ?? true,
    temperature: request.temperature ?? 1.0,
    text: request.text ?? { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1.0,
    truncation: 'disabled',
    usage: state.usage,
    user: null,
    metadata: request.metadata ?? {},
  });
}
