// Builds the per-request context: ids, timings, and the request body read once (with the size limit) and parsed lazily.
import { randomUUID } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { RequestEnd } from './ending.ts';
import { coreErrors, GatewayError } from './errors.ts';
import { expectsContinue } from './http-rules.ts';
import { parseBody } from './json-body.ts';
import { join, turnAfter } from './slices.ts';
import type { AccountConfig, Attempt, ContextVar, Ctx, EndHook, FormatAdapter, GroupConfig, KeyConfig, PlatformConfig, RouteConfig, StreamedText, Timings } from './types.ts';
import type { Usage } from './usage.ts';

export function readBody(req: IncomingMessage, limit: number, res?: ServerResponse): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(coreErrors.request_too_large(limit));
  // A client that waits for 100 Continue gets it now, when its body is wanted: after authentication, never before a 413.
  if (res && !res.headersSent && expectsContinue(req)) res.writeContinue();
  return new Promise((resolve, reject) => {
    // Most bodies arrive in one chunk: an array is made only for a second one.
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    let size = 0;
    // Once the body is in (or refused), the listeners go: later stages add their own and need none of these.
    const done = () => { req.off('data', onData).off('end', onEnd).off('aborted', onAborted).off('error', onAborted); };
    // What is left unread is the server's to drain or cut (server.ts leaveBody), never read here to no end.
    const fail = (err: GatewayError) => { done(); req.pause(); reject(err); };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return fail(coreErrors.request_too_large(limit));
      if (!first) first = chunk;
      else (more ??= [first]).push(chunk);
    };
    const onEnd = () => { done(); resolve(more ? join(more, size) : (first ?? Buffer.alloc(0))); };
    const onAborted = () => fail(coreErrors.request_aborted());
    req.on('data', onData).on('end', onEnd).on('aborted', onAborted).on('error', onAborted);
  });
}

/**
 * The gateway's own request id: random and made per request. It is the identity of the usage record, the settlement
 * marker and every lease, so a client can neither repeat nor collide with one.
 */
export const newRequestId = (): string => randomUUID();

/** Headers a client names its own request id in, first present wins. */
const CLIENT_ID_HEADERS = ['x-request-id', 'x-client-request-id'];

/** The client's own request id when well formed: logged, recorded (client_request_id) and echoed, never trusted. */
export function clientRequestId(req: IncomingMessage): string | undefined {
  for (const name of CLIENT_ID_HEADERS) {
    const given = req.headers[name];
    if (typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given)) return given;
  }
  return undefined;
}

interface CtxInit {
  id: string; clientRequestId: string | undefined; req: IncomingMessage; res: ServerResponse; route: RouteConfig; format: FormatAdapter;
  path: string; search: string; params: Record<string, string>; log: Logger; bodyLimit: number; start: number;
}

// A class, not a `{ start }` literal: V8 may pretenure such a literal, which then kept every request alive past minor
// GCs (docs/performance.md).
class RequestTimings implements Timings {
  start: number;
  upstreamStart: number | undefined = undefined;
  firstByte: number | undefined = undefined;
  upstreamEnd: number | undefined = undefined;
  end: number | undefined = undefined;
  constructor(start: number) { this.start = start; }
}

/**
 * One request's context; the methods live on the prototype, so a request costs no closures here. Its ending (outcome,
 * who ended it, the end hooks) is RequestEnd's.
 */
export class RequestCtx extends RequestEnd implements Ctx {
  id: string; clientRequestId: string | undefined; req: IncomingMessage; res: ServerResponse; route: RouteConfig; format: FormatAdapter;
  path: string; search: string; params: Record<string, string>; log: Logger; timings: Timings;
  key: KeyConfig | undefined = undefined;
  group: GroupConfig | undefined = undefined;
  platform: PlatformConfig | undefined = undefined;
  account: AccountConfig | undefined = undefined;
  model: string | undefined = undefined;
  upstreamModel: string | undefined = undefined;
  upstreamFormat: FormatAdapter | undefined = undefined;
  stream = false;
  usage: Usage | undefined = undefined;
  // Declared, so that setting them (a stream's text, a failover's attempts) keeps every context one shape to readers.
  streamed: StreamedText | undefined = undefined;
  attempts: Attempt[] | undefined = undefined;
  cost: number | undefined = undefined;
  #vars: Map<string, unknown> | undefined = undefined;
  /** Set on a scratch copy (scratchCtx): the request's own context, whose variables it reads until it sets its own. */
  #under: RequestCtx | undefined = undefined;
  #bodyLimit: number;
  #body: Promise<Buffer> | undefined = undefined;
  #parsed: Promise<Record<string, unknown>> | undefined = undefined;
  #changed = false;
  #url: URL | undefined = undefined;

