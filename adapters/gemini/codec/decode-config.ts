// A Gemini client's tools, toolConfig and generationConfig → the canonical request's tools, choice, limits, sampling,
// output format and reasoning. Built-in server tools and output Gemini alone can make are refused (400).
import type { CanonRequest, CanonTool, OutputFormat, ReasoningConfig, ToolChoice } from '../../../core/canonical.ts';
import { fromOpenApi, objectSchema } from './schema.ts';
import { field, invalid, isObj, type Obj, optBool, optInt, optList, optNum, optObj, optStr, untranslatable } from './read.ts';
import { EFFORT_BY_LEVEL } from './tables.ts';

/** Tool kinds Google runs itself (search, code execution, maps …): no other upstream can run them. */
const SERVER_TOOLS = ['googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext', 'fileSearch', 'googleMaps', 'computerUse', 'mcpServers', 'retrieval', 'enterpriseWebSearch'];

export function decodeTools(value: unknown, param: string): CanonTool[] {
  const tools: CanonTool[] = [];
  (optList(value, param) ?? []).forEach((tool, i) => {
    const at = `${param}[${i}]`;
    if (!isObj(tool)) throw invalid('must be an object', at);
    const server = SERVER_TOOLS.find((name) => field(tool, name) !== undefined);
    if (server) throw untranslatable(`The ${server} tool runs on Google's servers and cannot be used with this model`, `${at}.${server}`);
    (optList(field(tool, 'functionDeclarations'), `${at}.functionDeclarations`) ?? []).forEach((d, j) => {
      tools.push(declaration(d, `${at}.functionDeclarations[${j}]`));
    });
  });
  return tools;
}

function declaration(value: unknown, at: string): CanonTool {
  const d = optObj(value, at) as Obj;
  const name = optStr(d.name, `${at}.name`);
  if (!name) throw invalid('a function declaration needs a name', `${at}.name`);
  const description = optStr(d.description, `${at}.description`);
  const jsonSchema = optObj(field(d, 'parametersJsonSchema'), `${at}.parametersJsonSchema`);
  const openApi = optObj(d.parameters, `${at}.parameters`);
  return {
    kind: 'function', name, ...(description ? { description } : {}),
    parameters: objectSchema(jsonSchema ?? (openApi ? fromOpenApi(openApi) : undefined)),
  };
}

/**
 * functionCallingConfig → canonical choice. ANY with one allowed name is that tool; with several, `required` over the
 * allowed tools only (the caller filters them by `allowed`). VALIDATED constrains calls to the schema: `auto` elsewhere.
 */
export function decodeToolConfig(value: unknown, param: string): { choice?: ToolChoice; allowed?: string[] } {
  const config = optObj(field(optObj(value, param) ?? {}, 'functionCallingConfig'), `${param}.functionCallingConfig`);
  if (!config) return {};
  const at = `${param}.functionCallingConfig`;
  const mode = optStr(config.mode, `${at}.mode`)?.toUpperCase();
  const allowed = (optList(field(config, 'allowedFunctionNames'), `${at}.allowedFunctionNames`) ?? []).map((n, i) => {
    if (typeof n !== 'string') throw invalid('must be a string', `${at}.allowedFunctionNames[${i}]`);
    return n;
  });
  const names = allowed.length > 0 ? { allowed } : {};
  switch (mode) {
    case undefined: case 'MODE_UNSPECIFIED': return {};
    case 'AUTO': return { choice: { type: 'auto' } };
    case 'NONE': return { choice: { type: 'none' } };
    case 'VALIDATED': return { choice: { type: 'auto' }, ...names };
    case 'ANY': return allowed.length === 1 ? { choice: { type: 'tool', name: allowed[0] } } : { choice: { type: 'required' }, ...names };
    default: throw invalid(`unknown mode ${mode}; use AUTO, ANY, NONE or VALIDATED`, `${at}.mode`);
  }
}

