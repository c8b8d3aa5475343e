// The Response object a Responses client gets (whole, or inside lifecycle events): its id, its output items built from
// canonical blocks, usage in OpenAI's semantics, and the request fields the API echoes back.
import { randomBytes } from 'node:crypto';
import type { CanonBlock, CanonRequest, CodecContext } from '../../../core/canonical.ts';
import type { Usage } from '../../../core/usage.ts';
import { signedFor } from '../../shared/signatures.ts';
import { encryptedFor, summaryOf } from './reasoning.ts';
import { FORMAT } from './tables.ts';
import { isObj, type Obj } from './read.ts';

const echoOf = (ctx: CodecContext): Obj => ctx.request.extras[FORMAT] ?? {};

/** The id the client sees: the bridge's (extras.responseId, so that previous_response_id finds it), else a fresh one. */
export function responseIdOf(ctx: CodecContext): string {
  const given = echoOf(ctx).responseId;
  return typeof given === 'string' && given !== '' ? given : `resp_${randomBytes(24).toString('hex')}`;
}

/** Whether the client asked for reasoning's encrypted_content (Codex does, to replay it statelessly). */
export function asksEncrypted(req: CanonRequest): boolean {
  const include = req.extras[FORMAT]?.include;
  return Array.isArray(include) && include.includes('reasoning.encrypted_content');
}

export const wantsEncrypted = (ctx: CodecContext): boolean => asksEncrypted(ctx.request);

const PREFIX: Partial<Record<CanonBlock['type'], string>> = { text: 'msg', tool_call: 'fc', reasoning: 'rs', image: 'ig' };

/** An output item's id: derived from the response's, so the stream and the stored answer agree without state. */
export function itemIdFor(block: CanonBlock, responseId: string, outputIndex: number): string {
  const own = block.type === 'reasoning' ? signedFor(block.id, FORMAT) : undefined;
  if (own) return own;
  const prefix = block.type === 'tool_call' && block.custom ? 'ctc' : PREFIX[block.type] ?? 'item';
  return `${prefix}_${responseId.replace(/^resp_/, '')}_${outputIndex}`;
}

export const outputText = (text: string): Obj => ({ type: 'output_text', text, annotations: [], logprobs: [] });

/** A finished block as its completed output item, or undefined when Responses has no output item for it. */
export function outputItem(block: CanonBlock, id: string, encrypted: boolean): Obj | undefined {
  switch (block.type) {
    case 'text':
      return { id, type: 'message', status: 'completed', role: 'assistant', content: [outputText(block.text)] };
    case 'tool_call':
      return block.custom
        ? { id, type: 'custom_tool_call', status: 'completed', call_id: block.id, name: block.name, input: block.arguments }
        : { id, type: 'function_call', status: 'completed', call_id: block.id, name: block.name, arguments: block.arguments };
    case 'reasoning': {
      const encryptedContent = encrypted ? encryptedFor(block) : undefined;
      return { id, type: 'reasoning', summary: summaryOf(block.text), ...(encryptedContent !== undefined ? { encrypted_content: encryptedContent } : {}) };
    }
    case 'image':
      // An image the model made (Gemini image models): what an image_generation_call carries, when its bytes are here.
      return block.source.kind === 'base64' ? { id, type: 'image_generation_call', status: 'completed', result: block.source.data } : undefined;
    default:
      return undefined;
  }
}

export const hasOutputItem = (block: CanonBlock): boolean => outputItem(block, '', false) !== undefined;

export function encodeUsage(u: Usage): Obj {
  return {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cacheRead, ...(u.cacheWrite > 0 ? { cache_write_tokens: u.cacheWrite } : {}) },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: u.input + u.output,
  };
}

export interface ResponseState {
  id: string;
  createdAt: number;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  output: Obj[];
  usage: Obj | null;
  incompleteReason?: string;
  error?: { code: string; message: string };
}

/** The whole Response object, with the request's fields echoed as OpenAI echoes them (its defaults where not given). */
export function responseObject(ctx: CodecContext, state: ResponseState): Obj {
  const echo = echoOf(ctx);
  const text = isObj(echo.text) ? echo.text : {};
  const reasoning = isObj(echo.reasoning) ? echo.reasoning : {};
  const conversation = typeof echo.conversation === 'string' ? { id: echo.conversation } : echo.conversation;
  const optional: Obj = {};
  for (const field of ['service_tier', 'prompt_cache_key', 'safety_identifier', 'top_logprobs', 'max_tool_calls', 'prompt_cache_retention']) {
    if (echo[field] !== undefined) optional[field] = echo[field];
  }
  return {
    id: state.id,
    object: 'response',
    created_at: state.createdAt,
    status: state.status,
    completed_at: state.status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    instructions: echo.instructions ?? null,
    max_output_tokens: echo.max_output_tokens ?? null,
    model: ctx.clientModel,
    output: state.output,
    parallel_tool_calls: echo.parallel_tool_calls ?? true,
    previous_response_id: echo.previous_response_id ?? null,
    ...(conversation !== undefined ? { conversation } : {}),
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    store: echo.store ?? true,
    temperature: echo.temperature ?? 1,
    text: { ...text, format: text.format ?? { type: 'text' }, verbosity: text.verbosity ?? 'medium' },
    tool_choice: echo.tool_choice ?? 'auto',
    tools: echo.tools ?? [],
    top_p: echo.top_p ?? 1,
    truncation: echo.truncation ?? 'disabled',
    usage: state.usage,
    user: echo.user ?? null,
    metadata: echo.metadata ?? {},
    ...optional,
  };
}
