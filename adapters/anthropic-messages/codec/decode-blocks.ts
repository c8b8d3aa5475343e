// Anthropic content blocks → canonical blocks, for a client's messages (strict: what cannot be translated is refused) and
// for an upstream's answer (lenient: blocks the gateway never asked for are skipped).
import type { CanonBlock, FileBlock, ImageBlock, MediaSource, Signed, TextBlock } from '../../../core/canonical.ts';
import { unwrapSigned } from '../../shared/signatures.ts';
import { cacheHint } from './cache.ts';
import { invalid, list, type Obj, obj, optStr, str, untranslatable } from './check.ts';
import { FORMAT } from './tables.ts';

export interface DecodeSide {
  /** A signature or redacted-thinking value as this side holds it. */
  signed(raw: string): Signed;
  /** Client side: a block that cannot be translated is refused (400); upstream side: skipped. */
  strict: boolean;
}

/** A client echoes back what the gateway gave it: wrapped values name the format that made them (adapters/shared/signatures.ts). */
export const CLIENT_SIDE: DecodeSide = { signed: (raw) => unwrapSigned(raw, FORMAT), strict: true };
/** An Anthropic upstream's own signatures. */
export const UPSTREAM_SIDE: DecodeSide = { signed: (value) => ({ format: FORMAT, value }), strict: false };

// Blocks of Anthropic's server tools (search, code execution, MCP connector): only Anthropic can run or replay them.
const SERVER_BLOCKS = new Set([
  'server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result',
  'bash_code_execution_tool_result', 'text_editor_code_execution_tool_result', 'tool_search_tool_result',
  'mcp_tool_use', 'mcp_tool_result', 'container_upload',
]);

/** A message's content: a string is one text block (none when empty). */
export function decodeContent(content: unknown, param: string, side: DecodeSide): CanonBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return list(content, param).flatMap((block, i) => decodeBlock(block, `${param}.${i}`, side));
}

function decodeBlock(raw: unknown, param: string, side: DecodeSide): CanonBlock[] {
  const block = obj(raw, param);
  const type = block.type;
  switch (type) {
    case 'text':
      // citations are dropped: no other format has them.
      return [{ type: 'text', text: str(block.text, `${param}.text`), ...cacheHint(block) }];
    case 'image':
      return [{ type: 'image', source: mediaSource(block.source, `${param}.source`), ...cacheHint(block) }];
    case 'document':
      return documentBlocks(block, param, side);
    case 'tool_use': {
      const input = block.input === undefined ? {} : obj(block.input, `${param}.input`);
      return [{
        type: 'tool_call', id: str(block.id, `${param}.id`), name: str(block.name, `${param}.name`),
        arguments: JSON.stringify(input), ...cacheHint(block),
      }];
    }
    case 'tool_result':
      return [{
        type: 'tool_result',
        callId: str(block.tool_use_id, `${param}.tool_use_id`),
        content: resultContent(block.content, `${param}.content`, side),
        ...(block.is_error === true ? { isError: true } : {}),
        ...cacheHint(block),
      }];
    case 'thinking': {
      const signature = optStr(block.signature, `${param}.signature`);
      // An empty signature is none: a thinking block some other format made without one.
      return [{ type: 'reasoning', text: str(block.thinking, `${param}.thinking`), ...(signature ? { signature: side.signed(signature) } : {}) }];
    }
    case 'redacted_thinking':
      return [{ type: 'reasoning', text: '', redacted: side.signed(str(block.data, `${param}.data`)) }];
    default:
      if (!side.strict) return [];
      if (typeof type === 'string' && SERVER_BLOCKS.has(type)) {
        throw untranslatable(`${param}: "${type}" blocks belong to Anthropic's server tools, which this group's upstream cannot run or replay`, param);
      }
      throw untranslatable(`${param}: content blocks of type "${String(type)}" cannot be translated for this group's upstream`, `${param}.type`);
  }
}

function mediaSource(raw: unknown, param: string): MediaSource {
  const source = obj(raw, param);
  switch (source.type) {
    case 'base64':
      return { kind: 'base64', mediaType: str(source.media_type, `${param}.media_type`), data: str(source.data, `${param}.data`) };
    case 'url':
      return { kind: 'url', url: str(source.url, `${param}.url`) };
    case 'file':
      return { kind: 'file', format: FORMAT, id: str(source.file_id, `${param}.file_id`) };
    default:
      throw invalid(`unknown source type "${String(source.type)}"`, `${param}.type`);
  }
}

/** A document: a PDF (bytes, url or file id) is a file; a text document is its text; a content document its blocks. */
function documentBlocks(block: Obj, param: string, side: DecodeSide): CanonBlock[] {
  const source = obj(block.source, `${param}.source`);
  const title = optStr(block.title, `${param}.title`);
  if (source.type === 'text') return [{ type: 'text', text: str(source.data, `${param}.source.data`), ...cacheHint(block) }];
  if (source.type === 'content') return decodeContent(source.content, `${param}.source.content`, side);
  const file: FileBlock = { type: 'file', source: mediaSource(source, `${param}.source`), ...(title ? { filename: title } : {}), ...cacheHint(block) };
  return [file];
}

function resultContent(content: unknown, param: string, side: DecodeSide): (TextBlock | ImageBlock | FileBlock)[] {
  if (content === undefined || content === null) return [];
  return decodeContent(content, param, side).map((block, i) => {
    if (block.type === 'text' || block.type === 'image' || block.type === 'file') return block;
    throw invalid(`a tool result holds text, images and documents, not ${block.type} blocks`, `${param}.${i}`);
  });
}
