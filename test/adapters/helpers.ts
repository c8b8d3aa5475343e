// Drives a format adapter the way the proxy does: a minimal context, upstream SSE text split by THE parser, frames through the scanner.
import { Ajv } from 'ajv';
import type { Ctx, FormatAdapter, SseFrame, StreamScanner } from '../../core/types.ts';
import { SseParser } from '../../adapters/shared/sse.ts';

export interface FakeCtxInit {
  model?: string;
  upstreamModel?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  json?: Record<string, unknown>;
}

/** Context variables (Ctx.get / set) on a fake context, with the map itself to look into. */
export function varsOf<T extends object>(fake: T): T & { vars: Map<string, unknown>; get: Ctx['get']; set: Ctx['set'] } {
  const vars = new Map<string, unknown>();
  return Object.assign(fake, {
    vars,
    get: ((v) => vars.get(v.name)) as Ctx['get'],
    set: ((v, value) => { vars.set(v.name, value); }) as Ctx['set'],
  });
}

export function fakeCtx(init: FakeCtxInit = {}): Ctx {
  const raw = typeof init.body === 'string' ? Buffer.from(init.body) : init.body ?? Buffer.alloc(0);
  return varsOf({
    id: 'req_test_1',
    url: new URL(init.path ?? '/', 'http://gateway'),
    path: (init.path ?? '/').split('?')[0],
    search: (init.path ?? '').includes('?') ? `?${(init.path ?? '').split('?')[1]}` : '',
    req: { headers: init.headers ?? {} },
    model: init.model,
    upstreamModel: init.upstreamModel,
    body: async () => raw,
    json: async () => init.json ?? JSON.parse(raw.toString('utf8')),
  }) as unknown as Ctx;
}

/** Every frame of a complete SSE text; fails loudly if bytes are left over. */
export function framesOf(text: string): SseFrame[] {
  const parser = new SseParser();
  const frames = parser.push(text);
  if (parser.rest() !== '') throw new Error(`unterminated SSE frame: ${JSON.stringify(parser.rest())}`);
  return frames;
}

/** The upstream text fed through the scanner in small chunks, and what the client would receive (as stream-pump.ts builds it). */
export function scan(format: FormatAdapter, ctx: Ctx, upstream: string, chunkSize = 7): { scanner: StreamScanner; out: string } {
  const scanner = format.scanStream(ctx);
  const parser = new SseParser();
  let out = '';
  for (let i = 0; i < upstream.length; i += chunkSize) {
    for (const frame of parser.push(Buffer.from(upstream.slice(i, i + chunkSize)))) {
      const verdict = scanner.frame(frame);
      if (verdict === 'pass') out += frame.raw;
      else if (verdict !== 'drop') out += verdict.replace;
    }
  }
  return { scanner, out };
}

/** One `event:`/`data:` frame per [event, data] pair, with the given line end. */
export const sse = (events: Array<[string | undefined, unknown]>, eol = '\n'): string =>
  events.map(([event, data]) => `${event === undefined ? '' : `event: ${event}${eol}`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}${eol}${eol}`).join('');

/** Whether the format's request schema accepts a body (compiled as the core compiles it). */
export function schemaAccepts(format: FormatAdapter, body: unknown): boolean {
  const validate = new Ajv({ allErrors: false, strict: false }).compile(format.requestSchema ?? {});
  return validate(body) as boolean;
}
