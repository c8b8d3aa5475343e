// What the real Gemini API (generativelanguage v1beta) refuses, one row per rule, with Google's own words.
//
// Parse errors come first and all at once (gemini-proto.ts), then the request's meaning. Messages as quoted in public
// reports: "Please use a valid role: user, model." (CLIProxyAPI #17), "* GenerateContentRequest.contents[1].parts[0].data:
// required oneof field 'data' must have one initialized field" (CLIProxyAPI #1293), "Invalid value at
// 'contents[N].parts[0]' (oneof), oneof field 'data' is already set. Cannot set 'text'", "contents.parts must not be
// empty", "Corrupted thought signature." (proxypal #119). Proto JSON takes snake_case names as well as camelCase.
import type { ErrorSpec } from '../errors.ts';
import { isObject } from '../incoming.ts';
import { decode, unseal } from '../signatures.ts';
import { camelOf, parseErrors } from './gemini-proto.ts';
import { firstOf, firstRefusal, type Rule } from './rules.ts';

type Part = Record<string, unknown>;
type Content = Record<string, unknown>;

export interface GeminiSubject {
  /** The body as sent: a GenerateContentRequest, or a CountTokensRequest. */
  body: Record<string, unknown>;
  method: 'generate' | 'countTokens';
  /** The GenerateContentRequest inside (the body itself, or countTokens' generateContentRequest). */
  request: Record<string, unknown>;
  /** The model of the path: Gemini 3 models check the function calls' signatures of the turn in progress. */
  model?: string;
}

/** Gemini 3 signs the first function call of each step and refuses a step of the current turn that comes back without. */
export const signsCalls = (model: string | undefined): boolean => model !== undefined && /^gemini-3/.test(model);

/** What the simulator seals into the signature of a function call it makes: the call itself (name and arguments). */
export function callToken(call: unknown): string {
  const c = isObject(call) ? call : {};
  return `functionCall:${String(c.name)}:${stableJson(c.args ?? {})}`;
}

/** JSON with object keys sorted: the same call gives the same token however a client re-serialized it. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (isObject(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

const ROLES = ['user', 'model'];
/** The members of Part's `data` oneof; thought, thoughtSignature and the metadata fields sit beside it. */
const DATA_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult', 'toolCall', 'toolResponse'];
// Google documents this value for clients that cannot echo a real signature (ai.google.dev thought-signatures FAQ).
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

const bad = (message: string, details?: unknown[]): ErrorSpec => ({ status: 400, message, ...(details ? { details } : {}) });

export const geminiRules: readonly Rule<GeminiSubject>[] = [
  {
    refuses: 'fields the protos do not have (additionalProperties, $schema … in `parameters`), lists where one value goes, a functionResponse.response that is not an object',
    check: ({ body, method }) => {
      const violations = parseErrors(body, method === 'generate' ? 'GenerateContentRequest' : 'CountTokensRequest');
      if (violations.length === 0) return undefined;
      return bad(violations.map((v) => v.description).join('\n'), [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: violations }]);
    },
  },
  {
    refuses: 'missing contents',
    check: ({ request }) => (Array.isArray(request.contents) && request.contents.length > 0 && request.contents.every(isObject)
      ? undefined
      : bad('* GenerateContentRequest.contents: contents is not specified\n')),
  },
  {
    refuses: 'roles other than user and model',
    check: ({ request }) => firstOf(contentsOf(request), (content) => (content.role === undefined || ROLES.includes(content.role as string)
      ? undefined
      : bad('Please use a valid role: user, model.'))),
  },
  {
    refuses: 'a content without parts',
    check: ({ request }) => firstOf(contentsOf(request), (content, i) => (partsOf(content).length > 0
      ? undefined
      : bad(`* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`))),
  },
  { refuses: 'a part with two data fields (text and inlineData, …), or with none (an empty text)', check: ({ request }) => dataProblem(request) },
  { refuses: 'a thoughtSignature this API did not mint, or one it minted for another function call', check: ({ request }) => signatureProblem(request) },
  {
    refuses: 'Gemini 3: a step of the turn in progress whose first functionCall comes back without its thoughtSignature (the documented placeholder passes)',
    check: ({ request, model }) => (signsCalls(model) ? missingCallSignature(request) : undefined),
  },
];

