// What the SDK tests of translated pairs share: the ledger record of a request, the upstream's own usage for what it was
// sent (the same body asked again whole, read by the upstream's codec), and the upstream's last request.
import type { CanonRequest, Codec } from '../../core/canonical.ts';
import type { Gateway } from '../../app/gateway.ts';
import type { RecordedRequest } from '../../simulator/server.ts';
import { codec as chat } from '../../adapters/openai-chat/codec/index.ts';
import { codec as responses } from '../../adapters/openai-responses/codec/index.ts';
import { codec as anthropic } from '../../adapters/anthropic-messages/codec/index.ts';
import { codec as gemini } from '../../adapters/gemini/codec/index.ts';
import type { UpstreamFormat } from './bridge-config.ts';

const CODECS: Record<UpstreamFormat, Codec> = { 'openai-chat': chat, 'openai-responses': responses, 'anthropic-messages': anthropic, gemini };

/** A 1×1 PNG, as the image input of every pair. */
export const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNk+A8AAQUBAScY42YAAAAASUVORK5CYII=';

/** A function tool every client declares, in the canonical spelling; the simulator calls the first declared tool. */
export const WEATHER = { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

export const lastRequest = (gw: Gateway, up: UpstreamFormat): RecordedRequest => gw.simulators[`sim-${up}`].requests.at(-1)!;
export const lastJson = (gw: Gateway, up: UpstreamFormat): Record<string, any> => JSON.parse(lastRequest(gw, up).body);

/** The ledger record of one request (by the gateway's request id). */
export async function ledgerRecord(gw: Gateway, up: UpstreamFormat, requestId: string): Promise<Record<string, any>> {
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${gw.url}/admin/usage?key=k-${up}&limit=200`, { headers: { authorization: 'Bearer admin-secret-token-0123456789abcdef' } });
    const found = ((await res.json()) as { records: Record<string, any>[] }).records.find((r) => r.request_id === requestId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no usage record ${requestId}`);
}

/** The newest ledger record of a group's key. */
export async function newestRecord(gw: Gateway, up: UpstreamFormat): Promise<Record<string, any>> {
  await new Promise((r) => setTimeout(r, 30));
  const res = await fetch(`${gw.url}/admin/usage?key=k-${up}&limit=1`, { headers: { authorization: 'Bearer admin-secret-token-0123456789abcdef' } });
  return ((await res.json()) as { records: Record<string, any>[] }).records[0];
}

/** The upstream's own usage for a request it got (default: the last): the same body asked again whole, read by its codec. */
export async function upstreamUsage(gw: Gateway, up: UpstreamFormat, r: RecordedRequest = lastRequest(gw, up)) {
  const body = JSON.parse(r.body) as Record<string, unknown>;
  delete body.stream;
  delete body.stream_options;
  const path = r.path.replace(':streamGenerateContent?alt=sse', ':generateContent');
  const auth = Object.fromEntries(['authorization', 'x-api-key', 'x-goog-api-key', 'anthropic-version'].filter((h) => r.headers[h]).map((h) => [h, String(r.headers[h])]));
  const res = await fetch(gw.simulators[`sim-${up}`].url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body) });
  const request: CanonRequest = { operation: 'generate', model: 'm', stream: false, system: [], messages: [], tools: [], extras: {} };
  return CODECS[up].decodeResponse(await res.json(), { request, clientModel: 'm', defaults: { maxOutputTokens: 100 } }).usage;
}

/** Where each upstream format puts an image the client sent as base64, read from the upstream's body as text. */
export const IMAGE_IN_UPSTREAM: Record<UpstreamFormat, RegExp> = {
  'openai-chat': /"image_url":\{"url":"data:image\/png;base64,iVBOR/,
  'openai-responses': /"input_image".*"image_url":"data:image\/png;base64,iVBOR/,
  'anthropic-messages': /"type":"image","source":\{"type":"base64","media_type":"image\/png","data":"iVBOR/,
  gemini: /"inlineData":\{"mimeType":"image\/png","data":"iVBOR/,
};

/** Where each upstream format puts the system prompt. */
export const SYSTEM_IN_UPSTREAM: Record<UpstreamFormat, (body: Record<string, any>) => string> = {
  'openai-chat': (b) => b.messages.filter((m: any) => m.role === 'system' || m.role === 'developer').map((m: any) => JSON.stringify(m.content)).join(''),
  'openai-responses': (b) => JSON.stringify(b.instructions ?? b.input.filter((i: any) => i.role === 'system' || i.role === 'developer')),
  'anthropic-messages': (b) => JSON.stringify(b.system),
  gemini: (b) => JSON.stringify(b.systemInstruction),
};

/** Where each upstream format asks for structured output. */
export const STRUCTURED_IN_UPSTREAM: Record<UpstreamFormat, (body: Record<string, any>) => boolean> = {
  'openai-chat': (b) => b.response_format?.type === 'json_schema',
  'openai-responses': (b) => b.text?.format?.type === 'json_schema',
  'anthropic-messages': (b) => b.tool_choice?.type === 'tool' || b.output_format !== undefined || b.output_config !== undefined,
  gemini: (b) => b.generationConfig?.responseMimeType === 'application/json' && b.generationConfig?.responseJsonSchema !== undefined,
};
