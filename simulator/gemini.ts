// Gemini upstream: generateContent, streamGenerateContent (SSE and JSON array) and countTokens under /v1beta and /v1 (wire-formats §6).
//
// Token rule: promptTokenCount = promptTokens() over systemInstruction (when present) and each content, where a
// content counts its text parts and JSON.stringify(functionResponse.response) of its functionResponse parts
// (functionCall args count nothing): Σ(3 + tokens) + 3. candidatesTokenCount is the reply's tokens;
// totalTokenCount = prompt + candidates. countTokens answers {totalTokens} with the same prompt count.
import type { Route, SimContext } from './context.ts';
import { errorBody, type ErrorSpec, sendError } from './errors.ts';
import { isObject } from './incoming.ts';
import { decodeSegment } from './models.ts';
import { planReply, type Reply, type ReplyInput } from './reply.ts';
import { sendJson, sendStream, type StreamPlan } from './respond.ts';
import { promptTokens, splitTokens } from './tokens.ts';

type Content = Record<string, unknown>;

interface GeminiRequest {
  contents: Content[];
  systemInstruction?: unknown;
  tools?: unknown;
  toolConfig?: unknown;
  generationConfig?: unknown;
}

// The model is the last path segment up to the colon; the SDK's default API version v1 is served alike.
const methodPath = (method: string) => new RegExp(`^/v1(?:beta)?/models/([^/:]+):${method}$`);

export const geminiRoutes: Route[] = [
  { method: 'POST', path: methodPath('generateContent'), dialect: 'gemini', auth: true, handler: generateContent },
  { method: 'POST', path: methodPath('streamGenerateContent'), dialect: 'gemini', auth: true, handler: streamGenerateContent },
  { method: 'POST', path: methodPath('countTokens'), dialect: 'gemini', auth: true, handler: countTokens },
];

function generateContent(ctx: SimContext): void {
  const request = validate(ctx.json);
  if ('status' in request) return sendError(ctx.res, ctx.dialect, request);
  const reply = planReply(replyInput(request));
  const prompt = inputTokensOf(request);
  sendJson(ctx, 200, chunk(ctx, replyParts(reply), finishOf(reply), finalUsage(prompt, reply)));
}

async function streamGenerateContent(ctx: SimContext): Promise<void> {
  const request = validate(ctx.json);
  if ('status' in request) return sendError(ctx.res, ctx.dialect, request);
  const reply = planReply(replyInput(request));
  const prompt = inputTokensOf(request);
  // Text arrives a token per chunk with provisional usage; the last chunk carries finishReason and the final usage.
  const pieces = reply.kind === 'text' ? splitTokens(reply.text).map((text) => [{ text }]) : [replyParts(reply)];
  const chunks = pieces.map((parts, i) => (i === pieces.length - 1
    ? chunk(ctx, parts, finishOf(reply), finalUsage(prompt, reply))
    : chunk(ctx, parts, undefined, { promptTokenCount: prompt, totalTokenCount: prompt })));
  const error = errorBody('gemini', { status: 500, message: 'simulated mid-stream failure' });
  await sendStream(ctx, ctx.query.get('alt') === 'sse' ? ssePlan(chunks, error) : arrayPlan(chunks, error));
}

function countTokens(ctx: SimContext): void {
  const body = ctx.json;
  // countTokens takes either bare contents or a whole generateContentRequest.
  const request = validate(isObject(body) && isObject(body.generateContentRequest) ? body.generateContentRequest : body);
  if ('status' in request) return sendError(ctx.res, ctx.dialect, request);
  sendJson(ctx, 200, { totalTokens: inputTokensOf(request) });
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
  return { promptTokenCount: prompt, candidatesTokenCount: reply.tokens, totalTokenCount: prompt + reply.tokens };
}

function replyParts(reply: Reply): unknown[] {
  return reply.kind === 'text' ? [{ text: reply.text }] : [{ functionCall: { name: reply.name, args: JSON.parse(reply.arguments) } }];
}

/** Function calls still finish with STOP on Gemini; only a cut reply says MAX_TOKENS. */
function finishOf(reply: Reply): string {
  return reply.kind === 'text' && reply.finish === 'length' ? 'MAX_TOKENS' : 'STOP';
}

/** Proto-JSON accepts snake_case as well as camelCase field names; this reads either. */
function field(object: Record<string, unknown>, camel: string): unknown {
  return object[camel] ?? object[camel.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())];
}

function validate(body: unknown): GeminiRequest | ErrorSpec {
  if (!isObject(body)) return { status: 400, message: 'Invalid JSON payload received. Expected an object.' };
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0 || !contents.every(isObject)) {
    return { status: 400, message: '* GenerateContentRequest.contents: contents is not specified\n' };
  }
  return {
    contents,
    systemInstruction: field(body, 'systemInstruction'),
    tools: body.tools,
    toolConfig: field(body, 'toolConfig'),
    generationConfig: field(body, 'generationConfig'),
  };
}

function partsOf(content: unknown): Record<string, unknown>[] {
  if (typeof content === 'string') return [{ text: content }];
  return isObject(content) && Array.isArray(content.parts) ? content.parts.filter(isObject) : [];
}

function textsOf(content: unknown, withResponses: boolean): string[] {
  return partsOf(content).flatMap((part): string[] => {
    if (typeof part.text === 'string') return [part.text];
    const response = field(part, 'functionResponse');
    return withResponses && isObject(response) ? [JSON.stringify(response.response ?? {})] : [];
  });
}

function inputTokensOf(request: GeminiRequest): number {
  const system = textsOf(request.systemInstruction, false);
  return promptTokens([...(system.length > 0 ? [system] : []), ...request.contents.map((c) => textsOf(c, true))]);
}

function replyInput(request: GeminiRequest): ReplyInput {
  const last = request.contents[request.contents.length - 1];
  const lastUser = request.contents.findLast((c) => c.role === undefined || c.role === 'user');
  const responses = partsOf(last).map((part) => field(part, 'functionResponse')).filter(isObject);
  const config = isObject(request.generationConfig) ? request.generationConfig : {};
  const cap = field(config, 'maxOutputTokens');
  return {
    lastUserText: lastUser ? textsOf(lastUser, false).join(' ') : '',
    toolResult: responses.length > 0 ? responses.map((r) => JSON.stringify(r.response ?? {})).join(' ') : undefined,
    toolName: toolToCall(request),
    maxTokens: Number.isInteger(cap) && (cap as number) >= 1 ? (cap as number) : undefined,
  };
}

/** The first declared function (or the first allowed one), unless function calling is off. */
function toolToCall(request: GeminiRequest): string | undefined {
  const tools = Array.isArray(request.tools) ? request.tools.filter(isObject) : [];
  const declarations = tools.flatMap((tool) => {
    const list = field(tool, 'functionDeclarations');
    return Array.isArray(list) ? list.filter((d) => isObject(d) && typeof d.name === 'string') : [];
  });
  const toolConfig = isObject(request.toolConfig) ? request.toolConfig : {};
  const calling = field(toolConfig, 'functionCallingConfig');
  const config = isObject(calling) ? calling : {};
  if (declarations.length === 0 || config.mode === 'NONE') return undefined;
  const allowed = field(config, 'allowedFunctionNames');
  if (Array.isArray(allowed) && typeof allowed[0] === 'string') return allowed[0];
  return declarations[0].name as string;
}
