// Gemini upstream: generateContent, streamGenerateContent (SSE and JSON array) and countTokens under /v1beta and /v1 (docs/wire-formats.md#gemini-endpoints).
//
// Token rule: promptTokenCount = promptTokens() over systemInstruction (when present) and each content, where a
// content counts its text parts and JSON.stringify(functionResponse.response) of its functionResponse parts
// (functionCall args and thought parts count nothing): Σ(3 + tokens) + 3. candidatesTokenCount is the reply's tokens;
// thoughtsTokenCount, present only when thinking was asked for, the thoughts' tokens, kept apart from the candidates;
// totalTokenCount = prompt + candidates + thoughts. countTokens answers {totalTokens} with the same prompt count.
//
// Requests are checked against strict/gemini.ts first. Thinking (thinkingConfig.includeThoughts, a non-zero
// thinkingBudget or a thinkingLevel) answers with a `thought: true` part when includeThoughts is set, and puts a
// thoughtSignature sealed with this dialect's key on the first answer part. Function calls carry no id (Gemini 2.5). A
// gemini-3* model signs the first function call of every answer with a signature minted for that call, and refuses a
// step of the turn in progress that comes back without one (strict/gemini.ts).
import type { Route, SimContext } from './context.ts';
import { errorBody, type ErrorSpec, sendError } from './errors.ts';
import { isObject } from './incoming.ts';
import { decodeSegment } from './models.ts';
import { planReply, type Reply, type ReplyInput } from './reply.ts';
import { sendJson, sendStream, type StreamPlan } from './respond.ts';
import { seal } from './signatures.ts';
import { callToken, field, type GeminiSubject, partsOf, refuseGemini, signsCalls } from './strict/gemini.ts';
import { promptTokens, splitTokens } from './tokens.ts';

type Content = Record<string, unknown>;
type Part = Record<string, unknown>;
type GeminiRequest = Record<string, unknown> & { contents: Content[] };

// The model is the last path segment up to the colon; the SDK's default API version v1 is served alike.
const methodPath = (method: string) => new RegExp(`^/v1(?:beta)?/models/([^/:]+):${method}$`);

export const geminiRoutes: Route[] = [
  { method: 'POST', path: methodPath('generateContent'), dialect: 'gemini', auth: true, handler: generateContent },
  { method: 'POST', path: methodPath('streamGenerateContent'), dialect: 'gemini', auth: true, handler: streamGenerateContent },
  { method: 'POST', path: methodPath('countTokens'), dialect: 'gemini', auth: true, handler: countTokens },
];

function generateContent(ctx: SimContext): void {
  const checked = read(ctx, 'generate');
  if ('refusal' in checked) return sendError(ctx.res, ctx.dialect, checked.refusal);
  const { request } = checked;
  const reply = planReply(replyInput(request));
  const parts = [...thoughtParts(request, reply), ...answerParts(reply, decodeSegment(ctx.params[0]))];
  sendJson(ctx, 200, chunk(ctx, parts, finishOf(reply), finalUsage(inputTokensOf(request), reply)));
}

async function streamGenerateContent(ctx: SimContext): Promise<void> {
  const checked = read(ctx, 'generate');
  if ('refusal' in checked) return sendError(ctx.res, ctx.dialect, checked.refusal);
  const { request } = checked;
  const reply = planReply(replyInput(request));
  const prompt = inputTokensOf(request);
  // Thoughts come first in a chunk of their own; text then arrives a token per chunk with provisional usage, function
  // calls whole in one chunk; the last chunk carries finishReason and the final usage.
  const answer = answerParts(reply, decodeSegment(ctx.params[0]));
  const answerChunks: Part[][] = reply.kind === 'text'
    ? splitTokens(reply.text).map((text, i) => [i === 0 ? { ...answer[0], text } : { text }])
    : [answer];
  const thoughts = thoughtParts(request, reply);
  const groups = thoughts.length > 0 ? [thoughts, ...answerChunks] : answerChunks;
  const chunks = groups.map((parts, i) => (i === groups.length - 1
    ? chunk(ctx, parts, finishOf(reply), finalUsage(prompt, reply))
    : chunk(ctx, parts, undefined, { promptTokenCount: prompt, totalTokenCount: prompt })));
  const error = errorBody('gemini', { status: 500, message: 'simulated mid-stream failure' });
  await sendStream(ctx, ctx.query.get('alt') === 'sse' ? ssePlan(chunks, error) : arrayPlan(chunks, error));
}

function countTokens(ctx: SimContext): void {
  const checked = read(ctx, 'countTokens');
  if ('refusal' in checked) return sendError(ctx.res, ctx.dialect, checked.refusal);
  const { request } = checked;
  sendJson(ctx, 200, { totalTokens: inputTokensOf(request) });
}

function read(ctx: SimContext, method: GeminiSubject['method']): { request: GeminiRequest } | { refusal: ErrorSpec } {
  const body = ctx.json;
  if (!ctx.jsonOk || !isObject(body)) return { refusal: { status: 400, message: 'Invalid JSON payload received. Expected an object.' } };
  // countTokens takes either bare contents or a whole generateContentRequest.
  const inner = method === 'countTokens' && isObject(body.generateContentRequest) ? body.generateContentRequest : body;
  const refusal = refuseGemini({ body, method, request: inner, model: decodeSegment(ctx.params[0]) });
  return refusal ? { refusal } : { request: inner as GeminiRequest };
}

/** Frames of `data: <one-line JSON>` and CRLF pairs only: Google's SDKs break on event:, comments and [DONE]. */
function ssePlan(chunks: unknown[], error: unknown): StreamPlan {
  const frame = (value: unknown) => `data: ${JSON.stringify(value)}\r\n\r\n`;
  return { frames: chunks.map(frame), firstContent: 0, endContent: chunks.length - 1, errorFrame: () => frame(error), contentType: 'text/event-stream' };
}

