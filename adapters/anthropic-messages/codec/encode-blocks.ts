// Canonical blocks → Anthropic content blocks: an answer's blocks for a client (foreign signatures wrapped), and a
// conversation's blocks for an upstream (only Anthropic's own signatures replayed, ids and names fitted).
import type { CanonBlock, FileBlock, MediaSource, ToolCallBlock } from '../../../core/canonical.ts';
import { signedFor, wrapSigned } from '../../shared/signatures.ts';
import { parseObject } from '../../shared/stream-json.ts';
import { ANTHROPIC_NAMES, fitName } from '../../shared/tool-names.ts';
import { cacheControl } from './cache.ts';
import { type Obj, untranslatable } from './check.ts';
import { FORMAT } from './tables.ts';
import { fitToolId } from './tools.ts';

/**
 * A call's `input` object. A freeform tool's raw text is `{input}` (tools.ts CUSTOM_INPUT_SCHEMA); arguments that are not
 * a JSON object (a model's malformed output) become `{}` (docs/wire-formats.md#messages-and-contents), so the call itself still gets through.
 */
export function toolInput(call: ToolCallBlock): Obj {
  if (call.custom) return { input: call.arguments };
  return parseObject(call.arguments) ?? {};
}

// ---- client side: an assistant Message's content ----

/** One answer block as Anthropic returns it; undefined for what an assistant Message cannot hold (images, files). */
export function clientBlock(block: CanonBlock): Obj | undefined {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_call':
      return { type: 'tool_use', id: block.id, name: block.name, input: toolInput(block) };
    case 'reasoning':
      if (block.redacted) return { type: 'redacted_thinking', data: wrapSigned(block.redacted, FORMAT) };
      if (block.text === '' && !block.signature) return undefined;
      return { type: 'thinking', thinking: block.text, signature: block.signature ? wrapSigned(block.signature, FORMAT) : '' };
    default:
      return undefined;
  }
}

// ---- upstream side: a conversation's blocks ----

/** One block for an Anthropic upstream, or undefined when it has nothing to send (empty text, another format's reasoning). */
export function upstreamBlock(block: CanonBlock, param: string): Obj | undefined {
  switch (block.type) {
    case 'text':
      // The API refuses empty text blocks.
      return block.text === '' ? undefined : { type: 'text', text: block.text, ...cacheControl(block.cache) };
    case 'image':
      return { type: 'image', source: source(block.source, param), ...cacheControl(block.cache) };
    case 'file':
      return fileBlock(block, param);
    case 'tool_call':
      return {
        type: 'tool_use', id: fitToolId(block.id), name: fitName(block.name, ANTHROPIC_NAMES), input: toolInput(block),
        ...cacheControl(block.cache),
      };
    case 'tool_result': {
      const content = block.content.map((b, i) => upstreamBlock(b, `${param}.content.${i}`)).filter((b) => b !== undefined);
      return {
        type: 'tool_result', tool_use_id: fitToolId(block.callId),
        ...(content.length ? { content } : {}),
        ...(block.isError ? { is_error: true } : {}),
        ...cacheControl(block.cache),
      };
    }
    case 'reasoning': {
      // Only thinking this API made can be replayed; it is checked byte for byte against its signature.
      const redacted = signedFor(block.redacted, FORMAT);
      if (redacted !== undefined) return { type: 'redacted_thinking', data: redacted };
      const signature = signedFor(block.signature, FORMAT);
      return signature === undefined ? undefined : { type: 'thinking', thinking: block.text, signature };
    }
  }
}

function source(media: MediaSource, param: string): Obj {
  switch (media.kind) {
    case 'base64':
      return { type: 'base64', media_type: media.mediaType, data: media.data };
    case 'url':
      return { type: 'url', url: media.url };
    case 'file':
      if (media.format === FORMAT) return { type: 'file', file_id: media.id };
      throw untranslatable(`${param}: a file id of another provider (${media.format}) cannot be sent to this group's upstream; send the bytes instead`, param);
  }
}

/** Documents Anthropic takes: PDF (bytes, url or file id) and plain text; an image sent as a file is an image. */
function fileBlock(block: FileBlock, param: string): Obj {
  const media = block.source;
  const common = { ...(block.filename ? { title: block.filename } : {}), ...cacheControl(block.cache) };
  if (media.kind === 'base64') {
    if (media.mediaType.startsWith('image/')) return { type: 'image', source: source(media, param), ...cacheControl(block.cache) };
    if (media.mediaType.startsWith('text/')) {
      return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(media.data, 'base64').toString('utf8') }, ...common };
    }
    if (media.mediaType !== 'application/pdf') {
      throw untranslatable(`${param}: this group's upstream takes PDF and plain-text documents, not ${media.mediaType}`, param);
    }
  }
  return { type: 'document', source: source(media, param), ...common };
}
