// The canonical model every wire format translates to and from: a block-based request, a whole response, and a stream
// of block events. Vendor-neutral on purpose: each format's codec (adapters/<format>/codec/) maps its own grammar to
// this and back, so a new format costs one codec, and no pair of formats ever has code of its own. See docs/translation.md.
import type { JSONSchema, SseFrame } from './shapes.ts';
import type { Usage } from './usage.ts';

// ---- opaque provider data ----

/**
 * Something only the format that made it can read back (a thinking signature, encrypted reasoning, a thought
 * signature): tagged with that format's name. An encoder sends it upstream only when `format` is its own, and drops it
 * otherwise: one provider's signature never reaches another. Through a client of another format it travels wrapped
 * (adapters/shared/signatures.ts) in a field the client echoes back untouched.
 */
export interface Signed { format: string; value: string }

/** A prompt-caching hint on a block (a format's cache marker): where the cacheable prefix ends, and for how long. */
export interface CacheHint { ttl?: '5m' | '1h' }

// ---- content blocks ----

export interface TextBlock { type: 'text'; text: string; cache?: CacheHint; signature?: Signed }

/** Image or document bytes, inline or by reference. */
export type MediaSource =
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'url'; url: string }
  /** A provider's own file handle (a file id, a file URI): meaningful only to the format named. */
  | { kind: 'file'; format: string; id: string; mediaType?: string };

export interface ImageBlock { type: 'image'; source: MediaSource; detail?: 'low' | 'high' | 'auto'; cache?: CacheHint }
export interface FileBlock { type: 'file'; source: MediaSource; filename?: string; cache?: CacheHint }

/**
 * A call the model made. `arguments` is JSON text as the model produced it (a stream delivers it in fragments;
 * encoders that need an object parse it, and treat text that does not parse as `{}`). `id` is stable across turns:
 * decoders of formats without call ids mint one, and the client echoes it back in its tool result.
 */
export interface ToolCallBlock {
  type: 'tool_call';
  id: string;
  name: string;
  arguments: string;
  /** A freeform (custom) tool's call: `arguments` holds its raw text input, not JSON. */
  custom?: boolean;
  /** A signature the format puts on the call itself (not on a reasoning block). */
  signature?: Signed;
  cache?: CacheHint;
}

/** The answer to a call, in a user message. `name` is filled by decoders whose format names the tool in its result. */
export interface ToolResultBlock {
  type: 'tool_result';
  callId: string;
  name?: string;
  content: (TextBlock | ImageBlock | FileBlock)[];
  isError?: boolean;
  cache?: CacheHint;
}

/**
 * Reasoning the model showed (a format's thinking blocks, reasoning summaries or thought parts). `text` may be empty
 * when only an opaque form exists. `signature` (the format's own proof of the reasoning) and `redacted` (reasoning the
 * format hands back only encrypted) go back byte for byte to their own format; each codec names its fields.
 */
export interface ReasoningBlock {
  type: 'reasoning';
  text: string;
  signature?: Signed;
  redacted?: Signed;
  /** The provider's own item id for the reasoning, when it has one. */
  id?: Signed;
}

export type CanonBlock = TextBlock | ImageBlock | FileBlock | ToolCallBlock | ToolResultBlock | ReasoningBlock;

/**
 * One turn. Tool results are blocks of a user message (formats with separate tool messages become them).
 * A `system` message is an instruction given mid-conversation (chat allows it anywhere); encoders whose format has
 * no place for it there turn it into user text or fold it into the system prompt.
 */
export interface CanonMessage { role: 'user' | 'assistant' | 'system'; content: CanonBlock[] }

// ---- tools ----

export interface FunctionTool {
  kind: 'function';
  name: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema); encoders clean it for their target. */
  parameters: JSONSchema;
  strict?: boolean;
  cache?: CacheHint;
}

/** A freeform tool whose input is raw text (a coding agent's patch tool, say), optionally with a grammar. */
export interface CustomTool { kind: 'custom'; name: string; description?: string; format?: unknown; cache?: CacheHint }

