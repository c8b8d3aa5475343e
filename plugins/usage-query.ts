// The query of a key's usage view, read the same way by GET /v1/usage and GET /admin/keys/{id}/usage.
import { defineErrors } from '../core/errors.ts';
import { isTimeZone } from '../core/store/zone-days.ts';

/** `days` per-day rows (1..90, default 30); models over `from`..`to` (YYYY-MM-DD); days in `timezone` (IANA, default UTC). */
export interface UsageQuery { days: number; from?: string; to?: string; timezone?: string }

const DATE = /^\d{4}-\d{2}-\d{2}$/;

const errors = defineErrors('usage', {
  invalid_days: { status: 400, doc: '`days` outside 1–90.', message: 'Invalid days, allowed range is 1-90' },
  invalid_date: { status: 400, doc: '`start_date` / `end_date` not YYYY-MM-DD.', message: (name: string) => `${name} must be YYYY-MM-DD` },
  invalid_timezone: { status: 400, doc: 'A `timezone` that is not an IANA zone name.', message: (zone: string) => `Invalid timezone "${zone.slice(0, 64)}": use an IANA time zone name such as Asia/Shanghai or America/New_York` },
});

export function usageQuery(q: URLSearchParams): UsageQuery {
  const days = q.has('days') ? Number(q.get('days')) : 30;
  if (!Number.isInteger(days) || days < 1 || days > 90) throw errors.invalid_days(undefined, { param: 'days' });
  const from = q.get('start_date') ?? undefined;
  const to = q.get('end_date') ?? undefined;
  for (const [name, v] of [['start_date', from], ['end_date', to]] as const) {
    if (v !== undefined && !DATE.test(v)) throw errors.invalid_date(name, { param: name });
  }
  const timezone = q.get('timezone') || undefined;
  if (timezone !== undefined && !isTimeZone(timezone)) {
    throw errors.invalid_timezone(timezone, { param: 'timezone' });
  }
  return { days, from, to, timezone };
}
