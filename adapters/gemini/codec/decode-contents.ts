// A Gemini client's contents → canonical messages: parts → blocks, functionCall ids minted where the client sent none,
// and each functionResponse matched to the call it answers (by id, else by name among the previous model turn's calls).
import type { CanonBlock, CanonMessage, FileBlock, ImageBlock, Signed, ToolCallBlock } from '../../../core/canonical.ts';
import { unwrapSigned } from '../../shared/signatures.ts';
import { idMinter, type IdMinter } from './ids.ts';
import { field, invalid, isObj, type Obj, optList, optObj, optStr, untranslatable } from './read.ts';
import { FORMAT, SKIP_SIGNATURE } from './tables.ts';

/** The members of Part's `data` oneof. */
const DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult', 'toolCall', 'toolResponse'];
/** Server-side tool traffic: meaningful only to Gemini's own code execution and built-in tools. */
const SERVER_PARTS = ['executableCode', 'codeExecutionResult', 'toolCall', 'toolResponse'];

interface Turn { minter: IdMinter; pending: Array<{ id: string; name: string; answered: boolean }> }

export function decodeContents(contents: unknown[], param: string): CanonMessage[] {
  const turn: Turn = { minter: idMinter(explicitIds(contents)), pending: [] };
  const messages: CanonMessage[] = [];
  let previous: CanonMessage | undefined;
  contents.forEach((content, i) => {
    const message = decodeContent(content, `${param}[${i}]`, turn, previous?.role === 'assistant' ? previous : undefined);
    if (message !== previous) messages.push(message);
    previous = message;
  });
  // A turn left with nothing (only empty text) says nothing; other targets refuse an empty message.
  return messages.filter((m) => m.content.length > 0);
}

/**
 * One content. A model content right after another continues the same answer (a client that kept a streamed answer
 * chunk by chunk): its parts join the message before, so a thought cut in pieces is one block with its signature.
 */
function decodeContent(content: unknown, at: string, turn: Turn, continues: CanonMessage | undefined): CanonMessage {
  if (!isObj(content)) throw invalid('must be an object', at);
  const role = optStr(field(content, 'role'), `${at}.role`) ?? 'user';
  if (role !== 'user' && role !== 'model') throw invalid('Please use a valid role: user, model.', `${at}.role`);
  const parts = optList(field(content, 'parts'), `${at}.parts`) ?? [];
  if (parts.length === 0) throw invalid('contents.parts must not be empty', `${at}.parts`);
  const message = role === 'model' && continues ? continues : { role: role === 'model' ? 'assistant' as const : 'user' as const, content: [] };
  if (role === 'model' && !continues) turn.pending = [];
  parts.forEach((part, j) => decodePart(part, role, `${at}.parts[${j}]`, turn, message.content));
  return message;
}

function decodePart(part: unknown, role: string, at: string, turn: Turn, blocks: CanonBlock[]): void {
  if (!isObj(part)) throw invalid('must be an object', at);
  const data = DATA.filter((name) => field(part, name) !== undefined);
  if (data.length > 1) throw invalid(`a part holds one of ${DATA.join(', ')}; this one has ${data.join(' and ')}`, at);
  const kind = data[0];
  const rawSignature = optStr(field(part, 'thoughtSignature'), `${at}.thoughtSignature`);
  // Google's placeholder (which this codec sends for calls it has no signature for) is no signature at all.
  const signature = rawSignature === undefined || rawSignature === SKIP_SIGNATURE ? undefined : unwrapSigned(rawSignature, FORMAT);
  if (kind === undefined) throw invalid("required oneof field 'data' must have one initialized field", at);
  if (SERVER_PARTS.includes(kind)) throw untranslatable(`${kind} parts belong to Gemini's own code execution and cannot be translated`, `${at}.${kind}`);
  const value = field(part, kind);
  switch (kind) {
    case 'text':
      return textPart(optStr(value, `${at}.text`) ?? '', role === 'model' && field(part, 'thought') === true, signature, blocks);
    case 'inlineData':
    case 'fileData':
      blocks.push(mediaBlock(value, kind, `${at}.${kind}`));
      return;
    case 'functionCall':
      if (role !== 'model') throw invalid('a functionCall belongs in a model turn', `${at}.functionCall`);
      blocks.push(callBlock(value, `${at}.functionCall`, turn, signature));
      return;
    case 'functionResponse':
      if (role !== 'user') throw invalid('a functionResponse belongs in a user turn', `${at}.functionResponse`);
      blocks.push(resultBlock(value, `${at}.functionResponse`, turn));
  }
}

/**
 * Text and thought parts. An empty part that only carries a signature (Gemini puts one after the text it signs) gives it
 * to the block before it; an empty part with nothing is dropped. A thought right after an unsigned thought is the next
 * piece of the same one (a streamed thought kept chunk by chunk, the signature on its last piece): the signature covers
 * the whole text, so the pieces become one block.
 */
