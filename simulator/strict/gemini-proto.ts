// The proto messages a Gemini request is parsed into, and the parse errors Google's proto-JSON reader gives for it.
//
// Google parses the body into its protos before anything else and reports every field it cannot place, with the proto
// (snake_case) path of its parent: `Invalid JSON payload received. Unknown name "additionalProperties" at
// 'tools[0].function_declarations[0].parameters': Cannot find field.` (quoted in public reports, e.g. LibreChat #11761,
// symfony/ai #2040, zed #53919). Field lists follow the v1beta REST reference and @google/genai 3.1's converters.
// `parameters` is the OpenAPI-subset Schema (no $schema, $ref, additionalProperties, const, exclusiveMinimum,
// propertyNames, uniqueItems …); `parametersJsonSchema` takes any JSON Schema and is not walked.
import { isObject } from '../incoming.ts';

type Field = 'scalar' | 'any' | 'struct' | 'type' | { message: string; repeated?: true; map?: true };

const m = (message: string) => ({ message });
const list = (message: string) => ({ message, repeated: true as const });

const SCHEMA_FIELDS: Record<string, Field> = {
  type: 'type', format: 'scalar', title: 'scalar', description: 'scalar', nullable: 'scalar', enum: 'scalar', maxItems: 'scalar',
  minItems: 'scalar', properties: { message: 'Schema', map: true }, required: 'scalar', minProperties: 'scalar', maxProperties: 'scalar',
  minLength: 'scalar', maxLength: 'scalar', pattern: 'scalar', example: 'any', anyOf: list('Schema'), propertyOrdering: 'scalar',
  default: 'any', items: m('Schema'), minimum: 'scalar', maximum: 'scalar',
};

const MESSAGES: Record<string, Record<string, Field>> = {
  GenerateContentRequest: {
    model: 'scalar', contents: list('Content'), systemInstruction: m('Content'), tools: list('Tool'), toolConfig: m('ToolConfig'),
    safetySettings: 'any', generationConfig: m('GenerationConfig'), cachedContent: 'scalar', labels: 'any', serviceTier: 'scalar', store: 'scalar',
  },
  CountTokensRequest: { contents: list('Content'), generateContentRequest: m('GenerateContentRequest') },
  Content: { role: 'scalar', parts: list('Part') },
  Part: {
    text: 'scalar', inlineData: m('Blob'), fileData: 'any', functionCall: m('FunctionCall'), functionResponse: m('FunctionResponse'),
    executableCode: 'any', codeExecutionResult: 'any', thought: 'scalar', thoughtSignature: 'scalar', videoMetadata: 'any',
    partMetadata: 'any', mediaResolution: 'any', toolCall: 'any', toolResponse: 'any',
  },
  Blob: { mimeType: 'scalar', data: 'scalar', displayName: 'scalar' },
  FunctionCall: { id: 'scalar', name: 'scalar', args: 'struct', partialArgs: 'any', willContinue: 'scalar' },
  FunctionResponse: { id: 'scalar', name: 'scalar', response: 'struct', parts: 'any', willContinue: 'scalar', scheduling: 'scalar' },
  Tool: {
    functionDeclarations: list('FunctionDeclaration'), googleSearchRetrieval: 'any', codeExecution: 'any', googleSearch: 'any',
    computerUse: 'any', urlContext: 'any', fileSearch: 'any', googleMaps: 'any', mcpServers: 'any',
  },
  FunctionDeclaration: {
    name: 'scalar', description: 'scalar', behavior: 'scalar', parameters: m('Schema'), parametersJsonSchema: 'any', response: m('Schema'), responseJsonSchema: 'any',
  },
  Schema: SCHEMA_FIELDS,
  ToolConfig: { functionCallingConfig: m('FunctionCallingConfig'), retrievalConfig: 'any', includeServerSideToolInvocations: 'scalar' },
  FunctionCallingConfig: { mode: 'scalar', allowedFunctionNames: 'scalar', streamFunctionCallArguments: 'scalar' },
  GenerationConfig: {
    stopSequences: 'scalar', responseMimeType: 'scalar', responseSchema: m('Schema'), responseJsonSchema: 'any', responseModalities: 'scalar',
    candidateCount: 'scalar', maxOutputTokens: 'scalar', temperature: 'scalar', topP: 'scalar', topK: 'scalar', seed: 'scalar',
    presencePenalty: 'scalar', frequencyPenalty: 'scalar', responseLogprobs: 'scalar', logprobs: 'scalar', enableEnhancedCivicAnswers: 'scalar',
    speechConfig: 'any', thinkingConfig: m('ThinkingConfig'), imageConfig: 'any', mediaResolution: 'scalar',
  },
  ThinkingConfig: { includeThoughts: 'scalar', thinkingBudget: 'scalar', thinkingLevel: 'scalar' },
};

