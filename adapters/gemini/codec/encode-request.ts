// A canonical request → the body and path a Gemini upstream takes: contents, systemInstruction, function declarations
// with schemas cleaned to Gemini's OpenAPI subset, toolConfig, generationConfig (sampling, structured output, thinking).
import type { CanonRequest, CanonTool, CodecContext, ReasoningConfig, ToolChoice } from '../../../core/canonical.ts';
import { fitName, GEMINI_NAMES } from '../../shared/tool-names.ts';
import { encodeContents, leadingSystem } from './encode-contents.ts';
import type { Obj } from './read.ts';
import { untranslatable } from './read.ts';
import { RecursiveSchema, toOpenApi, withoutMarker } from './schema.ts';
import { BUDGET_BY_EFFORT, BUDGET_RANGE, FORMAT, MODE_TO_WIRE } from './tables.ts';

/** Gemini takes at most five stop sequences; dropping some would change where the answer ends. */
const MAX_STOP = 5;

export function encodeRequest(req: CanonRequest, _ctx: CodecContext): { path: string; body: Record<string, unknown>; standIns?: number } {
  const name = req.model.replace(/^models\//, '');
  const model = encodeURIComponent(name);
  // Leading system messages belong to the system prompt (docs/translation.md "System prompt"); later ones stay in place.
  const lead = leadingSystem(req.messages);
  const system = [...req.system, ...req.messages.slice(0, lead).flatMap((m) => m.content)]
    .flatMap((b) => (b.type === 'text' && b.text !== '' ? [{ text: b.text }] : []));
  const extras = req.extras[FORMAT] ?? {};
  const generation = generationConfig(req);
  const { contents, standIns } = encodeContents(req, lead);
  const body: Obj = {
    contents,
    ...(system.length > 0 ? { systemInstruction: { parts: system } } : {}),
    ...(req.tools.length > 0 ? { tools: [{ functionDeclarations: req.tools.map(declaration) }] } : {}),
    ...(req.tools.length > 0 && req.toolChoice ? { toolConfig: toolConfig(req.toolChoice) } : {}),
    ...(extras.safetySettings !== undefined ? { safetySettings: extras.safetySettings } : {}),
    ...(Object.keys(generation).length > 0 ? { generationConfig: generation } : {}),
  };
  if (req.operation === 'count_tokens') {
    // Bare contents count without the system prompt and tools; the whole request form counts them too.
    const whole = body.systemInstruction !== undefined || body.tools !== undefined;
    return {
      path: `/v1beta/models/${model}:countTokens`,
      body: whole ? { generateContentRequest: { model: `models/${name}`, ...body } } : { contents: body.contents },
    };
  }
  // Upstream streams are always SSE, whatever framing the client wanted: the decoder reads frames.
  return { path: `/v1beta/models/${model}:${req.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, body, ...(standIns > 0 ? { standIns } : {}) };
}

/**
 * One function declaration. Parameters go as `parameters` in Gemini's OpenAPI subset, the form every Gemini model and
 * Vertex take; a schema that refers to itself ($ref recursion) cannot be inlined and goes whole as parametersJsonSchema.
 * A function without parameters declares none (Gemini refuses an OBJECT with empty properties).
 */
function declaration(tool: CanonTool): Obj {
  const name = fitName(tool.name, GEMINI_NAMES);
  const description = tool.description ? { description: tool.description } : {};
  if (tool.kind === 'custom') {
    // A freeform tool becomes a function taking its raw text as `input` (docs/translation.md "Tools").
    return { name, ...description, parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] } };
  }
  const properties = tool.parameters.properties;
  if (properties === undefined || (typeof properties === 'object' && properties !== null && Object.keys(properties).length === 0)) {
    return { name, ...description };
  }
  try {
    return { name, ...description, parameters: toOpenApi(tool.parameters) };
  } catch (err) {
    if (!(err instanceof RecursiveSchema)) throw err;
    return { name, ...description, parametersJsonSchema: withoutMarker(tool.parameters) };
  }
}

function toolConfig(choice: ToolChoice): Obj {
  const mode = MODE_TO_WIRE[choice.type];
  return { functionCallingConfig: { mode, ...(choice.type === 'tool' ? { allowedFunctionNames: [fitName(choice.name, GEMINI_NAMES)] } : {}) } };
}

function generationConfig(req: CanonRequest): Obj {
  if ((req.stop?.length ?? 0) > MAX_STOP) throw untranslatable(`Gemini takes at most ${MAX_STOP} stop sequences`, 'stop');
  const output = req.output;
  const thinking = req.reasoning ? thinkingConfig(req.reasoning, req.model) : undefined;
  const config: Obj = {
    maxOutputTokens: req.maxOutputTokens,
    // Gemini's range is 0–2, as OpenAI's; Anthropic's 0–1 fits inside it.
    temperature: req.temperature === undefined ? undefined : Math.min(2, Math.max(0, req.temperature)),
    topP: req.topP,
    topK: req.topK,
    stopSequences: req.stop && req.stop.length > 0 ? req.stop : undefined,
    seed: req.seed,
    presencePenalty: req.presencePenalty,
    frequencyPenalty: req.frequencyPenalty,
    candidateCount: req.n !== undefined && req.n > 1 ? req.n : undefined,
    responseLogprobs: req.logprobs ? true : undefined,
    logprobs: req.logprobs && req.topLogprobs !== undefined ? req.topLogprobs : undefined,
    responseMimeType: output && output.type !== 'text' ? 'application/json' : undefined,
    responseJsonSchema: output?.type === 'json_schema' ? withoutMarker(output.schema) : undefined,
    thinkingConfig: thinking && Object.keys(thinking).length > 0 ? thinking : undefined,
  };
  return Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));
}

/**
 * Reasoning → thinkingConfig: a budget (given, or from the effort per docs/translation.md), fitted to the model family's
 * range; off is budget 0 where the model can turn thinking off. includeThoughts when the client wants to see them.
 */
function thinkingConfig(reasoning: ReasoningConfig, model: string): Obj {
  const range = BUDGET_RANGE.find((r) => r.model.test(model)) ?? BUDGET_RANGE[BUDGET_RANGE.length - 1];
  let budget = reasoning.enabled === false ? 0 : reasoning.budgetTokens ?? (reasoning.effort ? BUDGET_BY_EFFORT[reasoning.effort] : undefined);
  if (budget !== undefined && budget !== -1) {
    budget = budget === 0 && range.off ? 0 : Math.min(range.max, Math.max(range.min, budget));
  }
  return {
    ...(budget !== undefined ? { thinkingBudget: budget } : {}),
    ...(reasoning.show && budget !== 0 ? { includeThoughts: true } : {}),
  };
}
