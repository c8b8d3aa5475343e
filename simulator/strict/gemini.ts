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
  { refuses: 'a thoughtSignature this API did not mint', check: ({ request }) => signatureProblem(request) },
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
    return unseal('gemini', signature) === undefined ? bad('Corrupted thought signature.') : undefined;
  });
}