export function refuseGemini(subject: GeminiSubject): ErrorSpec | undefined {
  return firstRefusal(geminiRules, subject);
}

/** Proto-JSON accepts snake_case as well as camelCase field names; this reads either. */
export function field(object: Record<string, unknown>, camel: string): unknown {
  return object[camel] ?? object[camel.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())];
}

function contentsOf(request: Record<string, unknown>): Content[] {
  return Array.isArray(request.contents) ? request.contents : [];
}

export function partsOf(content: unknown): Part[] {
  return isObject(content) && Array.isArray(content.parts) ? content.parts.filter(isObject) : [];
}

/** Each part with its proto path: contents[i].parts[j], and the system instruction's. */
function locatedParts(request: Record<string, unknown>): Array<{ part: Part; at: string }> {
  const system = partsOf(field(request, 'systemInstruction')).map((part, j) => ({ part, at: `system_instruction.parts[${j}]` }));
  return [...system, ...contentsOf(request).flatMap((content, i) => partsOf(content).map((part, j) => ({ part, at: `contents[${i}].parts[${j}]` })))];
}

function dataProblem(request: Record<string, unknown>): ErrorSpec | undefined {
  return firstOf(locatedParts(request), ({ part, at }) => {
    const data = Object.keys(part).filter((name) => DATA_FIELDS.includes(camelOf(name)));
    if (data.length > 1) return bad(`Invalid value at '${at}' (oneof), oneof field 'data' is already set. Cannot set '${data[1]}'`);
    // An empty string is proto3's default, so `text: ""` leaves the oneof unset.
    const set = data.filter((name) => part[name] !== '' && part[name] !== null);
    return set.length === 0 ? bad(`* GenerateContentRequest.${at}.data: required oneof field 'data' must have one initialized field\n`) : undefined;
  });
}

function signatureProblem(request: Record<string, unknown>): ErrorSpec | undefined {
  return firstOf(locatedParts(request), ({ part, at }) => {
    const signature = field(part, 'thoughtSignature');
    if (signature === undefined || signature === SKIP_SIGNATURE) return undefined;
    if (decode(signature) === undefined) return bad(`Invalid value at '${at}.thought_signature' (TYPE_BYTES), Base64 decoding failed for ${JSON.stringify(signature)}`);
    const sealed = unseal('gemini', signature);
    if (sealed === undefined) return bad('Corrupted thought signature.');
    // A signature minted for a function call goes back on that call, not on another.
    const call = field(part, 'functionCall');
    return sealed.startsWith('functionCall:') && (call === undefined || sealed !== callToken(call)) ? bad('Corrupted thought signature.') : undefined;
  });
}

/**
 * The turn in progress starts after the last user content with more than functionResponse parts; each model content
 * in it (a step) must carry a thoughtSignature on its first functionCall part (Google's words, ai.google.dev
 * thought-signatures: "Function call is missing a thought_signature in functionCall parts").
 */
function missingCallSignature(request: Record<string, unknown>): ErrorSpec | undefined {
  const contents = contentsOf(request);
  let from = 0;
  contents.forEach((content, i) => {
    if (content.role !== 'model' && partsOf(content).some((p) => field(p, 'functionResponse') === undefined)) from = i + 1;
  });
  return firstOf(contents.slice(from), (content) => {
    if (content.role !== 'model') return undefined;
    const parts = partsOf(content);
    const position = parts.findIndex((p) => field(p, 'functionCall') !== undefined);
    if (position < 0 || field(parts[position], 'thoughtSignature') !== undefined) return undefined;
    const name = String((field(parts[position], 'functionCall') as Record<string, unknown>).name);
    return bad(`Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${position + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`);
  });
}