  constructor(init: CtxInit) {
    super();
    this.id = init.id; this.clientRequestId = init.clientRequestId; this.req = init.req; this.res = init.res; this.route = init.route; this.format = init.format;
    this.path = init.path; this.search = init.search; this.params = init.params; this.log = init.log;
    this.timings = new RequestTimings(init.start);
    this.#bodyLimit = init.bodyLimit;
  }

  // A scratch copy's hooks are its request's: they run when the request ends.
  onEnd(hook: EndHook): void { if (this.#under !== undefined) this.#under.onEnd(hook); else super.onEnd(hook); }

  get<T>(variable: ContextVar<T>): T | undefined {
    if (this.#under !== undefined && !this.#vars?.has(variable.name)) return this.#under.get(variable);
    return this.#vars?.get(variable.name) as T | undefined;
  }
  set<T>(variable: ContextVar<T>, value: T | undefined): void { (this.#vars ??= new Map()).set(variable.name, value); }
  get url(): URL { return (this.#url ??= new URL(this.path + this.search, 'http://gateway')); }
  // A scratch copy reads the body through the request's context, once for both (unless it set its own).
  body(): Promise<Buffer> { return (this.#body ??= this.#under?.body() ?? readBody(this.req, this.#bodyLimit, this.res)); }
  json(): Promise<Record<string, unknown>> { return (this.#parsed ??= this.#under !== undefined && !this.#changed ? this.#under.json() : this.#parse()); }
  setJson(value: Record<string, unknown>): void { this.#parsed = Promise.resolve(value); this.#changed = true; }
  setBody(bytes: Buffer): void { this.#body = Promise.resolve(bytes); this.#parsed = undefined; this.#changed = true; }
  bodyChanged(): boolean { return this.#changed; }
  async #parse(): Promise<Record<string, unknown>> {
    const bytes = await this.body();
    const body = await parseBody(bytes);
    await turnAfter(bytes.length);
    return checkShape(this.format, body);
  }

  /** A copy of this context (scratchCtx): the same fields and body, its variables its own over this one's. */
  scratch(): RequestCtx {
    const s = new RequestCtx({ ...this, start: this.timings.start, bodyLimit: this.#bodyLimit });
    Object.assign(s, this);
    s.#body = this.#body;
    s.#parsed = this.#parsed;
    s.#changed = this.#changed;
    s.#url = this.#url;
    s.#under = this;
    return s;
  }

  /** A scratch copy's variables become its request's own (keepScratch). */
  keep(): void {
    const under = this.#under;
    if (under !== undefined && this.#vars !== undefined) for (const [name, value] of this.#vars) (under.#vars ??= new Map()).set(name, value);
  }
}

/**
 * The request's context as a throwaway reader sees it (a stream's opening frames, read before an attempt is committed
 * to: proxy/attempt.ts): what it sets stays its own, so an attempt that fails leaves no state (a stream position, an
 * id) behind for the next one. A copy, not an object with the context as its prototype (Object.create): a prototype
 * gets a shape of its own, and every reader of contexts would go megamorphic (docs/performance.md).
 */
export function scratchCtx(ctx: Ctx): Ctx {
  if (ctx instanceof RequestCtx) return ctx.scratch();
  // A context made some other way (a test's): variables of its own over it, by prototype.
  const own = new Map<string, unknown>();
  return Object.create(ctx, {
    get: { value: <T>(v: ContextVar<T>) => (own.has(v.name) ? own.get(v.name) : ctx.get(v)) as T | undefined },
    set: { value: <T>(v: ContextVar<T>, value: T | undefined) => { own.set(v.name, value); } },
    keep: { value: () => { for (const [name, value] of own) ctx.set({ name }, value); } },
  }) as Ctx;
}

/**
 * What a scratch copy set becomes the request's: the reading it did turned out to be the request's own (a stream's
 * opening, once its attempt is committed to: the scanner that read it goes on for the request).
 */
export function keepScratch(scratch: Ctx): void {
  (scratch as Ctx & { keep(): void }).keep();
}

export function createCtx(init: CtxInit): RequestCtx {
  return new RequestCtx(init);
}

const ajv = new Ajv({ allErrors: false, strict: false });
const shapes = new WeakMap<FormatAdapter, ValidateFunction>();

/** Refuse a body the format's request schema rejects, so a malformed request is never forwarded. */
function checkShape(format: FormatAdapter, body: Record<string, unknown>): Record<string, unknown> {
  if (!format.requestSchema) return body;
  let validate = shapes.get(format);
  if (!validate) shapes.set(format, validate = ajv.compile(format.requestSchema));
  if (validate(body)) return body;
  const e = validate.errors![0];
  const missing = (e.params as { missingProperty?: string }).missingProperty;
  const at = e.instancePath.slice(1).replace(/\//g, '.');
  const field = missing ? (at ? `${at}.${missing}` : missing) : at;
  const message = missing ? `missing required field "${field}"` : `${field ? `${field} ` : ''}${e.message}`;
  throw coreErrors.invalid_body({ kind: 'invalid', detail: message }, { param: field || undefined });
}
