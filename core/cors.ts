// CORS for browser apps that call the gateway's model routes directly: for the origins server.cors.origins allows (exact
// origins, or "*"), preflights are answered and answers carry the headers a browser needs; other origins get nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Answer headers a browser script may read besides the safelisted ones: ids, retry hints, the gateway's own. */
const EXPOSE = 'x-request-id, x-client-request-id, request-id, x-upstream-request-id, retry-after, retry-after-ms, x-should-retry, x-gateway-limit, x-gateway-overhead-ms, x-gateway-warning';
/** How long (seconds) a browser may reuse a preflight's answer. */
const MAX_AGE = '600';
/** A preflight's Access-Control-Request-Headers: HTTP tokens separated by commas, echoed back only when well formed. */
const HEADER_LIST = /^[!#$%&'*+.^`|~\w-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^`|~\w-]+)*$/;
const METHOD = /^[A-Z]{1,16}$/;

// The admin API never answers cross-origin: its token is the operator's, the console that uses it is served by the gateway
// on its own origin (it needs no CORS), and an origin list written for model routes (even "*") must not open it to them.
const CLOSED_PREFIX = '/admin/';

/**
 * Sets the CORS headers of an allowed origin's request; answers its preflight when a route takes the method it announces
 * (true: answered, nothing else to do). Undefined when no origin is allowed.
 */
export type Cors = (req: IncomingMessage, res: ServerResponse, path: string) => boolean;

/** `routed(method, path)`: whether a route takes this method and path (a preflight for anything else is not answered). */
export function createCors(origins: readonly string[], routed: (method: string, path: string) => boolean): Cors | undefined {
  if (!origins.length) return undefined;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return (req, res, path) => {
    const origin = req.headers.origin;
    if (typeof origin !== 'string' || path.startsWith(CLOSED_PREFIX) || !(any || allowed.has(origin))) return false;
    const allowOrigin = any ? { 'access-control-allow-origin': '*' } : { 'access-control-allow-origin': origin, vary: 'origin' };
    const method = req.headers['access-control-request-method'];
    if (req.method !== 'OPTIONS' || method === undefined) {
      for (const [name, value] of Object.entries(allowOrigin)) res.setHeader(name, value);
      res.setHeader('access-control-expose-headers', EXPOSE);
      return false;
    }
    // A preflight for what no route takes gets no CORS headers: the 404 or 405 that follows is refused by the browser.
    if (typeof method !== 'string' || !METHOD.test(method) || !routed(method, path)) return false;
    const asked = req.headers['access-control-request-headers'];
    res.writeHead(204, {
      ...allowOrigin,
      'access-control-allow-methods': method,
      ...(typeof asked === 'string' && HEADER_LIST.test(asked) ? { 'access-control-allow-headers': asked } : {}),
      'access-control-max-age': MAX_AGE,
      ...(any ? {} : { vary: 'origin, access-control-request-method, access-control-request-headers' }),
    }).end();
    req.resume();
    return true;
  };
}
