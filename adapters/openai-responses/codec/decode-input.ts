// A client's `input` (a string, or message / function_call / function_call_output / custom tool / reasoning items) →
// the canonical system prompt and turns. Consecutive items of one role make one turn, as the canonical model has them.
import type { CanonBlock, CanonMessage, FileBlock, ImageBlock, MediaSource, TextBlock } from '../../../core/canonical.ts';
import { parseDataUrl, sourceOfUrl } from '../../shared/data-url.ts';
import { BUILTIN_ITEMS, FORMAT } from './tables.ts';
import { reasoningBlockOf } from './reasoning.ts';
import { invalid, isObj, objectAt, optArray, optString, reqString, unsupported, type Obj } from './read.ts';

type Role = CanonMessage['role'];
type Part = TextBlock | ImageBlock | FileBlock;

const ROLE: Record<string, Role> = { user: 'user', assistant: 'assistant', system: 'system', developer: 'system' };
const DETAILS = new Set(['low', 'high', 'auto']);

/** The turns being built: leading system text becomes the system prompt, later turns merge by role. */
class Turns {
  system: TextBlock[] = [];
  messages: CanonMessage[] = [];

  add(role: Role, blocks: CanonBlock[]): void {
    if (role === 'system' && this.messages.length === 0 && blocks.every((b) => b.type === 'text')) {
      this.system.push(...(blocks as TextBlock[]));
      return;
    }
    const last = this.messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else this.messages.push({ role, content: blocks });
  }
}

export function decodeInput(input: unknown, instructions: string | undefined): { system: TextBlock[]; messages: CanonMessage[] } {
  const turns = new Turns();
  if (instructions !== undefined && instructions !== '') turns.system.push({ type: 'text', text: instructions });
  if (typeof input === 'string') turns.add('user', [{ type: 'text', text: input }]);
  else if (input !== undefined && input !== null) {
    const items = optArray(input, 'input') ?? [];
    items.forEach((raw, i) => decodeItem(objectAt(raw, `input[${i}]`), `input[${i}]`, turns));
  }
  return { system: turns.system, messages: turns.messages };
}

function decodeItem(item: Obj, param: string, turns: Turns): void {
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  switch (type) {
    case 'message': {
      const role = ROLE[reqString(item.role, `${param}.role`)];
      if (!role) throw invalid(`${param}.role`, `Invalid value: '${String(item.role)}'. Supported values are: 'user', 'assistant', 'system' and 'developer'.`);
      turns.add(role, contentOf(item.content, `${param}.content`));
      return;
    }
    case 'function_call':
      turns.add('assistant', [{
        type: 'tool_call', id: reqString(item.call_id, `${param}.call_id`), name: reqString(item.name, `${param}.name`),
        arguments: optString(item.arguments, `${param}.arguments`) ?? '',
      }]);
      return;
    case 'custom_tool_call':
      turns.add('assistant', [{
        type: 'tool_call', id: reqString(item.call_id, `${param}.call_id`), name: reqString(item.name, `${param}.name`),
        arguments: optString(item.input, `${param}.input`) ?? '', custom: true,
      }]);
      return;
    case 'function_call_output':
    case 'custom_tool_call_output':
      turns.add('user', [{ type: 'tool_result', callId: reqString(item.call_id, `${param}.call_id`), content: contentOf(item.output, `${param}.output`) }]);
      return;
    case 'reasoning':
      turns.add('assistant', [reasoningBlockOf(item)]);
      return;
    case 'image_generation_call':
      return; // the model's own picture from an earlier turn: nothing another provider can take back as its output
    case 'item_reference':
      throw unsupported(param, 'item_reference items point at items stored by OpenAI; this model is served by another provider, so send the referenced items themselves.');
    default:
      if (typeof type === 'string' && BUILTIN_ITEMS.has(type)) {
        throw unsupported(`${param}.type`, `'${type}' items belong to an OpenAI built-in tool, which cannot run on this model's provider.`);
      }
      throw invalid(`${param}.type`, `Invalid value: '${String(type)}'. Unsupported input item type.`);
  }
}

/** Message content or a tool output: a string, or a list of content parts. */
function contentOf(content: unknown, param: string): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts = optArray(content, param);
  if (!parts) throw invalid(param, `Missing required parameter: '${param}'.`, 'missing_required_parameter');
  return parts.map((raw, j) => partOf(objectAt(raw, `${param}[${j}]`), `${param}[${j}]`));
}

function partOf(part: Obj, param: string): Part {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: reqString(part.text, `${param}.text`) };
    case 'refusal':
      return { type: 'text', text: reqString(part.refusal, `${param}.refusal`) };
    case 'input_image': {
      const detail = optString(part.detail, `${param}.detail`);
      if (detail !== undefined && !DETAILS.has(detail)) throw invalid(`${param}.detail`, `Invalid value: '${detail}'. Supported values are: 'low', 'high' and 'auto'.`);
      const source = imageSource(part, param);
      return { type: 'image', source, ...(detail ? { detail: detail as ImageBlock['detail'] } : {}) };
    }
    case 'input_file': {
      const filename = optString(part.filename, `${param}.filename`);
      return { type: 'file', source: fileSource(part, filename, param), ...(filename !== undefined ? { filename } : {}) };
    }
    default:
      throw unsupported(`${param}.type`, `Content parts of type '${String(part.type)}' cannot be translated for this model's provider.`);
  }
}

function imageSource(part: Obj, param: string): MediaSource {
  const url = optString(isObj(part.image_url) ? part.image_url.url : part.image_url, `${param}.image_url`);
  if (url !== undefined) return sourceOfUrl(url);
  const fileId = optString(part.file_id, `${param}.file_id`);
  if (fileId !== undefined) return { kind: 'file', format: FORMAT, id: fileId };
  throw invalid(param, `An input_image needs image_url or file_id (${param}).`, 'missing_required_parameter');
}

const MEDIA_BY_EXTENSION: Record<string, string> = {
  pdf: 'application/pdf', txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', json: 'application/json',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
};

function fileSource(part: Obj, filename: string | undefined, param: string): MediaSource {
  const data = optString(part.file_data, `${param}.file_data`);
  if (data !== undefined) {
    const inline = parseDataUrl(data);
    if (inline) return { kind: 'base64', ...inline };
    // Bare base64: the media type can only come from the file's name.
    const extension = filename?.split('.').pop()?.toLowerCase() ?? '';
    return { kind: 'base64', mediaType: MEDIA_BY_EXTENSION[extension] ?? 'application/pdf', data };
  }
  const fileId = optString(part.file_id, `${param}.file_id`);
  if (fileId !== undefined) return { kind: 'file', format: FORMAT, id: fileId };
  const url = optString(part.file_url, `${param}.file_url`);
  if (url !== undefined) return sourceOfUrl(url);
  throw invalid(param, `An input_file needs file_data, file_id or file_url (${param}).`, 'missing_required_parameter');
}
