// A chat client's messages → the canonical system prompt and turns. Leading system/developer messages are the system
// prompt, later ones stay in place as system messages; consecutive tool messages (and a user message right after them)
// become one user message of tool results; a legacy function_call / function message pair gets an id of its own.
import type { CanonBlock, CanonMessage, FileBlock, ImageBlock, TextBlock, ToolCallBlock, ToolResultBlock } from '../../../core/canonical.ts';
import { parseDataUrl } from '../../shared/data-url.ts';
import { invalid, isObj, list, obj, optEnum, optStr, str, unsupported, type Obj } from './checks.ts';
import { FORMAT, TOOL_ERROR_PREFIX } from './tables.ts';

type Part = TextBlock | ImageBlock | FileBlock;

const text = (t: string): TextBlock[] => (t === '' ? [] : [{ type: 'text', text: t }]);

/** Content that may only be text: a string or text parts (system, developer, tool, function messages). */
function textContent(content: unknown, param: string): TextBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return text(content);
  return list(content, param).flatMap((part, j) => {
    const p = obj(part, `${param}[${j}]`);
    if (p.type !== 'text') throw invalid(`${param}[${j}].type`, `Invalid value: '${String(p.type)}'. Supported values are: 'text'.`);
    return text(str(p.text, `${param}[${j}].text`));
  });
}

