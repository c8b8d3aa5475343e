// Canonical system prompt and turns → chat messages for a chat upstream. Tool results become one `tool` message per call
// right after the assistant turn (their images and files, which a tool message cannot carry, follow in a user message);
// mid-conversation system messages stay in place; reasoning and every signature are dropped (chat carries none).
import type { CanonMessage, CanonRequest, FileBlock, ImageBlock, TextBlock, ToolCallBlock, ToolResultBlock } from '../../../core/canonical.ts';
import { GatewayError } from '../../../core/errors.ts';
import { toDataUrl } from '../../shared/data-url.ts';
import { fitName, OPENAI_NAMES } from '../../shared/tool-names.ts';
import type { Obj } from './checks.ts';
import { chatToolCall } from './encode-response.ts';
import { TOOL_ERROR_PREFIX } from './tables.ts';

/** OpenAI file ids are one store for chat and Responses: either format's id is good here. */
const OPENAI_FILE_FORMATS = new Set(['openai-chat', 'openai-responses']);

const refuse = (message: string) => new GatewayError(400, 'unsupported_value', message, { param: 'messages' });

const joined = (blocks: TextBlock[], separator: string): string => blocks.map((b) => b.text).join(separator);

function imagePart(block: ImageBlock): Obj {
  const { source } = block;
  if (source.kind === 'file') throw refuse('An image given as a file id of another provider cannot be sent to this group\'s upstream.');
  const url = source.kind === 'base64' ? toDataUrl(source.mediaType, source.data) : source.url;
  return { type: 'image_url', image_url: { url, ...(block.detail ? { detail: block.detail } : {}) } };
}

function filePart(block: FileBlock): Obj {
  const { source } = block;
  if (source.kind === 'file' && OPENAI_FILE_FORMATS.has(source.format)) return { type: 'file', file: { file_id: source.id } };
  if (source.kind !== 'base64') throw refuse('This group\'s upstream takes files only inline (base64) or as its own file ids, not by URL.');
  const filename = block.filename ?? (source.mediaType === 'application/pdf' ? 'document.pdf' : 'document');
  return { type: 'file', file: { filename, file_data: toDataUrl(source.mediaType, source.data) } };
}

const mediaPart = (block: ImageBlock | FileBlock): Obj => (block.type === 'image' ? imagePart(block) : filePart(block));

/** A user message's content: a plain string when it is one text, else parts. */
function userContent(parts: Obj[]): string | Obj[] {
  return parts.length === 1 && parts[0].type === 'text' ? parts[0].text as string : parts;
}

function toolMessage(result: ToolResultBlock): Obj {
  const texts = result.content.filter((b): b is TextBlock => b.type === 'text');
  const content = joined(texts, '\n');
  return { role: 'tool', tool_call_id: result.callId, content: result.isError ? `${TOOL_ERROR_PREFIX}${content}` : content };
}

/** A user turn: its tool results first (a tool message per call), then its own content and the results' media. */
function userMessages(message: CanonMessage): Obj[] {
  const out: Obj[] = [];
  const parts: Obj[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_result') continue;
    out.push(toolMessage(block));
    const media = block.content.filter((b): b is ImageBlock | FileBlock => b.type !== 'text');
    if (media.length > 0) parts.push({ type: 'text', text: `Tool result ${block.callId} (continued):` }, ...media.map(mediaPart));
  }
  for (const block of message.content) {
    if (block.type === 'text') parts.push({ type: 'text', text: block.text });
    else if (block.type === 'image' || block.type === 'file') parts.push(mediaPart(block));
  }
  if (parts.length > 0) out.push({ role: 'user', content: userContent(parts) });
  return out;
}

function assistantMessage(message: CanonMessage): Obj[] {
  const texts = message.content.filter((b): b is TextBlock => b.type === 'text');
  const calls = message.content.filter((b): b is ToolCallBlock => b.type === 'tool_call');
  if (texts.length === 0 && calls.length === 0) return [];
  return [{
    role: 'assistant',
    content: texts.length > 0 ? joined(texts, '') : null,
    ...(calls.length > 0 ? { tool_calls: calls.map((call) => chatToolCall({ ...call, name: fitName(call.name, OPENAI_NAMES) })) } : {}),
  }];
}

function systemMessage(blocks: TextBlock[]): Obj[] {
  return blocks.length === 0 ? [] : [{ role: 'system', content: joined(blocks, '\n\n') }];
}

export function encodeMessages(req: CanonRequest): Obj[] {
  const out = systemMessage(req.system);
  for (const message of req.messages) {
    if (message.role === 'system') out.push(...systemMessage(message.content.filter((b): b is TextBlock => b.type === 'text')));
    else if (message.role === 'assistant') out.push(...assistantMessage(message));
    else out.push(...userMessages(message));
  }
  return out;
}