export type CanonTool = FunctionTool | CustomTool;

export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

export type OutputFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: JSONSchema; strict?: boolean; description?: string };

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface ReasoningConfig {
  /** Whether reasoning is on at all (false: off where the target can turn it off). */
  enabled?: boolean;
  /** The effort of this answer: a format's per-turn setting (a system message's) wins over its request-wide one. */
  effort?: ReasoningEffort;
  /** A token budget for reasoning; -1 = the provider's dynamic budget. */
  budgetTokens?: number;
  /** Whether the client wants to see reasoning (each codec maps its own request field). */
  show?: boolean;
}

// ---- the request ----

/** What the request asks: an answer, or only the prompt's token count. */
export type Operation = 'generate' | 'count_tokens';

export interface CanonRequest {
  operation: Operation;
  /** The model as the upstream is to be asked (after model_map). */
  model: string;
  stream: boolean;
  /** The system prompt (instructions), in order. */
  system: TextBlock[];
  messages: CanonMessage[];
  tools: CanonTool[];
  toolChoice?: ToolChoice;
  /** false: at most one tool call per turn. */
  parallelToolCalls?: boolean;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Answers wanted (> 1 only where a target can give them; else refused). */
  n?: number;
  logprobs?: boolean;
  topLogprobs?: number;
  output?: OutputFormat;
  reasoning?: ReasoningConfig;
  /** The end user the client names (safety identifier, metadata.user_id). */
  user?: string;
  /**
   * Details only one format understands, by format name: what the client's own codec needs to answer in kind (usage
   * in streams, stream framing, storage and include options), and fields no other format has. An encoder reads only
   * its own format's entry.
   */
  extras: Record<string, Record<string, unknown>>;
}

// ---- the answer ----

/** Why the answer ended. */
export type StopReason = 'end' | 'stop_sequence' | 'max_tokens' | 'tool_use' | 'content_filter' | 'pause';

export interface CanonResponse {
  /** The upstream's id of the answer (a client encoder may keep or mint its own). */
  id: string;
  /** The model that answered, as the upstream named it. */
  model: string;
  content: CanonBlock[];
  stop: StopReason;
  stopSequence?: string;
  usage: Usage;
  /** Seconds since the epoch, when the upstream said. */
  created?: number;
  extras?: Record<string, Record<string, unknown>>;
}

/** The answer to a count_tokens request; `estimated` when no upstream counter exists and the gateway estimated it. */
export interface CanonCount { inputTokens: number; estimated?: boolean }

// ---- the stream ----

/** The opening of a block in a stream; its content arrives as deltas. */
export type BlockStart =
  | { type: 'text' }
  | { type: 'reasoning'; id?: Signed }
  | { type: 'tool_call'; id: string; name: string; custom?: boolean; signature?: Signed }
  /** A block that arrives whole (an image an upstream generated, a redacted reasoning block). */
  | { type: 'whole'; block: CanonBlock };

/**
 * Events of one answer, in order. Blocks are numbered from 0 in the order they start; deltas of different blocks may
 * interleave (parallel tool calls), and an encoder whose format allows one open block at a time buffers.
 * `finish` comes once, after every block ended, with the final usage; `error` instead of it when the answer failed.
 */
export type CanonEvent =
  | { type: 'start'; id: string; model: string; created?: number; usage?: Partial<Usage> }
  | { type: 'block_start'; index: number; block: BlockStart }
  | { type: 'delta'; index: number; text?: string; arguments?: string; signature?: Signed }
  | { type: 'block_end'; index: number }
  | { type: 'usage'; usage: Partial<Usage> }
  | { type: 'finish'; stop: StopReason; stopSequence?: string; usage?: Usage }
  | { type: 'error'; error: CanonError };

// ---- errors ----

export type ErrorKind =
  | 'invalid_request' | 'authentication' | 'permission' | 'not_found' | 'request_too_large' | 'rate_limit'
  | 'billing' | 'overloaded' | 'server' | 'timeout';

export interface CanonError { status: number; kind: ErrorKind; message: string; code?: string; retryAfter?: string }

