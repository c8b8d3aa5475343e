// A Gemini client's request → canonical: the model from the path, stream by method (streamGenerateContent), the client's
// stream framing from ?alt=sse, countTokens in both its forms, and camelCase or snake_case field names alike.
import type { CanonRequest, Operation, TextBlock } from '../../../core/canonical.ts';
import { decodeContents } from './decode-contents.ts';
import { decodeGeneration, decodeToolConfig, decodeTools } from './decode-config.ts';
import { field, invalid, isObj, type Obj, optList, optObj, optStr, untranslatable } from './read.ts';
import { FORMAT } from './tables.ts';

/** The client's own details, read back by this codec's encoders: `sse` picks the stream framing. */
export interface GeminiExtras { sse: boolean; safetySettings?: unknown; labels?: unknown }

export function decodeRequest(body: Record<string, unknown>, op: Operation, ctx: { model: string; path: string; query: string }): CanonRequest {
  const request = op === 'count_tokens' ? countedRequest(body) : { value: body, param: '' };
  const g = request.value;
  const at = (name: string) => (request.param === '' ? name : `${request.param}.${name}`);
  if (field(g, 'cachedContent') !== undefined) {
    throw untranslatable('cachedContent names a cache on Google\'s servers and cannot be used with this model', at('cachedContent'));
  }
  const contents = optList(field(g, 'contents'), at('contents')) ?? [];
  if (contents.length === 0) throw invalid('contents is not specified', at('contents'));
  const { choice, allowed } = decodeToolConfig(field(g, 'toolConfig'), at('toolConfig'));
  const tools = decodeTools(field(g, 'tools'), at('tools'));
  const extras: GeminiExtras = {
    sse: new URLSearchParams(ctx.query).get('alt') === 'sse',
    ...(field(g, 'safetySettings') !== undefined ? { safetySettings: field(g, 'safetySettings') } : {}),
    ...(field(g, 'labels') !== undefined ? { labels: field(g, 'labels') } : {}),
  };
  return {
    operation: op,
    model: ctx.model,
    stream: op === 'generate' && /(?::|%3A)streamGenerateContent$/i.test(ctx.path.split('?')[0]),
    system: systemOf(field(g, 'systemInstruction'), at('systemInstruction')),
    messages: decodeContents(contents, at('contents')),
    tools: allowed ? tools.filter((t) => allowed.includes(t.name)) : tools,
    ...(choice ? { toolChoice: choice } : {}),
    ...decodeGeneration(field(g, 'generationConfig'), at('generationConfig')),
    extras: { [FORMAT]: { ...extras } },
  };
}

/** countTokens takes {contents, …} or {generateContentRequest: {…}}, never both (docs/wire-formats.md#gemini-count). */
function countedRequest(body: Obj): { value: Obj; param: string } {
  const inner = optObj(field(body, 'generateContentRequest'), 'generateContentRequest');
  if (!inner) return { value: body, param: '' };
  if (field(body, 'contents') !== undefined) throw invalid('give contents or generateContentRequest, not both', 'contents');
  return { value: inner, param: 'generateContentRequest' };
}

/** systemInstruction: a Content whose text parts are the system prompt (its role, if any, is ignored, as Google does). */
function systemOf(value: unknown, param: string): TextBlock[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return value === '' ? [] : [{ type: 'text', text: value }];
  const content = optObj(value, param) as Obj;
  return (optList(field(content, 'parts'), `${param}.parts`) ?? []).flatMap((part, i): TextBlock[] => {
    const text = isObj(part) ? optStr(field(part, 'text'), `${param}.parts[${i}].text`) : undefined;
    if (text === undefined) throw invalid('the system instruction takes text parts only', `${param}.parts[${i}]`);
    return text === '' ? [] : [{ type: 'text', text }];
  });
}
