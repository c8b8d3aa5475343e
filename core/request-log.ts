// The one log line per request: what it asked for, who asked (address, user agent), what it cost, and for a request that
// failed or was cut, why: who ended it (client, upstream or gateway), the error's type and the upstream's status.
import type { IncomingMessage } from 'node:http';
import { ENDINGS } from './ending.ts';
import type { GatewayError } from './errors.ts';
import type { Ctx, EndedBy } from './types.ts';

/** A user agent is the client's own text: kept to this many characters. */
const AGENT_CHARS = 256;

/** Who made the request; read when it arrives (a socket that has closed no longer knows its peer). */
export interface Caller { client: string | undefined; user_agent: string | undefined }

/** `address`: the client's address by server.trusted_proxies (client-address.ts). */
export function callerOf(req: IncomingMessage, address: (req: IncomingMessage) => string): Caller {
  const agent = req.headers['user-agent'];
  return { client: address(req) || undefined, user_agent: agent === undefined ? undefined : agent.slice(0, AGENT_CHARS) };
}

interface Ending { ended_by: EndedBy; error: string; upstream_status?: number }

/**
 * Why a request did not complete, or undefined when it did. `thrown` is the error the gateway answered with; `cut`
 * is true once a drain past its timeout cut the connections still open (then a disconnect is the gateway's doing).
 */
function ending(ctx: Ctx, status: number, thrown: GatewayError | undefined, cut: boolean): Ending | undefined {
  const last = ctx.attempts?.at(-1);
  const upstream_status = last?.status || undefined;
  if (ctx.outcome === 'disconnected' && cut) return { ended_by: 'gateway', error: 'drain_timeout', upstream_status };
  const said = ctx.outcome === undefined ? undefined : ENDINGS[ctx.outcome].said;
  if (said) return { ended_by: ctx.endedBy ?? said.by, error: said.error, upstream_status };
  if (thrown) return { ended_by: ctx.endedBy ?? 'gateway', error: thrown.code, upstream_status };
  if (ctx.outcome !== 'failed') return undefined;
  // The upstream's own answer failed it: an error status passed through (the status says which), or an error event
  // inside a 200 stream.
  return { ended_by: ctx.endedBy ?? 'upstream', error: status >= 400 ? 'upstream_error' : 'stream_error', upstream_status: upstream_status ?? status };
}

export function requestRecord(ctx: Ctx, caller: Caller, status: number, thrown: GatewayError | undefined, cut: boolean) {
  return {
    req_id: ctx.id, client_request_id: ctx.clientRequestId, method: ctx.req.method, route: ctx.route.path, key_id: ctx.key?.id, group: ctx.group?.name, account: ctx.account?.id,
    attempts: ctx.attempts, model: ctx.model, upstream_model: ctx.upstreamModel, stream: ctx.stream, status, outcome: ctx.outcome,
    ...ending(ctx, status, thrown, cut),
    usage: ctx.usage, cost: ctx.cost, duration_ms: Math.round((ctx.timings.end ?? performance.now()) - ctx.timings.start),
    ...caller,
  };
}
