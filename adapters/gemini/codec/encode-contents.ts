// Canonical messages → Gemini contents for an upstream: roles user/model with same-role turns merged, leading system
// messages left to systemInstruction, a mid-conversation system message as user text in place, tool results as one user
// content of functionResponse parts in the order of the previous model turn's calls, and thought signatures only where
// Gemini made them (else the documented placeholder).
import type { CanonBlock, CanonMessage, CanonRequest, MediaSource, ToolCallBlock, ToolResultBlock } from '../../../core/canonical.ts';
import { signedFor } from '../../shared/signatures.ts';
import { fitName, GEMINI_NAMES } from '../../shared/tool-names.ts';
import { argsObject } from './parts.ts';
import { invalid, type Obj, untranslatable } from './read.ts';
import { FORMAT, SKIP_SIGNATURE } from './tables.ts';

type Part = Obj;
interface Content { role: 'user' | 'model'; parts: Part[] }

/** How many system messages open the conversation (they join systemInstruction); none when nothing else follows them. */
export function leadingSystem(messages: CanonMessage[]): number {
  return Math.max(0, messages.findIndex((m) => m.role !== 'system'));
}

/**
 * The contents from message `from` on (the leading system messages before it went to systemInstruction), and how many
 * function calls carry the placeholder signature.
 */
export function encodeContents(req: CanonRequest, from = 0): { contents: Content[]; standIns: number } {
  const names = callNames(req.messages);
  const contents: Content[] = [];
  let calls: string[] = [];
  req.messages.forEach((message, i) => {
    if (i < from) return;
    const at = `messages[${i}]`;
    const content: Content = message.role === 'assistant'
      ? { role: 'model', parts: modelParts(message.content, at) }
      : { role: 'user', parts: message.role === 'system' ? systemParts(message.content) : userParts(message.content, calls, names, at) };
    if (message.role === 'assistant') calls = message.content.filter((b) => b.type === 'tool_call').map((b) => (b as ToolCallBlock).id);
    const last = contents[contents.length - 1];
    if (content.parts.length === 0) return;
    if (last?.role === content.role) last.parts.push(...content.parts);
    else contents.push(content);
  });
  let standIns = 0;
  for (const content of contents) if (content.role === 'model' && signFirstCall(content.parts)) standIns++;
  return { contents, standIns };
}

/**
 * Gemini 3 refuses a function-call turn whose first call lacks its thoughtSignature; a call whose own signature did not
 * come back gets Google's placeholder (true then).
 */
function signFirstCall(parts: Part[]): boolean {
  const first = parts.find((p) => p.functionCall !== undefined);
  if (!first || first.thoughtSignature !== undefined) return false;
  first.thoughtSignature = SKIP_SIGNATURE;
  return true;
}

const systemParts = (blocks: CanonBlock[]): Part[] =>
  blocks.flatMap((b) => (b.type === 'text' && b.text !== '' ? [{ text: `[system] ${b.text}` }] : []));

function modelParts(blocks: CanonBlock[], at: string): Part[] {
  const parts: Part[] = [];
  // A Gemini signature on a reasoning block without text rides on the part after it, where Gemini put it.
  let carried: string | undefined;
  const push = (part: Part, own: string | undefined) => {
    const signature = own ?? carried;
    carried = undefined;
    parts.push(signature === undefined ? part : { ...part, thoughtSignature: signature });
  };
  blocks.forEach((block, j) => {
    switch (block.type) {
      case 'text':
        if (block.text !== '') push({ text: block.text }, signedFor(block.signature, FORMAT));
        else carried ??= signedFor(block.signature, FORMAT);
        break;
      case 'reasoning': {
        // Another provider's reasoning means nothing to Gemini (and its signature must never reach it).
        const signature = signedFor(block.signature, FORMAT);
        if (signature === undefined) break;
        if (block.text === '') carried = signature;
        else push({ text: block.text, thought: true }, signature);
        break;
      }
      case 'tool_call':
        push({ functionCall: { id: block.id, name: fitName(block.name, GEMINI_NAMES), args: argsObject(block.arguments, block.custom) } }, signedFor(block.signature, FORMAT));
        break;
      case 'image':
      case 'file':
        push(mediaPart(block.source, `${at}.content[${j}].source`), undefined);
        break;
    }
  });
  return parts;
}

function userParts(blocks: CanonBlock[], calls: string[], names: Map<string, string>, at: string): Part[] {
  const results = blocks
    .map((block, j) => ({ block, j }))
    .filter((r): r is { block: ToolResultBlock; j: number } => r.block.type === 'tool_result');
  const rank = (r: { block: ToolResultBlock }) => (calls.includes(r.block.callId) ? calls.indexOf(r.block.callId) : calls.length);
  results.sort((a, b) => rank(a) - rank(b) || a.j - b.j);
  const parts: Part[] = results.map(({ block, j }) => functionResponse(block, names, `${at}.content[${j}]`));
  // Images and files a result carries follow the results: a functionResponse holds an object, not media.
  results.forEach(({ block, j }) => block.content.forEach((c, k) => {
    if (c.type !== 'text') parts.push(mediaPart(c.source, `${at}.content[${j}].content[${k}].source`));
  }));
  blocks.forEach((block, j) => {
    if (block.type === 'text' && block.text !== '') {
      const signature = signedFor(block.signature, FORMAT);
      parts.push(signature === undefined ? { text: block.text } : { text: block.text, thoughtSignature: signature });
    } else if (block.type === 'image' || block.type === 'file') parts.push(mediaPart(block.source, `${at}.content[${j}].source`));
  });
  return parts;
}

/** The response is always an object (Gemini refuses anything else): the result's text as {content}, or {error} when it failed. */
function functionResponse(result: ToolResultBlock, names: Map<string, string>, at: string): Part {
  const name = names.get(result.callId) ?? result.name;
  if (name === undefined) throw invalid(`no tool call with id ${result.callId} precedes this result, and Gemini needs the function's name`, `${at}.callId`);
  const text = result.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
  return {
    functionResponse: { id: result.callId, name: fitName(name, GEMINI_NAMES), response: result.isError ? { error: text } : { content: text } },
  };
}

function mediaPart(source: MediaSource, at: string): Part {
  switch (source.kind) {
    case 'base64':
      return { inlineData: { mimeType: source.mediaType, data: source.data } };
    case 'file':
      if (source.format !== FORMAT) throw untranslatable(`a file of another provider (${source.format}) cannot be read by Gemini; send its content inline`, at);
      return { fileData: { fileUri: source.id, ...(source.mediaType ? { mimeType: source.mediaType } : {}) } };
    case 'url':
      // The bridge fetches url media for a codec that declares inlineMedia; one that still arrives was not fetched.
      throw untranslatable('Gemini takes images and files inline only; this URL could not be fetched', at);
  }
}

/** Call id → function name over the whole history: a functionResponse must name the function it answers. */
function callNames(messages: CanonMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) for (const b of m.content) if (b.type === 'tool_call') names.set(b.id, b.name);
  return names;
}
