// Canonical turns → the `input` items an OpenAI upstream takes: messages, function_call / custom_tool_call items, their
// outputs (text only: images of a result move to a user message right after), and OpenAI's own reasoning replayed.
import type { CanonBlock, CanonMessage, FileBlock, ImageBlock, TextBlock, ToolResultBlock } from '../../../core/canonical.ts';
import { GatewayError } from '../../../core/errors.ts';
import { toDataUrl as dataUrl } from '../../shared/data-url.ts';
import { fitName, OPENAI_NAMES } from '../../shared/tool-names.ts';
import { upstreamReasoningItem } from './reasoning.ts';
import { FORMAT } from './tables.ts';
import type { Obj } from './read.ts';

/** The marker of a failed call's output: Responses has no is_error field (docs/translation.md, Turns). */
export const TOOL_ERROR_PREFIX = '[tool error] ';

export function encodeInput(messages: CanonMessage[]): Obj[] {
  const items: Obj[] = [];
  // A result answers a custom (freeform) call with custom_tool_call_output; calls always come before their results.
  const customCalls = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') items.push(...assistantItems(message.content, customCalls));
    else if (message.role === 'user') items.push(...userItems(message.content, customCalls));
    else {
      const parts = message.content.flatMap(inputPart);
      if (parts.length > 0) items.push({ role: 'developer', content: parts });
    }
  }
  return items;
}

function assistantItems(blocks: CanonBlock[], customCalls: Set<string>): Obj[] {
  const items: Obj[] = [];
  let text: Obj[] | undefined; // the output_text parts of the message item being filled
  for (const block of blocks) {
    if (block.type === 'text') {
      if (!text) items.push({ role: 'assistant', content: (text = []) });
      text.push({ type: 'output_text', text: block.text });
      continue;
    }
    text = undefined;
    if (block.type === 'tool_call') {
      const name = fitName(block.name, OPENAI_NAMES);
      if (block.custom) customCalls.add(block.id);
      items.push(block.custom
        ? { type: 'custom_tool_call', call_id: block.id, name, input: block.arguments }
        : { type: 'function_call', call_id: block.id, name, arguments: block.arguments === '' ? '{}' : block.arguments });
    } else if (block.type === 'reasoning') {
      const item = upstreamReasoningItem(block);
      if (item) items.push(item);
    }
    // Images an assistant turn holds (a model's generated picture) have no place in an OpenAI input turn.
  }
  return items;
}

function userItems(blocks: CanonBlock[], customCalls: Set<string>): Obj[] {
  const outputs: Obj[] = [];
  const moved: Obj[] = []; // images and files of tool results, which function_call_output cannot carry
  const parts: Obj[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_result') {
      outputs.push(resultItem(block, customCalls.has(block.callId)));
      moved.push(...block.content.filter((b) => b.type !== 'text').flatMap(inputPart));
    } else parts.push(...inputPart(block));
  }
  const rest = [...moved, ...parts];
  return rest.length > 0 ? [...outputs, { role: 'user', content: rest }] : outputs;
}

function resultItem(result: ToolResultBlock, custom: boolean): Obj {
  const text = result.content.filter((b): b is TextBlock => b.type === 'text').map((b) => b.text).join('\n');
  return { type: custom ? 'custom_tool_call_output' : 'function_call_output', call_id: result.callId, output: result.isError ? `${TOOL_ERROR_PREFIX}${text}` : text };
}

/** A user-side content block as an input part; blocks that have no input form (calls, reasoning) give none. */
function inputPart(block: CanonBlock): Obj[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'input_text', text: block.text }];
    case 'image':
      return [{ type: 'input_image', ...imageRef(block), detail: block.detail ?? 'auto' }];
    case 'file':
      return [{ type: 'input_file', ...fileRef(block) }];
    default:
      return [];
  }
}

const foreignFile = (format: string) =>
  new GatewayError(400, 'unsupported_parameter', `A file uploaded to ${format} cannot be read by this model's provider; send the file's contents instead.`, { param: 'input' });

function imageRef(block: ImageBlock): Obj {
  const source = block.source;
  if (source.kind === 'base64') return { image_url: dataUrl(source.mediaType, source.data) };
  if (source.kind === 'url') return { image_url: source.url };
  if (source.format !== FORMAT) throw foreignFile(source.format);
  return { file_id: source.id };
}

function fileRef(block: FileBlock): Obj {
  const source = block.source;
  if (source.kind === 'base64') {
    const filename = block.filename ?? `file.${source.mediaType.split('/')[1]?.replace(/[^a-z0-9]/gi, '') || 'bin'}`;
    return { filename, file_data: dataUrl(source.mediaType, source.data) };
  }
  if (source.kind === 'url') return { file_url: source.url };
  if (source.format !== FORMAT) throw foreignFile(source.format);
  return { file_id: source.id };
}
