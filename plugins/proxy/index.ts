// Stage `proxy`: relays the request to the group's first enabled account through http-proxy-3, streaming as bytes arrive.
import { Agent as HttpAgent, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createProxyServer } from 'http-proxy-3';
import { GatewayError } from '../../core/errors.ts';
import type { Plugin } from '../../core/types.ts';
import { relay } from './relay.ts';
import { upstreamBody, upstreamHeaders, upstreamPath } from './upstream-request.ts';

interface Options { header_timeout_ms: number; connect_timeout_ms: number; keepalive_ms: number; max_sockets: number; usage: boolean }

/** http-proxy-3 only calls .pipe() on its buffer option; a one-write source avoids a stream per request. */
const bodySource = (bytes: Buffer) => ({ pipe: (dest: NodeJS.WritableStream) => dest.end(bytes) }) as unknown as NodeJS.ReadableStream;

interface Pending { onResponse: (res: IncomingMessage) => void; upstreamReq?: ClientRequest }

export const proxy: Plugin<Options> = {
  name: 'proxy',
  description: 'Sends the request to an upstream account of the group and relays the answer.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      header_timeout_ms: { type: 'integer', minimum: 1, default: 300_000, description: 'Longest wait for the upstream response headers before answering 504.' },
      connect_timeout_ms: { type: 'integer', minimum: 1, default: 10_000, description: 'Longest wait for the upstream TCP/TLS connection.' },
      keepalive_ms: { type: 'integer', minimum: 0, default: 10_000, description: 'Send the format\'s keepalive frame when a stream is silent this long (0 = never).' },
      max_sockets: { type: 'integer', minimum: 1, default: 256, description: 'Keep-alive connections per upstream origin.' },
      usage: { type: 'boolean', default: true, description: 'Read usage from answers; false where an answer repeats usage already counted (reading a stored response).' },
    },
  },
  create(options, env) {
    const server = createProxyServer({ selfHandleResponse: true, changeOrigin: true, ignorePath: true, connectTimeout: options.connect_timeout_ms });
    const pending = new WeakMap<object, Pending>();
    server.on('proxyRes', (upstreamRes, req) => pending.get(req)?.onResponse(upstreamRes));
    server.on('proxyReq', (upstreamReq, req) => { const p = pending.get(req); if (p) p.upstreamReq = upstreamReq; });
    const agents = new Map<string, HttpAgent>();
    const agentFor = (url: URL) => {
      let agent = agents.get(url.origin);
      if (!agent) {
        const opts = { keepAlive: true, maxSockets: options.max_sockets, maxFreeSockets: 64 };
        agents.set(url.origin, agent = url.protocol === 'https:' ? new HttpsAgent(opts) : new HttpAgent(opts));
      }
      return agent;
    };

    return async (ctx) => {
      const group = ctx.group;
      if (!group || !ctx.platform) throw new GatewayError(500, 'stage_order', 'proxy needs group-check before it');
      const account = group.accounts.find((a) => a.enabled);
      if (!account) throw new GatewayError(503, 'NO_ACCOUNT_AVAILABLE', `No upstream account is available for group "${group.name}"`);
      ctx.account = account;
      // base_url may carry a path prefix (https://host/api); the route's upstream path goes after it.
      const target = new URL(`${account.base_url ?? ctx.platform.base_url}${upstreamPath(ctx)}`);
      const body = await upstreamBody(ctx);
      // http-proxy-3 copies the outgoing headers from req.headers: hand it the cleaned set.
      ctx.req.headers = upstreamHeaders(ctx, account, env, body);
      ctx.timings.upstreamStart = performance.now();

      await new Promise<void>((resolve, reject) => {
        let answered = false;
        const timer = setTimeout(() => {
          if (answered) return;
          answered = true;
          ctx.outcome = 'timeout';
          reject(new GatewayError(504, 'upstream_timeout', `The upstream did not answer within ${options.header_timeout_ms} ms`));
          entry.upstreamReq?.destroy();
        }, options.header_timeout_ms);
        const entry: Pending = {
          onResponse(upstreamRes) {
            if (answered) { upstreamRes.destroy(); return; }
            answered = true;
            clearTimeout(timer);
            ctx.timings.firstByte = performance.now();
            relay(ctx, upstreamRes, options.keepalive_ms, options.usage).then(resolve, reject);
          },
        };
        pending.set(ctx.req, entry);
        ctx.res.once('close', () => {
          if (answered) return;
          answered = true;
          clearTimeout(timer);
          ctx.outcome = 'disconnected';
          resolve();
        });
        server.web(ctx.req, ctx.res, {
          target, agent: agentFor(target), buffer: body.bytes ? bodySource(body.bytes) : undefined,
        }, (err) => {
          if (answered) return;
          answered = true;
          clearTimeout(timer);
          ctx.outcome = 'failed';
          ctx.log.warn({ req_id: ctx.id, account: account.id, code: (err as NodeJS.ErrnoException).code }, 'upstream request failed');
          reject(new GatewayError(502, 'upstream_unreachable', `The upstream for account "${account.id}" could not be reached`));
        });
      });
    };
  },
};
