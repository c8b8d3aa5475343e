// Closing a connection whose client is still sending a body the gateway will not read. Closing at once, with unread
// bytes arriving, makes the kernel send a reset, which can destroy the answer before the client reads it; reading the
// rest would let one client make the gateway read without end. So, as servers do (lingering close): send the answer
// and end our side, discard what still arrives for a short, bounded while, then close.
import type { Socket } from 'node:net';

/** How long, and how many bytes, a closing connection is still read (and discarded). */
const LINGER_MS = 1000;
const LINGER_BYTES = 16 * 1024 * 1024;

/** From now on, when the server ends this connection (after its `connection: close` answer), it lingers first. */
export function lingerOnClose(socket: Socket): void {
  // Node's server calls destroySoon() on the socket once a `connection: close` answer is written.
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.destroyed) return;
    this.end();
    let read = 0;
    const timer = setTimeout(() => this.destroy(), LINGER_MS).unref();
    this.on('data', (chunk: Buffer) => { if ((read += chunk.length) > LINGER_BYTES) this.destroy(); });
    this.once('close', () => clearTimeout(timer));
    this.resume();
  };
}
