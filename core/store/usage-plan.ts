// What a keyUsage call reads: the usage days asked for (in the key holder's time zone) and the stored UTC-day
// rollups they are made of, with the usage day each UTC hour of those rollups counts on (see zone-days.ts).
import { DAY_MS, HOUR_ROLLUP_DAYS, ROLLUP_DAYS, dateRange, dateStart, utcDate } from './units.ts';
import { addDays, usageCalendar } from './zone-days.ts';

export interface UsageQuery {
  /** daily_usage covers the last `days` usage days, today included. */
  days: number;
  /** model_stats covers these usage days, inclusive (default: the 30 days up to `to`; `to` defaults to today). */
  from?: string;
  to?: string;
  now: number;
  /** IANA time zone of the usage days (default UTC); a name Intl does not know throws a RangeError. */
  timezone?: string;
}

export interface DayRead {
  /** UTC date of the stored rollup. */
  date: string;
  /** The usage day of each of its 24 UTC hours. */
  hourDates: string[];
  /** Its hours fall on two usage days and its hourly rollup is recent enough to exist: read that too. */
  hours: boolean;
}

export interface UsagePlan {
  /** The usage day holding `now`. */
  today: string;
  /** daily_usage: usage days `dates[0]`..`today`. */
  dates: string[];
  /** model_stats: usage days `from`..`to`. */
  from: string;
  to: string;
  /** Stored days read for daily_usage, and for model_stats, oldest first. */
  days: DayRead[];
  modelDays: DayRead[];
}

export function usagePlan(q: UsageQuery): UsagePlan {
  const calendar = usageCalendar(q.timezone);
  const utc = calendar.zone === 'UTC';
  const hoursFrom = utcDate(q.now - HOUR_ROLLUP_DAYS * DAY_MS);
  // A usage day is made of its own UTC date and, off UTC, parts of the UTC dates on either side (offsets are within ±14 h).
  const reads = (first: string, last: string, max?: number): DayRead[] => {
    const around = utc ? 0 : 1;
    const out: DayRead[] = [];
    for (const date of dateRange(addDays(first, -around), addDays(last, around), max)) {
      const hourDates = calendar.hourDates(date);
      if (!hourDates.some((d) => d >= first && d <= last)) continue;
      out.push({ date, hourDates, hours: hourDates[0] !== hourDates[23] && date >= hoursFrom });
    }
    return out;
  };

  const today = calendar.dayOf(q.now);
  const n = Math.max(0, Math.min(Math.floor(q.days), ROLLUP_DAYS));
  const dates = n > 0 ? dateRange(addDays(today, -(n - 1)), today) : [];
  const to = q.to ?? today;
  const valid = Number.isFinite(dateStart(to)) && (q.from === undefined || Number.isFinite(dateStart(q.from)));
  const from = q.from ?? (valid ? addDays(to, -29) : to);
  // Nothing older than the rollup retention exists, so a huge range is clamped instead of read.
  const oldest = utcDate(q.now - ROLLUP_DAYS * DAY_MS);
  return {
    today, dates, from, to,
    days: dates.length ? reads(dates[0], today) : [],
    modelDays: valid ? reads(from < oldest ? oldest : from, to, ROLLUP_DAYS + 3) : [],
  };
}
