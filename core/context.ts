// Builds the per-request context: ids, timings, and the request body read once (with the size limit) and parsed lazily.
import { randomUUID } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { coreErrors, GatewayError } from './errors.ts';
import type { Ctx, FormatAdapter, RouteConfig } from './types.ts';

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(coreErrors.bodyTooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (err: GatewayError) => { req.off('data', onData); req.resume(); reject(err); };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return fail(coreErrors.bodyTooLarge(limit));
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    req.once('aborted', () => fail(coreErrors.bodyAborted()));
    req.once('error', () => fail(coreErrors.bodyAborted()));
  });
}

export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
}

interface CtxInit {
  id: string; req: IncomingMessage; res: ServerResponse; route: RouteConfig; format: FormatAdapter;
  path: string; search: string; params: Record<string, string>; log: Logger; bodyLimit: number; start: number;
}

export function createCtx(init: CtxInit): Ctx {
  let body: Promise<Buffer> | undefined;
  let parsed: Promise<Record<string, unknown>> | undefined;
  let changed = false;
  let url: URL | undefined;
  const ctx: Ctx = {
    id: init.id, req: init.req, res: init.res, route: init.route, format: init.format, path: init.path, search: init.search,
    get url() { return (url ??= new URL(init.path + init.search, 'http://gateway')); },
    params: init.params, log: init.log, timings: { start: init.start }, stream: false, flags: {},
    body: () => (body ??= readBody(init.req, init.bodyLimit)),
    json: () => (parsed ??= ctx.body().then((buf) => checkShape(init.format, parseObject(buf)))),
    setJson(value) { parsed = Promise.resolve(value); changed = true; },
    setBody(bytes) { body = Promise.resolve(bytes); parsed = undefined; changed = true; },
    bodyChanged: () => changed,
  };
  return ctx;
}

function parseObject(buf: Buffer): Record<string, unknown> {
  let value: unknown;
  try { value = JSON.parse(buf.toString('utf8')); } catch (err) { throw coreErrors.invalidJson((err as Error).message); }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw coreErrors.notAnObject();
  return value as Record<string, unknown>;
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
  throw new GatewayError(400, 'invalid_body', `Invalid request body: ${message}`, { param: field || undefined });
}
