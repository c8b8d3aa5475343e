// What the gateway tells an operator's webhooks: the events (a table: name → when it is sent), and the notice a stage or
// the core hands the notifier. Bodies carry ids and figures, never a credential or a key's secret.

export const EVENTS = {
  'key.quota': 'A key reached a share (notifications.quota_percents, 80 and 100 by default) of its quota_usd or of a USD window (usd_5h, usd_1d, usd_7d): once per key, limit, share and window.',
  'account.attention': 'An upstream account\'s credential was refused (401/403) and the account is paused (proxy auth_pause_ms): once per pause.',
  'group.exhausted': 'Every enabled account of a group is cooling down or paused: once until the first of them returns.',
  'store.down': 'A gateway process cannot reach the shared store (Redis): each process says so for itself (the store that would tell them apart is the one down).',
  'store.up': 'The store answers that process again.',
} as const;

export type EventName = keyof typeof EVENTS;
export const EVENT_NAMES = Object.keys(EVENTS) as EventName[];

/**
 * One thing to tell: its event, what the body's `data` says, and `once`: the name under which it is sent at most once
 * while `ttlMs` lasts, across every process sharing the store (without it, each process sends its own).
 */
export interface Notice {
  event: EventName;
  data: Record<string, unknown>;
  /** A short text naming the subject (key, account, group), for the console's list. */
  subject: string;
  once?: { name: string; ttlMs: number };
}

/** A delivery as the console lists it: ids and figures, no URL (it may hold a token) and no body. */
export interface DeliveryView {
  id: string; event: EventName; hook: string; subject: string; result: 'sent' | 'failed';
  attempts: number; status: number | null; error: string | null; time: string; finished: string;
}

/** What stages see of the notifier: emit never blocks and never throws. */
export interface Notify {
  /** True when some webhook takes this event (a stage skips the work of finding out otherwise). */
  wants(event: EventName): boolean;
  emit(notice: Notice): void;
  /** The newest deliveries (every process's, when the store is shared), newest first. */
  deliveries(limit: number): Promise<DeliveryView[]>;
}