type Generation = Pick<CanonRequest, 'maxOutputTokens' | 'temperature' | 'topP' | 'topK' | 'stop' | 'seed' | 'presencePenalty'
  | 'frequencyPenalty' | 'n' | 'logprobs' | 'topLogprobs' | 'output' | 'reasoning'>;

export function decodeGeneration(value: unknown, param: string): Generation {
  const g = optObj(value, param) ?? {};
  const at = (name: string) => `${param}.${name}`;
  const read = <T>(name: string, f: (v: unknown, p: string) => T | undefined) => f(field(g, name), at(name));
  const stop = (read('stopSequences', optList) ?? []).map((s, i) => {
    if (typeof s !== 'string') throw invalid('must be a string', `${at('stopSequences')}[${i}]`);
    return s;
  });
  const modalities = read('responseModalities', optList) ?? [];
  if (modalities.some((m) => String(m).toUpperCase() !== 'TEXT')) {
    throw untranslatable('Only text output can be translated; responseModalities other than TEXT are not supported', at('responseModalities'));
  }
  const out: Generation = {
    maxOutputTokens: read('maxOutputTokens', optInt),
    temperature: read('temperature', optNum),
    topP: read('topP', optNum),
    topK: read('topK', optInt),
    stop: stop.length > 0 ? stop : undefined,
    seed: read('seed', optInt),
    presencePenalty: read('presencePenalty', optNum),
    frequencyPenalty: read('frequencyPenalty', optNum),
    n: read('candidateCount', optInt),
    logprobs: read('responseLogprobs', optBool),
    topLogprobs: read('logprobs', optInt),
    output: outputFormat(g, param),
    reasoning: reasoning(read('thinkingConfig', optObj), at('thinkingConfig')),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Generation;
}

/** responseMimeType + responseJsonSchema (JSON Schema) or responseSchema (OpenAPI subset) → canonical output format. */
function outputFormat(g: Obj, param: string): OutputFormat | undefined {
  const mime = optStr(field(g, 'responseMimeType'), `${param}.responseMimeType`);
  const jsonSchema = optObj(field(g, 'responseJsonSchema'), `${param}.responseJsonSchema`);
  const openApi = optObj(field(g, 'responseSchema'), `${param}.responseSchema`);
  const schema = jsonSchema ?? (openApi ? fromOpenApi(openApi) : undefined);
  if (mime === undefined || mime === 'text/plain') {
    if (schema) throw invalid('a response schema needs responseMimeType application/json', `${param}.responseMimeType`);
    return undefined;
  }
  if (mime !== 'application/json') throw untranslatable(`responseMimeType ${mime} cannot be translated; use application/json or text/plain`, `${param}.responseMimeType`);
  return schema ? { type: 'json_schema', name: 'response', schema } : { type: 'json_object' };
}

/** thinkingConfig: a budget (0 off, -1 dynamic), or a Gemini 3 level; includeThoughts shows the thoughts. */
function reasoning(config: Obj | undefined, param: string): ReasoningConfig | undefined {
  if (!config) return undefined;
  const budget = optInt(field(config, 'thinkingBudget'), `${param}.thinkingBudget`);
  const level = optStr(field(config, 'thinkingLevel'), `${param}.thinkingLevel`)?.toLowerCase();
  const show = optBool(field(config, 'includeThoughts'), `${param}.includeThoughts`);
  const effort = level === undefined || level === 'thinking_level_unspecified' ? undefined : EFFORT_BY_LEVEL[level];
  if (level !== undefined && effort === undefined && level !== 'thinking_level_unspecified') {
    throw invalid(`unknown thinkingLevel ${level}; use minimal, low, medium or high`, `${param}.thinkingLevel`);
  }
  const out: ReasoningConfig = {
    ...(budget !== undefined || effort !== undefined ? { enabled: budget !== 0 } : {}),
    ...(effort !== undefined ? { effort } : {}),
    ...(budget !== undefined && budget !== 0 ? { budgetTokens: budget } : {}),
    ...(show !== undefined ? { show } : {}),
  };
  return Object.keys(out).length > 0 ? out : undefined;
}
