// Raw HTTP helpers for the stage and e2e tests: JSON posts, exact headers, SSE data frames, native error envelopes, metrics.
import { request } from 'node:http';
import type { Test } from 'tap';

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** A chat body with one user turn; `extra` adds or overrides fields. */
export const chatBody = (model = 'gpt-4o-mini', content = 'Hello there, world!', extra: Record<string, unknown> = {}) =>
  ({ model, messages: [{ role: 'user', content }], ...extra });

/** POST a JSON body (an object is serialised, a string is sent as is). */
export function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

export interface RawResponse { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/** A request through node:http, so headers fetch forbids (connection, keep-alive, te, cookie…) can be sent. */
export function rawRequest(base: string, opts: { method?: string; path: string; headers?: Record<string, string | number>; body?: string; chunked?: boolean }): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    // Writing before end() makes node:http send the body chunked, without a content-length.
    if (opts.chunked && opts.body !== undefined) {
      req.write(opts.body);
      req.end();
    } else {
      req.end(opts.body);
    }
  });
}

/** The data payloads of an SSE body, in order (comments and blank frames skipped). */
export function sseData(text: string): string[] {
  return text.split('\n\n').filter((frame) => frame.startsWith('data: ')).map((frame) => frame.slice('data: '.length));
}

/** Asserts a gateway error in the OpenAI envelope (exact keys, status, code, type) and returns its error object. */
export async function expectOpenAIError(t: Test, res: Response, status: number, code: string, type: string): Promise<Record<string, unknown>> {
  t.equal(res.status, status, `status ${status} (${code})`);
  t.match(res.headers.get('content-type'), /^application\/json/, 'JSON error body');
  t.match(res.headers.get('x-request-id'), /^[\w.:-]{8,}$/, 'x-request-id on the error');
  const body = await res.json() as { error: Record<string, unknown> };
  t.same(Object.keys(body), ['error'], 'only the error key at the top level');
  t.same(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type'], 'OpenAI error fields');
  t.equal(body.error.code, code);
  t.equal(body.error.type, type);
  t.type(body.error.message, 'string');
  return body.error;
}

export async function metricsText(gatewayUrl: string): Promise<string> {
  const res = await fetch(gatewayUrl + '/metrics');
  return res.text();
}

/** The value of one exact metrics series line (name plus label block), or undefined when absent. */
export function metricValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
