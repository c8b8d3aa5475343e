// A chat client's tools, tool_choice (every spelling, legacy functions/function_call included) and response_format →
// canonical tools, choice and output format.
import type { CanonTool, OutputFormat, ToolChoice } from '../../../core/canonical.ts';
import { invalid, isObj, list, obj, optBool, optStr, str, unsupported, type Obj } from './checks.ts';

const EMPTY_OBJECT_SCHEMA = { type: 'object', properties: {} };

/** A custom tool's format in the canonical (flat, Responses-like) shape: text, or a grammar with its syntax and definition. */
function customFormat(format: unknown, param: string): unknown {
  if (!isObj(format)) return undefined;
  if (format.type !== 'grammar') return { type: 'text' };
  const grammar = obj(format.grammar, `${param}.grammar`);
  return { type: 'grammar', syntax: str(grammar.syntax, `${param}.grammar.syntax`), definition: str(grammar.definition, `${param}.grammar.definition`) };
}

function functionTool(fn: Obj, param: string): CanonTool {
  const description = optStr(fn.description, `${param}.description`);
  const strict = optBool(fn.strict, `${param}.strict`);
  const parameters = fn.parameters === undefined || fn.parameters === null ? EMPTY_OBJECT_SCHEMA : obj(fn.parameters, `${param}.parameters`);
  return {
    kind: 'function', name: str(fn.name, `${param}.name`), ...(description !== undefined ? { description } : {}), parameters,
    ...(strict !== undefined ? { strict } : {}),
  };
}

function tool(raw: unknown, param: string): CanonTool {
  const t = obj(raw, param);
  if (t.type === 'function') return functionTool(obj(t.function, `${param}.function`), `${param}.function`);
  if (t.type === 'custom') {
    const c = obj(t.custom, `${param}.custom`);
    const description = optStr(c.description, `${param}.custom.description`);
    const format = customFormat(c.format, `${param}.custom.format`);
    return { kind: 'custom', name: str(c.name, `${param}.custom.name`), ...(description !== undefined ? { description } : {}), ...(format ? { format } : {}) };
  }
  throw unsupported(`${param}.type`, `Tool type '${String(t.type)}' cannot be translated for this group's upstream; use 'function' or 'custom'.`);
}

/** Tools and the legacy `functions` list. */
export function decodeTools(body: Obj): CanonTool[] {
  const tools = body.tools === undefined || body.tools === null ? [] : list(body.tools, 'tools').map((t, i) => tool(t, `tools[${i}]`));
  if (body.functions !== undefined && body.functions !== null) {
    tools.push(...list(body.functions, 'functions').map((f, i) => functionTool(obj(f, `functions[${i}]`), `functions[${i}]`)));
  }
  return tools;
}

/** The name a named choice (or an allowed_tools entry) points at: {type:function,function:{name}} or {type:custom,custom:{name}}. */
function namedTool(choice: Obj, param: string): string {
  if (choice.type === 'custom') return str(obj(choice.custom, `${param}.custom`).name, `${param}.custom.name`);
  if (choice.type === 'function') return str(obj(choice.function, `${param}.function`).name, `${param}.function.name`);
  throw invalid(`${param}.type`, `Invalid value: '${String(choice.type)}'. Supported values are: 'function', 'custom' and 'allowed_tools'.`);
}

const MODES: Record<string, ToolChoice> = { auto: { type: 'auto' }, none: { type: 'none' }, required: { type: 'required' } };

/**
 * tool_choice (or legacy function_call). `allowed_tools` has no canonical twin: the tools are narrowed to the allowed
 * ones and its mode (auto/required) becomes the choice, which asks the model the same thing.
 */
export function decodeToolChoice(body: Obj, tools: CanonTool[]): { toolChoice?: ToolChoice; tools: CanonTool[] } {
  const legacy = body.tool_choice === undefined || body.tool_choice === null;
  const param = legacy ? 'function_call' : 'tool_choice';
  const raw = legacy ? body.function_call : body.tool_choice;
  if (raw === undefined || raw === null) return { tools };
  if (typeof raw === 'string') {
    const mode = MODES[raw];
    if (!mode || (legacy && raw === 'required')) throw invalid(param, `Invalid value for '${param}': '${raw}'.`);
    return { toolChoice: mode, tools };
  }
  const choice = obj(raw, param);
  if (legacy) return { toolChoice: { type: 'tool', name: str(choice.name, `${param}.name`) }, tools };
  if (choice.type !== 'allowed_tools') return { toolChoice: { type: 'tool', name: namedTool(choice, param) }, tools };
  const allowed = obj(choice.allowed_tools, `${param}.allowed_tools`);
  const mode = allowed.mode === 'required' ? 'required' : allowed.mode === 'auto' ? 'auto' : undefined;
  if (!mode) throw invalid(`${param}.allowed_tools.mode`, "Invalid value: expected 'auto' or 'required'.");
  const names = new Set(list(allowed.tools, `${param}.allowed_tools.tools`).map((t, i) => namedTool(obj(t, `${param}.allowed_tools.tools[${i}]`), `${param}.allowed_tools.tools[${i}]`)));
  return { toolChoice: MODES[mode], tools: tools.filter((t) => names.has(t.name)) };
}

export function decodeResponseFormat(raw: unknown): OutputFormat | undefined {
  if (raw === undefined || raw === null) return undefined;
  const format = obj(raw, 'response_format');
  if (format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') throw invalid('response_format.type', "Invalid value: expected 'text', 'json_object' or 'json_schema'.");
  const spec = obj(format.json_schema, 'response_format.json_schema');
  const strict = optBool(spec.strict, 'response_format.json_schema.strict');
  const description = optStr(spec.description, 'response_format.json_schema.description');
  const schema = spec.schema === undefined || spec.schema === null ? { type: 'object' } : obj(spec.schema, 'response_format.json_schema.schema');
  return {
    type: 'json_schema', name: str(spec.name, 'response_format.json_schema.name'), schema,
    ...(strict !== undefined ? { strict } : {}), ...(description !== undefined ? { description } : {}),
  };
}
