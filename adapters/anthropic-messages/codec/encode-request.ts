// A canonical request → the body an Anthropic upstream takes (POST /v1/messages, or /v1/messages/count_tokens).
import type { CanonRequest, CodecContext, ToolChoice } from '../../../core/canonical.ts';
import { cacheControl } from './cache.ts';
import { type Obj, untranslatable } from './check.ts';
import { type OutputTool, outputTool } from './structured.ts';
import { API_VERSION } from './tables.ts';
import { encodeThinking } from './thinking.ts';
import { encodeTool, encodeToolChoice } from './tools.ts';
import { encodeTurns, thinkingAllowed } from './turns.ts';

export function encodeRequest(req: CanonRequest, ctx: CodecContext): { path: string; body: Obj; headers: Record<string, string> } {
  refuseUnanswerable(req);
  const count = req.operation === 'count_tokens';
  const { turns, system: leading } = encodeTurns(req.messages);
  const system = [
    ...req.system.filter((b) => b.text !== '').map((b) => ({ type: 'text', text: b.text, ...cacheControl(b.cache) })),
    ...leading,
  ];
  const output = outputTool(req.output);
  const tools = [...req.tools.map(encodeTool), ...(output ? [output.tool] : [])];
  const choice = toolChoice(req, output);
  const maxTokens = req.maxOutputTokens ?? ctx.defaults.maxOutputTokens;
  const forced = choice?.type === 'required' || choice?.type === 'tool';
  const thinking = count ? undefined : encodeThinking(req.reasoning, maxTokens, forced);
  // Thinking the turns cannot carry would be refused: the request goes without thinking instead.
  const withThinking = thinking && thinkingAllowed(turns) ? thinking : undefined;

  const body: Obj = { model: req.model };
  if (!count) body.max_tokens = maxTokens;
  if (system.length) body.system = system;
  body.messages = turns;
  if (tools.length) {
    body.tools = tools;
    const wireChoice = encodeToolChoice(choice, req.parallelToolCalls);
    if (wireChoice) body.tool_choice = wireChoice;
  }
  if (withThinking) body.thinking = withThinking;
  if (!count) Object.assign(body, sampling(req, withThinking !== undefined), generation(req));
  return { path: count ? '/v1/messages/count_tokens' : '/v1/messages', body, headers: { 'anthropic-version': API_VERSION } };
}

/** What would change the answer and has no Anthropic form. */
function refuseUnanswerable(req: CanonRequest): void {
  if (req.n !== undefined && req.n > 1) throw untranslatable('This group\'s upstream gives one answer per request: n > 1 cannot be honoured', 'n');
  if (req.logprobs || (req.topLogprobs ?? 0) > 0) throw untranslatable('This group\'s upstream does not return log probabilities', req.logprobs ? 'logprobs' : 'top_logprobs');
}

/**
 * The choice after the structured-output tool joins the list: with no tools of the client's own (or none allowed) it is
 * forced; with tools the model must call one of them or answer through it (`any`); a named tool stays forced.
 */
function toolChoice(req: CanonRequest, output: OutputTool | undefined): ToolChoice | undefined {
  if (!output) return req.tools.length ? req.toolChoice : undefined;
  if (req.toolChoice?.type === 'tool') return req.toolChoice;
  if (req.tools.length === 0 || req.toolChoice?.type === 'none') return { type: 'tool', name: output.name };
  return { type: 'required' };
}

/** Sampling knobs: none with thinking on (the API refuses changed temperature and top_k then); temperature 0–1, top_p only alone. */
function sampling(req: CanonRequest, thinking: boolean): Obj {
  if (thinking) return {};
  const out: Obj = {};
  if (req.temperature !== undefined) out.temperature = Math.min(1, Math.max(0, req.temperature));
  else if (req.topP !== undefined) out.top_p = req.topP;
  if (req.topK !== undefined) out.top_k = req.topK;
  return out;
}

function generation(req: CanonRequest): Obj {
  const out: Obj = {};
  // The API refuses stop sequences that are only whitespace.
  const stop = (req.stop ?? []).filter((s) => s.trim() !== '');
  if (stop.length) out.stop_sequences = stop;
  if (req.user) out.metadata = { user_id: req.user };
  if (req.stream) out.stream = true;
  return out;
}
