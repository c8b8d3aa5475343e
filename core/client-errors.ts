// Answers for what Node's HTTP parser refuses before any route runs (a malformed request, headers too large, a client
// too slow to send its request): a proper status with a JSON body in the format of the route the request line names,
// when it can be read, instead of Node's bare status line.
import { STATUS_CODES } from './node-http.ts';
import type { Socket } from 'node:net';
import { coreErrors, type GatewayError } from './errors.ts';

type ParserError = NodeJS.ErrnoException & { rawPacket?: Buffer };
type HttpSocket = Socket & { _httpMessage?: { headersSent?: boolean } | null };

/** Renders an error for a request line (when one could be read): its body, in the nearest route's format. */
export type RenderError = (err: GatewayError, method: string | undefined, path: string | undefined) => string;

const ERRORS: Record<string, () => GatewayError> = {
  HPE_HEADER_OVERFLOW: () => coreErrors.headers_too_large(),
  ERR_HTTP_REQUEST_TIMEOUT: () => coreErrors.request_timeout(),
};
const malformed = () => coreErrors.malformed_request();

/** The method and path of a request line at the start of the bytes the parser saw (a full URL's path), when there is one. */
function requestLine(raw: Buffer | undefined): { method?: string; path?: string } {
  const m = raw && /^([A-Z]{3,10}) (?:[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/\s?#]*)?(\/[^\s?#]*)/.exec(raw.toString('latin1', 0, Math.min(raw.length, 2048)));
  return m ? { method: m[1], path: m[2] } : {};
}

/** Answers on the bare socket (no response object exists for it) and closes the connection. */
export function answerRaw(socket: Socket, error: GatewayError, body: string): void {
  const headers = Object.entries(error.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\ncontent-type: application/json\r\n${headers}`
    + `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  socket.destroySoon();
}

/** The server's 'clientError' listener: answer and close (a connection in the middle of a response is just closed). */
export function clientErrorHandler(render: RenderError): (err: ParserError, socket: HttpSocket) => void {
  return (err, socket) => {
    // The peer is gone, or a response is already under way on this connection: nothing can be written cleanly.
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const error = (ERRORS[err.code ?? ''] ?? malformed)();
    const { method, path } = requestLine(err.rawPacket);
    answerRaw(socket, error, render(error, method, path));
  };
}
