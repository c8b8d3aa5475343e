// Raw HTTP clients of the four formats for the bridge's end-to-end tests: the request each sends, and how its answer's
// text, stream terminal and error envelope read. (The SDK tests drive the official SDKs; these see the bytes.)
import type { UpstreamFormat } from './bridge-config.ts';
import { KEYS, MODELS } from './bridge-config.ts';

export type ClientFormat = UpstreamFormat;

export interface Sent { status: number; text: string; headers: Headers }

const PATHS: Record<ClientFormat, (stream: boolean, model: string) => string> = {
  'openai-chat': () => '/v1/chat/completions',
  'openai-responses': () => '/v1/responses',
  'anthropic-messages': () => '/v1/messages',
  gemini: (stream, model) => `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
};

const COUNT_PATHS: Partial<Record<ClientFormat, (model: string) => string>> = {
  'openai-responses': () => '/v1/responses/input_tokens',
  'anthropic-messages': () => '/v1/messages/count_tokens',
  gemini: (model) => `/v1beta/models/${model}:countTokens`,
};

/** A one-turn request with a system prompt, in the client's format. */
export function textBody(client: ClientFormat, prompt: string, stream: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const model = MODELS[client];
  switch (client) {
    case 'openai-chat':
      return { model, stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: prompt }], ...extra };
    case 'openai-responses':
      return { model, stream, instructions: 'Be brief.', input: prompt, ...extra };
    case 'anthropic-messages':
      return { model, stream, max_tokens: 256, system: 'Be brief.', messages: [{ role: 'user', content: prompt }], ...extra };
    case 'gemini':
      return { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: prompt }] }], ...extra };
  }
}

/** The count request of a client format (chat has none). */
export function countBody(client: ClientFormat, prompt: string): Record<string, unknown> {
  const body = textBody(client, prompt, false);
  delete body.stream;
  if (client === 'anthropic-messages') delete body.max_tokens;
  return body;
}

/** Send a request of `client` format with the key of the group on `upstream`. */
export async function send(base: string, client: ClientFormat, upstream: UpstreamFormat, body: Record<string, unknown>,
  opts: { stream?: boolean; count?: boolean; headers?: Record<string, string> } = {}): Promise<Sent> {
  const model = MODELS[client];
  const path = opts.count ? COUNT_PATHS[client]!(model) : PATHS[client](opts.stream === true, model);
  const key = KEYS[upstream];
  const auth: Record<string, string> = client === 'anthropic-messages' ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' }
    : client === 'gemini' ? { 'x-goog-api-key': key } : { authorization: `Bearer ${key}` };
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...auth, ...opts.headers }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

type Obj = Record<string, any>;

/** The answer text of a whole answer. */
export function wholeText(client: ClientFormat, json: Obj): string {
  switch (client) {
    case 'openai-chat': return json.choices[0].message.content ?? '';
    case 'openai-responses': return json.output.filter((i: Obj) => i.type === 'message').flatMap((i: Obj) => i.content).map((c: Obj) => c.text).join('');
    case 'anthropic-messages': return json.content.filter((b: Obj) => b.type === 'text').map((b: Obj) => b.text).join('');
    case 'gemini': return json.candidates[0].content.parts.filter((p: Obj) => p.text !== undefined && !p.thought).map((p: Obj) => p.text).join('');
  }
}

/** The data payloads of an SSE body, parsed ([DONE] kept as the string). */
export function sseData(text: string): (Obj | '[DONE]')[] {
  return text.replace(/\r\n/g, '\n').split('\n\n').map((f) => f.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n'))
    .filter((d) => d !== '').map((d) => (d === '[DONE]' ? '[DONE]' : JSON.parse(d)));
}

/** A stream's answer text, whether it ended with the format's clean terminal, and whether it carried an error event. */
export function streamRead(client: ClientFormat, text: string): { text: string; terminal: boolean; error: boolean } {
  const data = sseData(text);
  const objs = data.filter((d): d is Obj => d !== '[DONE]');
  switch (client) {
    case 'openai-chat':
      return {
        text: objs.map((o) => o.choices?.[0]?.delta?.content ?? '').join(''),
        terminal: data.at(-1) === '[DONE]' && objs.some((o) => o.choices?.[0]?.finish_reason),
        error: objs.some((o) => o.error),
      };
    case 'openai-responses':
      return {
        text: objs.filter((o) => o.type === 'response.output_text.delta').map((o) => o.delta).join(''),
        terminal: objs.at(-1)?.type === 'response.completed' || objs.at(-1)?.type === 'response.incomplete',
        error: objs.some((o) => o.type === 'response.failed' || o.type === 'error'),
      };
    case 'anthropic-messages':
      return {
        text: objs.filter((o) => o.type === 'content_block_delta' && o.delta.type === 'text_delta').map((o) => o.delta.text).join(''),
        terminal: objs.at(-1)?.type === 'message_stop',
        error: objs.some((o) => o.type === 'error'),
      };
    case 'gemini':
      return {
        text: objs.flatMap((o) => o.candidates?.[0]?.content?.parts ?? []).filter((p: Obj) => p.text !== undefined && !p.thought).map((p: Obj) => p.text).join(''),
        terminal: objs.some((o) => o.candidates?.[0]?.finishReason) && !objs.some((o) => o.error),
        error: objs.some((o) => o.error),
      };
  }
}

/** The error type an envelope names, per format (chat/Responses error.type, Anthropic error.type, Gemini error.status). */
export function errorType(client: ClientFormat, json: Obj): string | undefined {
  if (client === 'anthropic-messages') return json.type === 'error' ? json.error?.type : undefined;
  if (client === 'gemini') return json.error?.status;
  return json.error?.type;
}
