// The HTTP rules a request must meet before any route runs, answered by the gateway in the route's format (server.ts)
// rather than by Node before anything is known: a target that is a path, a Host header in HTTP/1.1, no expectation but
// 100-continue. And when `100 Continue` is due: once the body is first read, after authentication (context.ts).
import type { IncomingMessage } from 'node:http';
import { coreErrors, type GatewayError } from './errors.ts';

/** Node's own test of an Expect header for 100-continue (lib/_http_server.js). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/** Expect is a request header of HTTP/1.1: an HTTP/1.0 client's is ignored, as RFC 9110 asks. */
const http11 = (req: IncomingMessage): boolean => req.httpVersionMajor === 1 && req.httpVersionMinor >= 1;

/** The client waits for `100 Continue` before it sends its body. */
export const expectsContinue = (req: IncomingMessage): boolean => http11(req) && CONTINUE.test(req.headers.expect ?? '');

/** A request target as a path: origin-form as it is, absolute-form's path part; undefined for any other form. */
export function targetPath(target: string): string | undefined {
  if (target.charCodeAt(0) === 47 /* / */) return target.split('?', 1)[0];
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(\/[^?#]*)?/i.exec(target);
  return absolute ? (absolute[1] ?? '/') : undefined;
}

/** What is wrong with the request as HTTP, if anything. */
export function httpRefusal(req: IncomingMessage): GatewayError | undefined {
  const target = req.url ?? '/';
  if (target.charCodeAt(0) !== 47 /* / */) return targetPath(target) === undefined ? coreErrors.bad_url() : coreErrors.absolute_url();
  if (!http11(req)) return undefined;
  if (req.headers.host === undefined) return coreErrors.missing_host();
  if (req.headers.expect !== undefined && !CONTINUE.test(req.headers.expect)) return coreErrors.expectation_failed();
  return undefined;
}
