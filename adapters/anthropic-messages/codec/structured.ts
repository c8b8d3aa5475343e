// Structured output on Anthropic: a forced tool named after the schema, whose input is the answer (docs/translation.md
// "Structured output"). The request side declares it; the answer side turns its call back into text. Both derive it
// from the canonical request alone, so no state is kept between them.
import type { CanonRequest, OutputFormat } from '../../../core/canonical.ts';
import type { JSONSchema } from '../../../core/types.ts';
import { ANTHROPIC_NAMES, fitName, restoreName } from '../../shared/tool-names.ts';
import type { Obj } from './check.ts';
import { objectSchema } from './tools.ts';

export interface OutputTool {
  /** The tool's name as the upstream sees it. */
  name: string;
  /** The schema's root is not an object: the answer rides in the tool input's `value`. */
  wrapped: boolean;
  /** The tool declaration. */
  tool: Obj;
}

const DESCRIPTION = 'Give your final answer by calling this tool: its input is the answer.';

/** The output tool a request's output format stands for, if it asks for JSON. */
export function outputTool(output: OutputFormat | undefined): OutputTool | undefined {
  if (!output || output.type === 'text') return undefined;
  const name = fitName(output.type === 'json_schema' ? output.name || 'json_output' : 'json_output', ANTHROPIC_NAMES);
  const schema: JSONSchema = output.type === 'json_schema' ? output.schema : { type: 'object' };
  // A root without a type but with properties is an object schema too.
  const wrapped = schema.type !== undefined && schema.type !== 'object';
  const description = output.type === 'json_schema' && output.description ? `${output.description}\n\n${DESCRIPTION}` : DESCRIPTION;
  const input_schema = wrapped ? { type: 'object', properties: { value: schema }, required: ['value'] } : objectSchema(schema);
  return { name, wrapped, tool: { name, description, input_schema } };
}

/** What a tool_use of an upstream answer is: the output tool's answer, or a call of one of the client's tools. */
export type AnswerCall =
  | { kind: 'output'; wrapped: boolean }
  | { kind: 'call'; name: string; custom: boolean };

export function answerCall(wireName: string, request: CanonRequest): AnswerCall {
  const out = outputTool(request.output);
  if (out && wireName === out.name) return { kind: 'output', wrapped: out.wrapped };
  const name = restoreName(wireName, request, ANTHROPIC_NAMES);
  return { kind: 'call', name, custom: request.tools.some((tool) => tool.name === name && tool.kind === 'custom') };
}

/** The answer text an output tool's input stands for. */
export const outputText = (input: Obj, wrapped: boolean): string => JSON.stringify(wrapped ? input.value ?? null : input);

/** A freeform tool's raw text from its `{input}` object. */
export const customText = (input: Obj): string => (typeof input.input === 'string' ? input.input : JSON.stringify(input));
