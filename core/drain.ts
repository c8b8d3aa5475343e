// Graceful drain of the HTTP server: stop accepting, close every connection with no response in progress at once, close
// each other one as soon as its response is flushed, and cut whatever is left when the drain timeout passes.
import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/** `_httpMessage` is Node's own (http-terminator reads it too): the response being written, cleared once it is flushed. */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

export interface Drain {
  /** True from the start of `drain`: responses begun from then on close their connection. */
  readonly draining: boolean;
  /** True once the drain timeout passed and the connections still open were cut (their requests did not end by themselves). */
  readonly cut: boolean;
  drain(timeoutMs: number): Promise<void>;
}

/** Attach before the server accepts: it must see every connection. */
export function drainable(server: Server): Drain {
  // Node's closeIdleConnections is not enough: a connection that has not sent a byte yet (opened ahead by a client pool, a
  // browser or a balancer) is not idle to it and held the drain to its timeout; and it cuts a connection whose last
  // response is ended but not yet flushed, so a slow reader lost the tail of its stream.
  const sockets = new Set<HttpSocket>();
  server.on('connection', (socket: HttpSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const state = {
    draining: false,
    cut: false,
    drain(timeoutMs: number): Promise<void> {
      state.draining = true;
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => { state.cut = true; server.closeAllConnections(); }, timeoutMs);
        // net's close, not http's: http's would first cut connections whose response is not flushed yet.
        NetServer.prototype.close.call(server, () => { clearTimeout(timer); resolve(); });
        for (const socket of sockets) closeWhenDone(socket);
      });
    },
  };
  return state;
}

/** The requests whose stages are still running (a client may have left long ago): a shutdown waits for their settlements. */
export class Running {
  #count = 0;
  #idle: (() => void) | undefined = undefined;

  enter(): void { this.#count++; }
  leave(): void { if (--this.#count === 0) this.#idle?.(); }

  /** True once none is running, false when `ms` passed first. */
  idle(ms: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.#idle = undefined; resolve(false); }, Math.max(0, ms));
      this.#idle = () => { clearTimeout(timer); this.#idle = undefined; resolve(true); };
    });
  }
}

function closeWhenDone(socket: HttpSocket): void {
  if (socket.destroyed) return;
  const res = socket._httpMessage;
  if (!res) socket.destroy();
  // Node closes the connection itself once this response is flushed.
  else if (!res.headersSent) res.setHeader('connection', 'close');
  // 'close' follows the flush, when the socket has moved on to its next (pipelined) response, if any.
  else res.once('close', () => closeWhenDone(socket));
}