function imagePart(p: Obj, param: string): ImageBlock {
  // The API takes an object; a bare string is what some clients send, and means the same.
  const image = typeof p.image_url === 'string' ? { url: p.image_url } : obj(p.image_url, `${param}.image_url`);
  const url = str(image.url, `${param}.image_url.url`);
  const detail = optEnum(image.detail, `${param}.image_url.detail`, ['low', 'high', 'auto'] as const);
  const inline = parseDataUrl(url);
  if (!inline && !/^https?:\/\//i.test(url)) throw invalid(`${param}.image_url.url`, 'Invalid image URL: expected an http(s) URL or a base64 data URL.');
  const source: ImageBlock['source'] = inline ? { kind: 'base64', ...inline } : { kind: 'url', url };
  return { type: 'image', source, ...(detail ? { detail } : {}) };
}

function filePart(p: Obj, param: string): FileBlock {
  const file = obj(p.file, `${param}.file`);
  const filename = optStr(file.filename, `${param}.file.filename`);
  const id = optStr(file.file_id, `${param}.file.file_id`);
  const data = optStr(file.file_data, `${param}.file.file_data`);
  if (id !== undefined) return { type: 'file', source: { kind: 'file', format: FORMAT, id }, ...(filename ? { filename } : {}) };
  if (data === undefined) throw invalid(`${param}.file`, "A file part needs 'file_id' or 'file_data'.", 'missing_required_parameter');
  // file_data is a data URL; plain base64 is taken as a PDF (the only type chat documents for it).
  const inline = parseDataUrl(data) ?? { mediaType: 'application/pdf', data };
  return { type: 'file', source: { kind: 'base64', ...inline }, ...(filename ? { filename } : {}) };
}

/** A user or assistant message's content: a string, null, or parts. */
function partsContent(content: unknown, param: string, role: 'user' | 'assistant'): Part[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return text(content);
  return list(content, param).flatMap((part, j): Part[] => {
    const at = `${param}[${j}]`;
    const p = obj(part, at);
    if (p.type === 'text') return text(str(p.text, `${at}.text`));
    // A refusal the model gave earlier, passed back: it was what the assistant said.
    if (role === 'assistant' && p.type === 'refusal') return text(str(p.refusal, `${at}.refusal`));
    if (role === 'user' && p.type === 'image_url') return [imagePart(p, at)];
    if (role === 'user' && p.type === 'file') return [filePart(p, at)];
    if (role === 'user' && p.type === 'input_audio') throw unsupported(`${at}.type`, 'Audio input cannot be translated for this group\'s upstream.');
    const allowed = role === 'user' ? "'text', 'image_url', 'input_audio' and 'file'" : "'text' and 'refusal'";
    throw invalid(`${at}.type`, `Invalid value: '${String(p.type)}'. Supported values are: ${allowed}.`);
  });
}

/** Arguments are JSON text; an object (which some clients send) is taken as its JSON. */
const argumentsText = (v: unknown, param: string): string => (isObj(v) ? JSON.stringify(v) : optStr(v, param) ?? '');

function toolCall(call: unknown, param: string): ToolCallBlock {
  const c = obj(call, param);
  const id = str(c.id, `${param}.id`);
  if (c.type === 'custom') {
    const custom = obj(c.custom, `${param}.custom`);
    return { type: 'tool_call', id, name: str(custom.name, `${param}.custom.name`), arguments: optStr(custom.input, `${param}.custom.input`) ?? '', custom: true };
  }
  if (c.type !== undefined && c.type !== 'function') throw invalid(`${param}.type`, `Invalid value: '${String(c.type)}'. Supported values are: 'function' and 'custom'.`);
  const fn = obj(c.function, `${param}.function`);
  return { type: 'tool_call', id, name: str(fn.name, `${param}.function.name`), arguments: argumentsText(fn.arguments, `${param}.function.arguments`) };
}

/** A tool's answer; the gateway's own `[tool error] ` prefix (how is_error travels through chat) is read back. */
function toolResult(callId: string, content: TextBlock[]): ToolResultBlock {
  const first = content[0];
  if (first?.text.startsWith(TOOL_ERROR_PREFIX)) {
    const rest = first.text.slice(TOOL_ERROR_PREFIX.length);
    return { type: 'tool_result', callId, content: [...text(rest), ...content.slice(1)], isError: true };
  }
  return { type: 'tool_result', callId, content };
}

/** An assistant message: its text (a refusal included), then its tool calls, then a legacy function_call under `legacyId`. */
function assistantBlocks(m: Obj, at: string, legacyId: string | undefined): CanonBlock[] {
  const blocks: CanonBlock[] = partsContent(m.content, `${at}.content`, 'assistant');
  if (m.refusal !== undefined && m.refusal !== null) blocks.push(...text(str(m.refusal, `${at}.refusal`)));
  if (m.tool_calls !== undefined && m.tool_calls !== null) {
    blocks.push(...list(m.tool_calls, `${at}.tool_calls`).map((c, j) => toolCall(c, `${at}.tool_calls[${j}]`)));
  }
  if (isObj(m.function_call) && legacyId) {
    const fn = m.function_call;
    blocks.push({ type: 'tool_call', id: legacyId, name: str(fn.name, `${at}.function_call.name`), arguments: argumentsText(fn.arguments, `${at}.function_call.arguments`) });
  }
  return blocks;
}

export function decodeMessages(raw: unknown): { system: TextBlock[]; messages: CanonMessage[] } {
  const system: TextBlock[] = [];
  const messages: CanonMessage[] = [];
  // The user message holding the latest run of tool results, while nothing else has come after it.
  let results: CanonMessage | undefined;
  // The id given to the latest legacy function_call, which the next function message answers.
  let legacyCall: string | undefined;
  const push = (message: CanonMessage) => {
    if (message.content.length > 0) messages.push(message);
  };
  const items = list(raw, 'messages');
  if (items.length === 0) throw invalid('messages', "Invalid 'messages': expected a non-empty array.");
  items.forEach((item, i) => {
    const at = `messages[${i}]`;
    const m = obj(item, at);
    const role = str(m.role, `${at}.role`);
    const resultsOpen = results;
    results = undefined;
    switch (role) {
      case 'system':
      case 'developer': {
        const blocks = textContent(m.content, `${at}.content`);
        if (messages.length === 0) system.push(...blocks);
        else push({ role: 'system', content: blocks });
        return;
      }
      case 'user': {
        const blocks: CanonBlock[] = partsContent(m.content, `${at}.content`, 'user');
        if (resultsOpen) resultsOpen.content.push(...blocks);
        else push({ role: 'user', content: blocks });
        return;
      }
      case 'assistant': {
        if (isObj(m.function_call)) legacyCall = `call_fn_${i}`;
        push({ role: 'assistant', content: assistantBlocks(m, at, legacyCall) });
        return;
      }
      case 'tool':
      case 'function': {
        const callId = role === 'tool' ? str(m.tool_call_id, `${at}.tool_call_id`) : legacyCall ?? `call_fn_${i}`;
        const result = toolResult(callId, textContent(m.content, `${at}.content`));
        results = resultsOpen ?? { role: 'user', content: [] };
        if (!resultsOpen) messages.push(results);
        results.content.push(result);
        return;
      }
      default:
        throw invalid(`${at}.role`, `Invalid value: '${role}'. Supported values are: 'system', 'developer', 'user', 'assistant', 'tool' and 'function'.`);
    }
  });
  return { system, messages };
}
