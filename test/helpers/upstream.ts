// A scripted upstream for proxy tests that must observe what the simulator cannot show, such as when the gateway hung up.
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Teardown { teardown(fn: () => unknown): void }

export interface Exchange {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** When the upstream response closed, and whether it had been fully written by then. */
  closedAt?: number;
  finished?: boolean;
  /** Settles when the response closes, finished or not. */
  closed: Promise<void>;
}

export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, exchange: Exchange) => void | Promise<void>;

export interface Upstream { url: string; port: number; exchanges: Exchange[] }

export async function startUpstream(t: Teardown, handler: UpstreamHandler): Promise<Upstream> {
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    let markClosed!: () => void;
    const exchange: Exchange = {
      method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: '', at: Date.now(),
      closed: new Promise<void>((resolve) => { markClosed = resolve; }),
    };
    exchanges.push(exchange);
    res.once('close', () => {
      exchange.closedAt = Date.now();
      exchange.finished = res.writableFinished;
      markClosed();
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => {
      exchange.body = Buffer.concat(chunks).toString('utf8');
      Promise.resolve(handler(req, res, exchange)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  t.teardown(() => new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  }));
  return { url: `http://127.0.0.1:${port}`, port, exchanges };
}

/** An OpenAI chat stream of `count` content chunks, one every `delayMs`, stopping early once the gateway hangs up. */
export function slowChatStream(count: number, delayMs: number): UpstreamHandler {
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (let i = 0; i < count; i++) {
      if (res.destroyed) return;
      const chunk = { id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content: `w${i} ` }, logprobs: null, finish_reason: null }] };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    if (!res.destroyed) res.end('data: [DONE]\n\n');
  };
}

/**
 * An HTTP server in front of `target()` that passes every request on as it is. `look` sees each request first: it may
 * count or note it, and answer it itself by returning true (the request then goes no further).
 */
export async function frontProxy(t: Teardown, target: () => string, look?: (req: IncomingMessage, res: ServerResponse) => boolean | void): Promise<string> {
  const server = createServer((req, res) => {
    if (look?.(req, res) === true) return;
    const up = request(target() + req.url, { method: req.method, headers: req.headers }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    });
    up.once('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
