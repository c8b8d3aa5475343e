// Usage days in an IANA time zone: a stored UTC hour counts on the local date at its end, exact in whole-hour zones;
// in :30 and :45 zones a usage day starts at the whole UTC hour before local midnight.
import { DAY_MS, HOUR_MS, dateStart, utcDate } from './units.ts';

export interface UsageCalendar {
  /** The canonical zone name ("UTC" for the default). */
  readonly zone: string;
  /** Local date of each of the 24 hours of this UTC day (index = UTC hour). */
  hourDates(date: string): string[];
  /** The usage day holding this instant (the local date at the end of its UTC hour). */
  dayOf(ms: number): string;
}

const UTC: UsageCalendar = {
  zone: 'UTC',
  hourDates: (date) => new Array<string>(24).fill(date),
  dayOf: utcDate,
};

class ZoneCalendar implements UsageCalendar {
  readonly zone: string;
  private readonly format: Intl.DateTimeFormat;

  constructor(format: Intl.DateTimeFormat) {
    this.format = format;
    this.zone = format.resolvedOptions().timeZone;
  }

  private localDate(ms: number): string {
    let y = '';
    let m = '';
    let d = '';
    for (const p of this.format.formatToParts(ms)) {
      if (p.type === 'year') y = p.value;
      else if (p.type === 'month') m = p.value;
      else if (p.type === 'day') d = p.value;
    }
    return `${y.padStart(4, '0')}-${m}-${d}`;
  }

  private hourDate(dayStart: number, hour: number): string {
    return this.localDate(dayStart + (hour + 1) * HOUR_MS - 1);
  }

  hourDates(date: string): string[] {
    const start = dateStart(date);
    const out = new Array<string>(24);
    // Local dates only grow hour by hour and change at most a couple of times a day: bisect for the changes.
    const fill = (lo: number, hi: number, a: string, b: string): void => {
      if (a === b) { for (let h = lo; h <= hi; h++) out[h] = a; return; }
      if (hi - lo === 1) { out[lo] = a; out[hi] = b; return; }
      const mid = (lo + hi) >> 1;
      const m = this.hourDate(start, mid);
      fill(lo, mid, a, m);
      fill(mid, hi, m, b);
    };
    fill(0, 23, this.hourDate(start, 0), this.hourDate(start, 23));
    return out;
  }

  dayOf(ms: number): string {
    return this.localDate(Math.floor(ms / HOUR_MS) * HOUR_MS + HOUR_MS - 1);
  }
}

const calendars = new Map<string, UsageCalendar>();

/** The usage calendar of an IANA zone (undefined or '': UTC); a RangeError naming one that is not. */
export function usageCalendar(zone?: string): UsageCalendar {
  if (zone === undefined || zone === '') return UTC;
  let c = calendars.get(zone);
  if (c) return c;
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
  } catch {
    throw new RangeError(`Invalid time zone: ${zone}`);
  }
  c = format.resolvedOptions().timeZone === 'UTC' ? UTC : new ZoneCalendar(format);
  // Only names Intl accepts get here, so the cache stays small; the bound is for the case variants of those names.
  if (calendars.size >= 1000) calendars.clear();
  calendars.set(zone, c);
  return c;
}

/** True when `zone` names an IANA time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    usageCalendar(zone);
    return true;
  } catch {
    return false;
  }
}

/** The date `n` days after a YYYY-MM-DD date (n may be negative). */
export const addDays = (date: string, n: number): string => utcDate(dateStart(date) + n * DAY_MS);