// ---- the codec of one format ----

/** What a codec works with besides the message itself. */
export interface CodecContext {
  /** The canonical request this answer belongs to (response-side calls), e.g. to restore shortened tool names. */
  request: CanonRequest;
  /** The model name the client asked for: what answers to the client name. */
  clientModel: string;
  /** Defaults a group sets for translated requests (e.g. max_tokens where the target requires one). */
  defaults: { maxOutputTokens: number };
}

export interface StreamDecoder {
  /** One upstream frame (an SSE frame; the elements of a JSON-array stream arrive as frames of their JSON text). */
  frame(frame: SseFrame): CanonEvent[];
  /** The upstream ended; events still owed (e.g. a finish an upstream implies by closing). */
  end(): CanonEvent[];
}

export interface StreamEncoder {
  /** Client frames (wire text) for one event; '' when it emits nothing yet. */
  event(event: CanonEvent): string;
  /** The stream ends here: anything still owed to the client (a closing sentinel frame, a JSON array's `]`). */
  end(): string;
  /**
   * A format whose stream ends with the whole answer (Responses' response.completed): that object, as sent, once it
   * was; a kept answer is then exactly what the stream said. Undefined otherwise (the answer is encoded from the events).
   */
  final?(): unknown;
}

/**
 * One wire format's translation, in both directions and both roles (client side and upstream side). A request or
 * parameter the other side cannot honour, when dropping it would change the answer, is refused by throwing a
 * GatewayError (400, `param` set): it reaches the client in its own format.
 */
export interface Codec {
  // client side: what a client sent, and what it gets back
  decodeRequest(body: Record<string, unknown>, op: Operation, ctx: { model: string; path: string; query: string }): CanonRequest;
  encodeResponse(res: CanonResponse, ctx: CodecContext): unknown;
  encodeStream(ctx: CodecContext): StreamEncoder;
  /** The client's content type for a stream (SSE for most; some formats stream a JSON array). */
  streamContentType(req: CanonRequest): string;
  encodeCount(count: CanonCount, ctx: CodecContext): unknown;
  encodeError(err: CanonError): { status: number; body: unknown; headers?: Record<string, string> };

  // upstream side: what goes to an upstream of this format, and what comes back
  /** `standIns`: tool calls sent with the format's placeholder because their own signature was not at hand. */
  encodeRequest(req: CanonRequest, ctx: CodecContext): { path: string; body: Record<string, unknown>; headers?: Record<string, string>; standIns?: number };
  decodeResponse(json: unknown, ctx: CodecContext): CanonResponse;
  decodeStream(ctx: CodecContext): StreamDecoder;
  decodeCount(json: unknown): CanonCount;
  decodeError(status: number, body: string): CanonError;
  /**
   * Server-side conversation state a client of this format relies on (a previous response to continue from): where
   * the upstream cannot keep it, the bridge keeps it in the gateway's store.
   */
  state?: ConversationState;
  /** False: no counting endpoint upstream; the bridge estimates locally and marks the answer estimated. */
  countsTokens: boolean;
  /** The upstream takes media only inline: the bridge fetches `url` images and files into base64 first. */
  inlineMedia: boolean;
  /**
   * The upstream signs the tool calls it makes and wants each signature back on its call (a signature per call, in adapters/):
   * for a client that does not give it back (`returnsCallSignatures`), the bridge keeps it in the store by the call.
   */
  signsCalls?: boolean;
  /** Whether a client of this format gives a tool call's signature back (in what its encoders showed it); default no. */
  returnsCallSignatures?(req: CanonRequest): boolean;
}

/** How a client format names stored answers, read by the bridge (the codec stays pure: the bridge does the storing). */
export interface ConversationState {
  /** The id of the stored answer this request continues, if it names one. */
  continues(req: CanonRequest): string | undefined;
  /** Whether the client wants this answer kept (false when it asked for no storage). */
  keeps(req: CanonRequest): boolean;
  /** Mints the id the client will see for this answer and writes it into the request, where the encoders read it. */
  name(req: CanonRequest): string;
}