const TYPES = ['TYPE_UNSPECIFIED', 'STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL'];
const PROTO_PACKAGE = 'type.googleapis.com/google.ai.generativelanguage.v1beta';

export interface Violation {
  /** The proto path of the field's parent (absent at the top level), as Google reports it. */
  field?: string;
  description: string;
}

/** Every parse error of `value` read as proto message `message`, in document order. */
export function parseErrors(value: Record<string, unknown>, message: 'GenerateContentRequest' | 'CountTokensRequest'): Violation[] {
  const found: Violation[] = [];
  walkMessage(value, message, '', found);
  return found;
}

export const camelOf = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const snakeOf = (name: string) => name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
const join = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);
const where = (path: string) => (path === '' ? {} : { field: path });

function unknownName(name: string, path: string, why = 'Cannot find field.'): Violation {
  const at = path === '' ? '' : ` at '${path}'`;
  return { ...where(path), description: `Invalid JSON payload received. Unknown name "${name}"${at}: ${why}` };
}

function invalidValue(path: string, protoType: string, value: unknown): Violation {
  return { field: path, description: `Invalid value at '${path}' (${protoType}), ${JSON.stringify(value)}` };
}

function walkMessage(value: Record<string, unknown>, message: string, path: string, found: Violation[]): void {
  const fields = MESSAGES[message];
  for (const [name, child] of Object.entries(value)) {
    const field = fields[camelOf(name)];
    if (field === undefined) found.push(unknownName(name, path));
    else walkField(field, name, child, path, found);
  }
}

function walkField(field: Field, name: string, value: unknown, parent: string, found: Violation[]): void {
  const path = join(parent, snakeOf(camelOf(name)));
  if (field === 'scalar' || field === 'any' || value === null) return;
  if (field === 'type') {
    if (Array.isArray(value)) found.push(unknownName(name, parent, 'Proto field is not repeating, cannot start list.'));
    else if (typeof value !== 'string' || !TYPES.includes(value.toUpperCase())) found.push(invalidValue(path, `${PROTO_PACKAGE}.Type`, value));
    return;
  }
  const repeated = typeof field === 'object' && field.repeated === true;
  if (Array.isArray(value) && !repeated) {
    found.push(unknownName(name, parent, 'Proto field is not repeating, cannot start list.'));
    return;
  }
  if (field === 'struct') {
    if (!isObject(value)) found.push(invalidValue(path, 'type.googleapis.com/google.protobuf.Struct', value));
    return;
  }
  const elements = Array.isArray(value) ? value.map((element, i) => [element, `${path}[${i}]`] as const) : [[value, path] as const];
  for (const [element, at] of elements) {
    if (!isObject(element)) found.push(invalidValue(at, `${PROTO_PACKAGE}.${field.message}`, element));
    else if (field.map) Object.values(element).forEach((entry, i) => walkField(m(field.message), 'value', entry, `${at}[${i}]`, found));
    else walkMessage(element, field.message, at, found);
  }
}
