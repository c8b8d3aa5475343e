// Tools, tool choice and tool call ids, both ways: a client's custom tools in, an upstream's tool list and choice out.
import { createHash } from 'node:crypto';
import type { CanonTool, CustomTool, FunctionTool, ToolChoice } from '../../../core/canonical.ts';
import type { JSONSchema } from '../../../core/types.ts';
import { ANTHROPIC_NAMES, fitName } from '../../shared/tool-names.ts';
import { cacheControl, cacheHint } from './cache.ts';
import { isObj, list, type Obj, obj, optStr, str, untranslatable } from './check.ts';

// ---- client side ----

export function decodeTools(raw: unknown, param: string): CanonTool[] {
  if (raw === undefined || raw === null) return [];
  return list(raw, param).map((item, i): CanonTool => {
    const at = `${param}.${i}`;
    const tool = obj(item, at);
    if (tool.type !== undefined && tool.type !== 'custom') {
      throw untranslatable(`${at}: "${String(tool.type)}" is one of Anthropic's server tools (web search, code execution, bash, text editor, computer use…), which this group's upstream cannot run; declare it as a custom tool with an input_schema instead`, `${at}.type`);
    }
    const description = optStr(tool.description, `${at}.description`);
    return {
      kind: 'function',
      name: str(tool.name, `${at}.name`),
      ...(description ? { description } : {}),
      parameters: obj(tool.input_schema, `${at}.input_schema`),
      ...(tool.strict === true ? { strict: true } : {}),
      ...cacheHint(tool),
    };
  });
}

const CHOICE_FROM_WIRE: Record<string, ToolChoice['type']> = { auto: 'auto', any: 'required', none: 'none', tool: 'tool' };

export function decodeToolChoice(raw: unknown, param: string): { toolChoice?: ToolChoice; parallelToolCalls?: boolean } {
  if (raw === undefined || raw === null) return {};
  const choice = obj(raw, param);
  const type = CHOICE_FROM_WIRE[String(choice.type)];
  if (!type) throw untranslatable(`${param}.type: unknown tool_choice type "${String(choice.type)}"`, `${param}.type`);
  const toolChoice: ToolChoice = type === 'tool' ? { type, name: str(choice.name, `${param}.name`) } : { type };
  const disable = choice.disable_parallel_tool_use;
  return { toolChoice, ...(typeof disable === 'boolean' ? { parallelToolCalls: !disable } : {}) };
}

// ---- upstream side ----

/** Anthropic requires an object schema with `type: "object"` (docs/translation.md: a Gemini schema may lack it). */
export function objectSchema(schema: JSONSchema | undefined): JSONSchema {
  if (!schema || typeof schema !== 'object') return { type: 'object', properties: {} };
  return schema.type === 'object' ? schema : { ...schema, type: 'object' };
}

/** A freeform tool has no Anthropic form: a function with one string parameter `input` (docs/translation.md "Tools"). */
export const CUSTOM_INPUT_SCHEMA: JSONSchema = { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] };

function customDescription(tool: CustomTool): string | undefined {
  const format = tool.format;
  // A grammar cannot be enforced here; the model reads it instead.
  let grammar: string | undefined;
  if (isObj(format) && typeof format.definition === 'string') {
    const syntax = typeof format.syntax === 'string' ? `${format.syntax} ` : '';
    grammar = `The input must follow this ${syntax}grammar:\n${format.definition}`;
  }
  const parts = [tool.description, grammar].filter((p): p is string => !!p);
  return parts.length ? parts.join('\n\n') : undefined;
}

export function encodeTool(tool: CanonTool): Obj {
  const custom = tool.kind === 'custom';
  const description = custom ? customDescription(tool) : tool.description;
  return {
    name: fitName(tool.name, ANTHROPIC_NAMES),
    ...(description ? { description } : {}),
    input_schema: custom ? CUSTOM_INPUT_SCHEMA : objectSchema((tool as FunctionTool).parameters),
    ...cacheControl(tool.cache),
  };
}

const CHOICE_TO_WIRE: Record<ToolChoice['type'], string> = { auto: 'auto', required: 'any', none: 'none', tool: 'tool' };

/** tool_choice for an upstream; only sent with tools (the API refuses it without). `none` takes no parallel flag. */
export function encodeToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): Obj | undefined {
  if (!choice && parallel === undefined) return undefined;
  const type = CHOICE_TO_WIRE[choice?.type ?? 'auto'];
  if (type === 'none') return { type };
  return {
    type,
    ...(choice?.type === 'tool' ? { name: fitName(choice.name, ANTHROPIC_NAMES) } : {}),
    ...(parallel === undefined ? {} : { disable_parallel_tool_use: !parallel }),
  };
}

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/** A tool call id as Anthropic takes it: unchanged when valid, else cleaned with a hash of the original, so a call and its result agree. */
export function fitToolId(id: string): string {
  if (TOOL_ID.test(id)) return id;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 12);
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'toolu'}_${hash}`;
}
