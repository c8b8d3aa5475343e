// A client's Messages body (POST /v1/messages or /v1/messages/count_tokens) → the canonical request.
import type { CanonRequest, Operation, OutputFormat } from '../../../core/canonical.ts';
import { invalid, isObj, list, type Obj, obj, optInt, optNum, optStr, str, untranslatable } from './check.ts';
import { decodeMessages, decodeSystem } from './decode-messages.ts';
import { FORMAT } from './tables.ts';
import { decodeReasoning } from './thinking.ts';
import { decodeToolChoice, decodeTools } from './tools.ts';

// Fields only Anthropic has, kept for an Anthropic upstream and dropped for any other (context_management is what
// Claude Code's context-management beta sends).
const EXTRAS = ['context_management', 'service_tier', 'container', 'cache_control', 'inference_geo', 'speed'];

export function decodeRequest(body: Obj, op: Operation, ctx: { model: string }): CanonRequest {
  if (Array.isArray(body.mcp_servers) && body.mcp_servers.length > 0) {
    throw untranslatable('mcp_servers: Anthropic\'s MCP connector runs on Anthropic\'s side; this group\'s upstream cannot reach those servers', 'mcp_servers');
  }
  const output = outputFormat(body);
  const { messages, effort } = decodeMessages(body.messages);
  const reasoning = decodeReasoning(body, effort);
  const metadata = body.metadata === undefined || body.metadata === null ? {} : obj(body.metadata, 'metadata');
  const user = optStr(metadata.user_id, 'metadata.user_id');
  const maxOutputTokens = optInt(body.max_tokens, 'max_tokens');
  const temperature = optNum(body.temperature, 'temperature');
  const topP = optNum(body.top_p, 'top_p');
  const topK = optInt(body.top_k, 'top_k');
  const stop = body.stop_sequences === undefined || body.stop_sequences === null
    ? undefined
    : list(body.stop_sequences, 'stop_sequences').map((s, i) => str(s, `stop_sequences.${i}`));
  const extras = Object.fromEntries(EXTRAS.filter((key) => body[key] !== undefined && body[key] !== null).map((key) => [key, body[key]]));
  return {
    operation: op,
    model: ctx.model,
    stream: body.stream === true,
    system: decodeSystem(body.system),
    messages,
    tools: decodeTools(body.tools, 'tools'),
    ...decodeToolChoice(body.tool_choice, 'tool_choice'),
    ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(topP === undefined ? {} : { topP }),
    ...(topK === undefined ? {} : { topK }),
    ...(stop?.length ? { stop } : {}),
    ...(output ? { output } : {}),
    ...(reasoning ? { reasoning } : {}),
    ...(user ? { user } : {}),
    extras: Object.keys(extras).length ? { [FORMAT]: extras } : {},
  };
}

/** output_config.format, or the older beta's top-level output_format: {type: json_schema, schema}. */
function outputFormat(body: Obj): OutputFormat | undefined {
  const config = isObj(body.output_config) ? body.output_config : undefined;
  const [raw, param] = config?.format !== undefined ? [config.format, 'output_config.format'] : [body.output_format, 'output_format'];
  if (raw === undefined || raw === null) return undefined;
  const format = obj(raw, param);
  if (format.type !== 'json_schema') throw invalid(`unknown output format type "${String(format.type)}"`, `${param}.type`);
  // Anthropic's format has no name; OpenAI's and the output tool's need one.
  return { type: 'json_schema', name: 'output', schema: obj(format.schema, `${param}.schema`) };
}