/** One pretty-printed JSON array written element by element, as Google streams without alt=sse. */
function arrayPlan(chunks: unknown[], error: unknown): StreamPlan {
  const element = (value: unknown, i: number) => (i === 0 ? '[' : '\r\n,\r\n') + JSON.stringify(value, null, 2);
  return {
    frames: [...chunks.map(element), '\r\n]'],
    firstContent: 0,
    endContent: chunks.length - 1,
    errorFrame: (at) => element(error, at) + '\r\n]',
    contentType: 'application/json',
  };
}

function chunk(ctx: SimContext, parts: unknown[], finishReason: string | undefined, usageMetadata: object) {
  return {
    candidates: [{ content: { parts, role: 'model' }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    usageMetadata,
    modelVersion: decodeSegment(ctx.params[0]),
    responseId: `sim-resp-${ctx.seq}`,
  };
}

function finalUsage(prompt: number, reply: Reply) {
  const thoughts = reply.reasoning?.tokens ?? 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: reply.tokens,
    ...(reply.reasoning ? { thoughtsTokenCount: thoughts } : {}),
    totalTokenCount: prompt + reply.tokens + thoughts,
  };
}

function thinkingConfigOf(request: GeminiRequest): Record<string, unknown> {
  const config = field(request, 'generationConfig');
  const thinking = isObject(config) ? field(config, 'thinkingConfig') : undefined;
  return isObject(thinking) ? thinking : {};
}

function asksForThinking(request: GeminiRequest): boolean {
  const thinking = thinkingConfigOf(request);
  const budget = field(thinking, 'thinkingBudget');
  return field(thinking, 'includeThoughts') === true || (typeof budget === 'number' && budget !== 0) || field(thinking, 'thinkingLevel') !== undefined;
}

/** The thought summary, shown only when includeThoughts asks for it. */
function thoughtParts(request: GeminiRequest, reply: Reply): Part[] {
  return reply.reasoning && field(thinkingConfigOf(request), 'includeThoughts') === true ? [{ text: reply.reasoning.text, thought: true }] : [];
}

/**
 * The answer's parts; after thinking, the first carries the thought signature. Gemini 3 signs the first function call
 * always, with a signature minted for that call (strict/gemini.ts checks it comes back on it).
 */
function answerParts(reply: Reply, model: string): Part[] {
  const parts: Part[] = reply.kind === 'text'
    ? [{ text: reply.text }]
    : reply.calls.map((call) => ({ functionCall: { name: call.name, args: JSON.parse(call.arguments) } }));
  if (reply.kind === 'tool' && signsCalls(model)) parts[0] = { ...parts[0], thoughtSignature: seal('gemini', callToken(parts[0].functionCall)) };
  else if (reply.reasoning) parts[0] = { ...parts[0], thoughtSignature: seal('gemini', reply.reasoning.text) };
  return parts;
}

/** Function calls still finish with STOP on Gemini; only a cut reply says MAX_TOKENS. */
function finishOf(reply: Reply): string {
  return reply.kind === 'text' && reply.finish === 'length' ? 'MAX_TOKENS' : 'STOP';
}

function textsOf(content: unknown, withResponses: boolean): string[] {
  return partsOf(content).flatMap((part): string[] => {
    if (typeof part.text === 'string') return part.thought === true ? [] : [part.text];
    const response = field(part, 'functionResponse');
    return withResponses && isObject(response) ? [JSON.stringify(response.response ?? {})] : [];
  });
}

function inputTokensOf(request: GeminiRequest): number {
  const system = textsOf(field(request, 'systemInstruction'), false);
  return promptTokens([...(system.length > 0 ? [system] : []), ...request.contents.map((c) => textsOf(c, true))]);
}

function replyInput(request: GeminiRequest): ReplyInput {
  const last = request.contents[request.contents.length - 1];
  const lastUser = request.contents.findLast((c) => c.role === undefined || c.role === 'user');
  const responses = partsOf(last).map((part) => field(part, 'functionResponse')).filter(isObject);
  const config = field(request, 'generationConfig');
  const cap = isObject(config) ? field(config, 'maxOutputTokens') : undefined;
  return {
    lastUserText: lastUser ? textsOf(lastUser, false).join(' ') : '',
    toolResult: responses.length > 0 ? responses.map((r) => JSON.stringify(r.response ?? {})).join(' ') : undefined,
    toolNames: toolNames(request),
    parallel: true,
    maxTokens: Number.isInteger(cap) && (cap as number) >= 1 ? (cap as number) : undefined,
    reasoning: asksForThinking(request),
  };
}

/** The declared functions (or the allowed ones), unless function calling is off. */
function toolNames(request: GeminiRequest): string[] {
  const tools = Array.isArray(request.tools) ? request.tools.filter(isObject) : [];
  const declared = tools.flatMap((tool) => {
    const list = field(tool, 'functionDeclarations');
    return Array.isArray(list) ? list.filter((d) => isObject(d) && typeof d.name === 'string').map((d) => d.name as string) : [];
  });
  const toolConfig = field(request, 'toolConfig');
  const calling = isObject(toolConfig) ? field(toolConfig, 'functionCallingConfig') : undefined;
  const config = isObject(calling) ? calling : {};
  if (declared.length === 0 || config.mode === 'NONE') return [];
  const allowed = field(config, 'allowedFunctionNames');
  return Array.isArray(allowed) && allowed.length > 0 ? allowed.filter((name): name is string => typeof name === 'string') : declared;
}
