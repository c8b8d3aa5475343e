// A webhook receiver the test starts on 127.0.0.1: it keeps every POST (headers, raw body, when), answers as `answer`
// says (a status, or never), and checks signatures the way an operator's receiver would (docs/alerts.md).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Teardown { teardown(fn: () => unknown): void }

export interface Received { headers: IncomingHttpHeaders; body: string; at: number; json: any }

/** What the n-th POST (0-based) is answered with: a status, or 'hang' (no answer, ever). */
export type Answer = (n: number, r: Received) => number | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** The POSTs of one event (x-gateway-event). */
  of(event: string): Received[];
  /** Resolves once `n` POSTs arrived (or rejects after `ms`). */
  until(n: number, ms?: number): Promise<Received[]>;
}

/** The operator's check: HMAC-SHA256 of the raw body with the shared secret, compared in constant time. */
export function verifySignature(secret: string, raw: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(raw).digest('hex'));
  const given = Buffer.from(header.slice('sha256='.length));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function receiver(t: Teardown, answer: Answer = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try { json = JSON.parse(body); } catch { json = undefined; }
      const r = { headers: req.headers, body, at: Date.now(), json };
      received.push(r);
      const a = answer(received.length - 1, r);
      if (a === 'hang') { hanging.push(res); return; }
      res.writeHead(a, { 'content-type': 'text/plain' }).end(a < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    for (const res of hanging) res.socket?.destroy();
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=receiver-own-token`;
  return {
    url, received,
    of: (event) => received.filter((r) => r.headers['x-gateway-event'] === event),
    async until(n, ms = 10_000) {
      const end = Date.now() + ms;
      while (received.length < n) {
        if (Date.now() > end) throw new Error(`the receiver got ${received.length} of ${n} POSTs in ${ms} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
  };
}
