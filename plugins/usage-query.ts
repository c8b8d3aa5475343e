// The query of a key's usage view, read the same way by GET /v1/usage and GET /admin/keys/{id}/usage.
import { GatewayError } from '../core/errors.ts';
import { isTimeZone } from '../core/store/zone-days.ts';

/** `days` per-day rows (1..90, default 30); models over `from`..`to` (YYYY-MM-DD); days in `timezone` (IANA, default UTC). */
export interface UsageQuery { days: number; from?: string; to?: string; timezone?: string }

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function usageQuery(q: URLSearchParams): UsageQuery {
  const days = q.has('days') ? Number(q.get('days')) : 30;
  if (!Number.isInteger(days) || days < 1 || days > 90) throw new GatewayError(400, 'invalid_days', 'Invalid days, allowed range is 1-90', { param: 'days' });
  const from = q.get('start_date') ?? undefined;
  const to = q.get('end_date') ?? undefined;
  for (const [name, v] of [['start_date', from], ['end_date', to]] as const) {
    if (v !== undefined && !DATE.test(v)) throw new GatewayError(400, 'invalid_date', `${name} must be YYYY-MM-DD`, { param: name });
  }
  const timezone = q.get('timezone') || undefined;
  if (timezone !== undefined && !isTimeZone(timezone)) {
    throw new GatewayError(400, 'invalid_timezone', `Invalid timezone "${timezone.slice(0, 64)}": use an IANA time zone name such as Asia/Shanghai or America/New_York`, { param: 'timezone' });
  }
  return { days, from, to, timezone };
}