function textPart(text: string, thought: boolean, signature: Signed | undefined, blocks: CanonBlock[]): void {
  const last = blocks[blocks.length - 1];
  if (text === '') {
    if (!signature) return;
    if (last && (last.type === (thought ? 'reasoning' : 'text') || last.type === 'tool_call') && !last.signature) {
      last.signature = signature;
      return;
    }
    if (!thought) return;
  }
  if (thought && last?.type === 'reasoning' && !last.signature && !last.redacted) {
    last.text += text;
    if (signature) last.signature = signature;
    return;
  }
  blocks.push(thought
    ? { type: 'reasoning', text, ...(signature ? { signature } : {}) }
    : { type: 'text', text, ...(signature ? { signature } : {}) });
}

function mediaBlock(value: unknown, kind: 'inlineData' | 'fileData', at: string): ImageBlock | FileBlock {
  const media = optObj(value, at) as Obj;
  const mediaType = optStr(field(media, 'mimeType'), `${at}.mimeType`);
  let source: ImageBlock['source'];
  if (kind === 'inlineData') {
    const data = optStr(field(media, 'data'), `${at}.data`);
    if (!data || !mediaType) throw invalid('inlineData needs mimeType and data', at);
    source = { kind: 'base64', mediaType, data };
  } else {
    const uri = optStr(field(media, 'fileUri'), `${at}.fileUri`);
    if (!uri) throw invalid('fileData needs a fileUri', at);
    source = { kind: 'file', format: FORMAT, id: uri, ...(mediaType ? { mediaType } : {}) };
  }
  const name = optStr(field(media, 'displayName'), `${at}.displayName`);
  return mediaType?.startsWith('image/') ? { type: 'image', source } : { type: 'file', source, ...(name ? { filename: name } : {}) };
}

function callBlock(value: unknown, at: string, turn: Turn, signature: Signed | undefined): ToolCallBlock {
  const call = optObj(value, at) as Obj;
  const name = optStr(call.name, `${at}.name`);
  if (!name) throw invalid('a functionCall needs a name', `${at}.name`);
  const args = optObj(call.args, `${at}.args`) ?? {};
  const id = optStr(call.id, `${at}.id`) || turn.minter.next();
  turn.pending.push({ id, name, answered: false });
  return { type: 'tool_call', id, name, arguments: JSON.stringify(args), ...(signature ? { signature } : {}) };
}

function resultBlock(value: unknown, at: string, turn: Turn): CanonBlock {
  const result = optObj(value, at) as Obj;
  const name = optStr(result.name, `${at}.name`);
  if (!name) throw invalid('a functionResponse needs a name', `${at}.name`);
  const response = optObj(result.response, `${at}.response`) ?? {};
  const id = optStr(result.id, `${at}.id`);
  const call = id !== undefined && id !== ''
    ? turn.pending.find((p) => p.id === id)
    : turn.pending.find((p) => !p.answered && p.name === name) ?? turn.pending.find((p) => !p.answered);
  if (call) call.answered = true;
  const { text, isError } = responseText(response);
  const media = (optList(result.parts, `${at}.parts`) ?? []).map((p, k) => {
    const inline = isObj(p) ? field(p, 'inlineData') : undefined;
    if (inline === undefined) throw untranslatable('a functionResponse part other than inlineData cannot be translated', `${at}.parts[${k}]`);
    return mediaBlock(inline, 'inlineData', `${at}.parts[${k}].inlineData`);
  });
  return {
    type: 'tool_result', callId: id || call?.id || turn.minter.next(), name,
    content: [...(text === '' ? [] : [{ type: 'text' as const, text }]), ...media],
    ...(isError ? { isError: true } : {}),
  };
}

/**
 * A response object as the text other formats carry: the string of a lone `content`/`output`/`result` field (Gemini CLI
 * answers {output}), a lone `error` as an error result, anything else as its JSON.
 */
function responseText(response: Obj): { text: string; isError: boolean } {
  const keys = Object.keys(response);
  if (keys.length === 1) {
    const value = response[keys[0]];
    if (keys[0] === 'error') return { text: typeof value === 'string' ? value : JSON.stringify(value), isError: true };
    if (typeof value === 'string' && ['content', 'output', 'result'].includes(keys[0])) return { text: value, isError: false };
  }
  return { text: keys.length === 0 ? '' : JSON.stringify(response), isError: false };
}

/** Ids the client itself gave its calls and results: minted ones must not collide with them. */
function explicitIds(contents: unknown[]): string[] {
  const ids: string[] = [];
  for (const content of contents) {
    const parts = isObj(content) ? field(content, 'parts') : undefined;
    for (const part of Array.isArray(parts) ? parts : []) {
      if (!isObj(part)) continue;
      for (const kind of ['functionCall', 'functionResponse']) {
        const value = field(part, kind);
        if (isObj(value) && typeof value.id === 'string') ids.push(value.id);
      }
    }
  }
  return ids;
}
