// A client's tools and tool_choice → canonical. Function and custom (freeform) tools translate, and so do those a
// namespace groups (Codex CLI 0.16x declares its sub-agent tools so). OpenAI's built-in tools run only inside OpenAI: a
// declared one is left out (Codex CLI always declares web_search; the model elsewhere simply has no such tool), a
// forced one (tool_choice) is refused. allowed_tools narrows the declared tools, which every target understands.
import type { CanonTool, ToolChoice } from '../../../core/canonical.ts';
import { BUILTIN_TOOLS } from './tables.ts';
import { invalid, isObj, objectAt, optArray, optBool, optObject, optString, reqString, unsupported, type Obj } from './read.ts';

const builtinRefusal = (param: string, type: string) =>
  unsupported(param, `The built-in tool '${type}' runs only on OpenAI and cannot be used with this model's provider; declare function tools instead.`);

export function decodeTools(raw: unknown): CanonTool[] {
  return (optArray(raw, 'tools') ?? []).flatMap((entry, i) => decodeTool(objectAt(entry, `tools[${i}]`), `tools[${i}]`));
}

function decodeTool(tool: Obj, param: string): CanonTool[] {
  if (tool.type === 'namespace') {
    return (optArray(tool.tools, `${param}.tools`) ?? []).flatMap((entry, j) => {
      const inner = objectAt(entry, `${param}.tools[${j}]`);
      if (inner.type === 'namespace') throw invalid(`${param}.tools[${j}].type`, 'Namespaces cannot be nested.');
      return decodeTool(inner, `${param}.tools[${j}]`);
    });
  }
  if (typeof tool.type === 'string' && BUILTIN_TOOLS.has(tool.type)) return [];
  return [decodeOne(tool, param)];
}

function decodeOne(tool: Obj, param: string): CanonTool {
  const name = () => reqString(tool.name, `${param}.name`);
  const description = optString(tool.description, `${param}.description`);
  switch (tool.type) {
    case 'function': {
      const strict = optBool(tool.strict, `${param}.strict`);
      return {
        kind: 'function', name: name(), ...(description !== undefined ? { description } : {}),
        parameters: optObject(tool.parameters, `${param}.parameters`) ?? { type: 'object', properties: {} },
        ...(strict !== undefined ? { strict } : {}),
      };
    }
    case 'custom':
      return { kind: 'custom', name: name(), ...(description !== undefined ? { description } : {}), ...(isObj(tool.format) ? { format: tool.format } : {}) };
    default:
      throw invalid(`${param}.type`, `Invalid value: '${String(tool.type)}'. Unsupported tool type.`);
  }
}

const MODES = new Set(['auto', 'none', 'required']);

/** tool_choice → canonical choice, and the tools it leaves callable (allowed_tools narrows them). */
export function decodeToolChoice(raw: unknown, tools: CanonTool[]): { toolChoice?: ToolChoice; tools: CanonTool[] } {
  if (raw === undefined || raw === null) return { tools };
  if (typeof raw === 'string') {
    if (!MODES.has(raw)) throw invalid('tool_choice', `Invalid value: '${raw}'. Supported values are: 'none', 'auto' and 'required'.`);
    return { toolChoice: { type: raw as 'auto' | 'none' | 'required' }, tools };
  }
  const choice = objectAt(raw, 'tool_choice');
  switch (choice.type) {
    case 'function':
    case 'custom': {
      const name = reqString(choice.name, 'tool_choice.name');
      if (!tools.some((t) => t.name === name)) throw invalid('tool_choice', `Tool choice '${name}' not found in 'tools' parameter.`);
      return { toolChoice: { type: 'tool', name }, tools };
    }
    case 'allowed_tools':
      return allowedTools(choice, tools);
    default:
      if (typeof choice.type === 'string' && (BUILTIN_TOOLS.has(choice.type) || choice.type === 'mcp')) throw builtinRefusal('tool_choice.type', choice.type);
      throw invalid('tool_choice.type', `Invalid value: '${String(choice.type)}'. Unsupported tool_choice type.`);
  }
}

function allowedTools(choice: Obj, tools: CanonTool[]): { toolChoice: ToolChoice; tools: CanonTool[] } {
  const mode = optString(choice.mode, 'tool_choice.mode') ?? 'auto';
  if (mode !== 'auto' && mode !== 'required') throw invalid('tool_choice.mode', `Invalid value: '${mode}'. Supported values are: 'auto' and 'required'.`);
  const names = new Set((optArray(choice.tools, 'tool_choice.tools') ?? []).map((entry, i) => {
    const ref = objectAt(entry, `tool_choice.tools[${i}]`);
    return typeof ref.name === 'string' ? ref.name : undefined;
  }));
  const allowed = tools.filter((t) => names.has(t.name));
  if (allowed.length === 0) {
    if (mode === 'required') throw invalid('tool_choice.tools', 'allowed_tools with mode required names none of the declared function or custom tools.');
    return { toolChoice: { type: 'none' }, tools: [] };
  }
  return { toolChoice: { type: mode }, tools: allowed };
}
