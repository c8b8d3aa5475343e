// Sends webhook deliveries: a bounded queue (a delivery past queue_limit is refused, for the caller to count), a few at
// a time, each attempt bounded by timeout_ms, retried after retry_ms, twice as long each time, up to `retries` times.
// Nothing here waits for a request or makes one wait.
import type { Agent, IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { NotificationsConfig, WebhookConfig } from '../types.ts';
import { version } from '../version.ts';
import type { EventName } from './events.ts';

export interface Delivery {
  /** The event's id: the same for each hook and every attempt (a receiver can tell a repeat). */
  id: string;
  event: EventName;
  subject: string;
  hook: WebhookConfig;
  body: string;
  /** `sha256=<hex>`: HMAC-SHA256 of the body with the hook's secret, made once (the secret is not kept here). */
  signature: string;
  created: number;
  attempts: number;
  /** The last attempt's HTTP status and why it failed, when it did. */
  status?: number;
  error?: string;
}

export type Ending = 'sent' | 'failed';
type Options = Pick<NotificationsConfig, 'timeout_ms' | 'retries' | 'retry_ms' | 'queue_limit'>;

/** Deliveries sent at once (per process): a slow receiver holds a few sockets, not one per event. */
const AT_ONCE = 4;
/** No wait between attempts is longer than this, whatever retries and retry_ms make. */
const MAX_WAIT_MS = 300_000;

/** The statuses worth another attempt: the receiver was busy or failing, not refusing the delivery. */
const retryable = (status: number): boolean => status === 408 || status === 425 || status === 429 || status >= 500;

type Attempted = { status: number } | { error: string };

export class Sender {
  #options: Options;
  readonly #done: (d: Delivery, ending: Ending) => void;
  readonly #waiting: Delivery[] = [];
  /** Deliveries waiting for a retry, by their timer. */
  readonly #retrying = new Map<NodeJS.Timeout, Delivery>();
  readonly #sending = new Set<Delivery>();
  readonly #agents = new Map<string, Agent>();
  readonly #closing = new AbortController();

  constructor(options: Options, done: (d: Delivery, ending: Ending) => void) {
    this.#options = options;
    this.#done = done;
  }

  configure(options: Options): void { this.#options = options; }

  /** Deliveries waiting, being sent or waiting for a retry. */
  get pending(): number { return this.#waiting.length + this.#sending.size + this.#retrying.size; }

  /** False when the queue is full (or closed): the delivery is not taken. */
  add(d: Delivery): boolean {
    if (this.#closing.signal.aborted || this.pending >= this.#options.queue_limit) return false;
    this.#waiting.push(d);
    this.#pump();
    return true;
  }

  /** Stops sending: attempts in flight are cut, and every delivery not finished is handed back (never reported done). */
  close(): Delivery[] {
    this.#closing.abort();
    for (const timer of this.#retrying.keys()) clearTimeout(timer);
    const left = [...this.#sending, ...this.#retrying.values(), ...this.#waiting.splice(0)];
    this.#retrying.clear();
    this.#sending.clear();
    for (const agent of this.#agents.values()) agent.destroy();
    return left;
  }

  #pump(): void {
    while (this.#sending.size < AT_ONCE && this.#waiting.length) {
      const d = this.#waiting.shift()!;
      this.#sending.add(d);
      void this.#attempt(d).finally(() => {
        this.#sending.delete(d);
        this.#pump();
      });
    }
  }

  async #attempt(d: Delivery): Promise<void> {
    d.attempts++;
    const result = await this.#post(d);
    if (this.#closing.signal.aborted) return; // close() handed it back
    if ('status' in result && result.status >= 200 && result.status < 300) {
      d.status = result.status;
      d.error = undefined;
      return this.#done(d, 'sent');
    }
    const again = 'status' in result ? retryable(result.status) : true;
    d.status = 'status' in result ? result.status : undefined;
    d.error = 'status' in result ? `HTTP ${result.status}` : result.error;
    if (!again || d.attempts > this.#options.retries) return this.#done(d, 'failed');
    const wait = Math.min(MAX_WAIT_MS, this.#options.retry_ms * 2 ** (d.attempts - 1));
    const timer = setTimeout(() => {
      this.#retrying.delete(timer);
      this.#waiting.push(d);
      this.#pump();
    }, wait);
    timer.unref();
    this.#retrying.set(timer, d);
  }

  /** One POST: its status once the answer's headers came (the answer is read and dropped), or why none came in time. */
  #post(d: Delivery): Promise<Attempted> {
    const url = new URL(d.hook.url);
    const timeoutMs = this.#options.timeout_ms;
    return new Promise<Attempted>((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const settle = (r: Attempted) => { if (!settled) { settled = true; clearTimeout(timer); resolve(r); } };
      const req = http(url).request(url, {
        method: 'POST', agent: this.#agent(url), signal: this.#closing.signal,
        headers: {
          'content-type': 'application/json', 'content-length': Buffer.byteLength(d.body), 'user-agent': `model-gateway/${version}`,
          'x-gateway-event': d.event, 'x-gateway-delivery': d.id, 'x-gateway-signature': d.signature,
        },
      }, (res: IncomingMessage) => {
        settle({ status: res.statusCode ?? 0 });
        // The answer's body means nothing here: read it off so the connection can serve the next delivery, in time.
        const cut = setTimeout(() => res.destroy(), timeoutMs).unref();
        res.on('error', () => {}).on('close', () => clearTimeout(cut)).resume();
      });
      timer = setTimeout(() => { settle({ error: 'timeout' }); req.destroy(); }, timeoutMs).unref();
      req.on('error', (err: NodeJS.ErrnoException) => settle({ error: err.code ?? 'error' }));
      req.end(d.body);
    });
  }

  /** One keep-alive agent per scheme, held to AT_ONCE sockets. */
  #agent(url: URL): Agent {
    let agent = this.#agents.get(url.protocol);
    if (!agent) this.#agents.set(url.protocol, (agent = new (http(url).Agent)({ keepAlive: true, maxSockets: AT_ONCE, timeout: 30_000 })));
    return agent;
  }
}

/**
 * node:http or node:https, taken with require as core/node-http.ts takes node:http (an import would load node's
 * bundled undici); node:https only once a receiver is on https.
 */
const http = (url: URL): typeof import('node:http') =>
  createRequire(import.meta.url)(url.protocol === 'https:' ? 'node:https' : 'node:http') as typeof import('node:http');
