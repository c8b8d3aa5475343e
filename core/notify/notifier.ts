// The notifier: one per process, across reloads. A notice becomes one signed delivery per webhook that takes its event;
// a notice sent `once` is claimed in the store first (one process of those sharing it wins, Redis SET NX PX), and this
// process remembers what it claimed or saw claimed, so the store is asked once per process. It also watches a shared
// store's availability (store.down, store.up), and keeps the latest deliveries for the console.
import { createHmac, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { counter, gauge, type LabelledCounter } from '../plugin-metrics.ts';
import { redisError } from '../store/guard.ts';
import type { Store } from '../store/types.ts';
import type { NotificationsConfig, WebhookConfig } from '../types.ts';
import type { DeliveryView, EventName, Notice, Notify } from './events.ts';
import { Sender, type Delivery, type Ending } from './sender.ts';

/** Names this process claimed or saw claimed, remembered at most (the oldest forgotten first). */
const REMEMBERED = 10_000;
/** How often a shared store's availability is looked at: an outage shorter than this may go unreported. */
const WATCH_MS = 1000;
/** One line about dropped deliveries per this long, however many are dropped meanwhile. */
const LOG_EVERY_MS = 10_000;

export class Notifier implements Notify {
  #config: NotificationsConfig;
  readonly #store: Store;
  readonly #log: Logger;
  readonly #sender: Sender;
  readonly #seen = new Map<string, number>();
  /** Deliveries the store could not keep (it was down): shown from here, and written once it answers. */
  readonly #unsaved: string[] = [];
  readonly #counted: LabelledCounter<'hook' | 'event' | 'result'>;
  readonly #instance = `${hostname()}:${process.pid}`;
  #watch: NodeJS.Timeout | undefined;
  #droppedLoggedAt = -Infinity;
  #droppedSince = 0;

  constructor(config: NotificationsConfig, store: Store, log: Logger, registry: Registry) {
    this.#config = config;
    this.#store = store;
    this.#log = log;
    this.#sender = new Sender(config, (d, ending) => this.#finished(d, ending));
    this.#counted = counter(registry, {
      name: 'gateway_webhook_deliveries_total', labelNames: ['hook', 'event', 'result'],
      help: 'Webhook deliveries by how they ended: sent (a 2xx), failed (every attempt failed, or a status not worth retrying), dropped (the queue was full, or the store could not be asked whether another process sent it).',
    });
    const sender = this.#sender;
    gauge(registry, {
      name: 'gateway_webhook_queue', help: 'Webhook deliveries waiting, being sent or waiting for a retry (this process).',
      collect() { this.set(sender.pending); },
    });
    this.#watchStore();
  }

  /** A reload's webhooks and settings: deliveries already queued keep the hook they were made for. */
  configure(config: NotificationsConfig): void {
    this.#config = config;
    this.#sender.configure(config);
  }

  wants(event: EventName): boolean {
    return this.#config.webhooks.some((h) => h.events.includes(event));
  }

  emit(notice: Notice): void {
    const hooks = this.#config.webhooks.filter((h) => h.events.includes(notice.event));
    if (!hooks.length) return;
    const once = notice.once;
    if (!once) return this.#send(notice, hooks);
    const now = Date.now();
    if ((this.#seen.get(once.name) ?? 0) > now) return;
    this.#remember(once.name, now + once.ttlMs);
    this.#store.claim(once.name, once.ttlMs).then((won) => { if (won) this.#send(notice, hooks); }, (err) => {
      this.#log.warn({ err: redisError(err), event: notice.event, subject: notice.subject }, 'webhook event dropped: the store could not say whether another process sent it');
      for (const hook of hooks) this.#counted.inc({ hook: hook.name, event: notice.event, result: 'dropped' });
    });
  }

  async deliveries(limit: number): Promise<DeliveryView[]> {
    const stored = await this.#store.recentDeliveries(limit).catch(() => [] as string[]);
    const seen = new Set<string>();
    const views: DeliveryView[] = [];
    for (const text of [...this.#unsaved, ...stored]) {
      let v: DeliveryView;
      try { v = JSON.parse(text); } catch { continue; }
      const id = `${v.id} ${v.hook}`;
      if (seen.has(id)) continue;
      seen.add(id);
      views.push(v);
    }
    return views.sort((a, b) => b.finished.localeCompare(a.finished)).slice(0, limit);
  }

  /** What is still queued, being sent or waiting for a retry is not sent: counted as dropped, and said once. */
  close(): void {
    clearInterval(this.#watch);
    const left = this.#sender.close();
    for (const d of left) this.#counted.inc({ hook: d.hook.name, event: d.event, result: 'dropped' });
    if (left.length) this.#log.warn({ dropped: left.length }, 'webhook deliveries still queued at shutdown are not sent');
  }

  #send(notice: Notice, hooks: WebhookConfig[]): void {
    const id = `evt_${randomUUID().replaceAll('-', '')}`;
    const created = Date.now();
    const body = JSON.stringify({ id, event: notice.event, time: new Date(created).toISOString(), data: notice.data });
    for (const hook of hooks) {
      const signature = `sha256=${createHmac('sha256', hook.secret).update(body).digest('hex')}`;
      const d: Delivery = { id, event: notice.event, subject: notice.subject, hook, body, signature, created, attempts: 0 };
      if (!this.#sender.add(d)) this.#dropped(d);
    }
  }

  #dropped(d: Delivery): void {
    this.#counted.inc({ hook: d.hook.name, event: d.event, result: 'dropped' });
    this.#droppedSince++;
    const now = Date.now();
    if (now - this.#droppedLoggedAt < LOG_EVERY_MS) return;
    this.#log.warn({ hook: d.hook.name, event: d.event, dropped: this.#droppedSince, queue_limit: this.#config.queue_limit },
      'webhook queue full: deliveries dropped (a receiver too slow or down; see gateway_webhook_deliveries_total)');
    this.#droppedLoggedAt = now;
    this.#droppedSince = 0;
  }

  #finished(d: Delivery, ending: Ending): void {
    this.#counted.inc({ hook: d.hook.name, event: d.event, result: ending });
    const fields = { hook: d.hook.name, event: d.event, delivery: d.id, attempts: d.attempts, status: d.status, error: d.error };
    if (ending === 'failed') this.#log.warn(fields, `webhook delivery to "${d.hook.name}" failed`);
    else this.#log.debug(fields, 'webhook delivered');
    const view: DeliveryView = {
      id: d.id, event: d.event, hook: d.hook.name, subject: d.subject, result: ending, attempts: d.attempts,
      status: d.status ?? null, error: d.error ?? null, time: new Date(d.created).toISOString(), finished: new Date().toISOString(),
    };
    void this.#keep(JSON.stringify(view));
  }

  /** Into the store's list; while it cannot take it, kept here (bounded) and written behind the next that lands. */
  async #keep(text: string): Promise<void> {
    const keep = this.#config.history;
    try {
      await this.#store.noteDelivery(text, keep);
    } catch {
      this.#unsaved.unshift(text);
      if (this.#unsaved.length > keep) this.#unsaved.length = keep;
      return;
    }
    while (this.#unsaved.length) {
      const oldest = this.#unsaved.at(-1)!;
      try { await this.#store.noteDelivery(oldest, keep); } catch { return; }
      if (this.#unsaved.at(-1) === oldest) this.#unsaved.pop();
    }
  }

  #remember(name: string, until: number): void {
    this.#seen.delete(name);
    this.#seen.set(name, until);
    for (const oldest of this.#seen.keys()) {
      if (this.#seen.size <= REMEMBERED) break;
      this.#seen.delete(oldest);
    }
  }

  /**
   * A shared store's availability (guard.ts: false from a call that failed until one succeeds), looked at every
   * WATCH_MS: each change is this process's store.down or store.up.
   */
  #watchStore(): void {
    const available = this.#store.available?.bind(this.#store);
    if (!available) return;
    let up = true;
    let downSince = 0;
    this.#watch = setInterval(() => {
      const now = available();
      if (now === up) return;
      up = now;
      const data = { store: this.#store.kind, instance: this.#instance };
      if (!now) {
        downSince = Date.now();
        this.emit({ event: 'store.down', subject: this.#instance, data: { ...data, pending_settlements: this.#store.pendingSettlements?.() ?? 0 } });
      } else {
        this.emit({ event: 'store.up', subject: this.#instance, data: { ...data, down_ms: Date.now() - downSince } });
      }
    }, WATCH_MS);
    this.#watch.unref();
  }
}
