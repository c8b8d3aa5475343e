// Assembles a KeyUsage answer from stored counters, identically for both stores: UTC-day and UTC-hour rollups
// summed into the usage days of the asked time zone (usage-plan.ts), totals, windows and the current rate.
import type { KeyUsage, WindowState } from './types.ts';
import { COUNTER_FIELDS, addCounters, emptyCounters, toTotals, topModels, type Counters } from './rollup.ts';
import type { DayRead, UsagePlan } from './usage-plan.ts';
import { WINDOWS, fromNano, type WindowName } from './units.ts';
import { windowRuns } from './rules/ledger.ts';

export interface StoredDay {
  /** The UTC day's counters (undefined: no rollup that day). */
  total?: Counters;
  /** Its hourly counters by UTC hour, when the plan asked for them. */
  hours?: Map<number, Counters>;
}

export interface StoredModelDay {
  models: Map<string, Counters>;
  hours?: Map<number, Map<string, Counters>>;
}

export interface StoredUsage {
  total: Counters;
  /** Aligned with plan.days and plan.modelDays. */
  days: StoredDay[];
  modelDays: StoredModelDay[];
  /** Window starts and used nano-dollars as stored (possibly past their end). */
  windows: Partial<Record<WindowName, { start: number; used: number }>>;
  /** Summed durations of the requests in `total` that were recorded with one. */
  duration: { ms: number; requests: number };
  /** Requests and tokens settled in the last 60 whole seconds (rate.ts). */
  lastMinute: { requests: number; tokens: number };
}

/** `total` minus `part`, never below 0 (hourly rollups missing for part of a day leave a positive rest). */
function rest(total: Counters, parts: Iterable<Counters>): Counters | undefined {
  const r = { ...total };
  for (const p of parts) for (const f of COUNTER_FIELDS) r[f] -= p[f];
  let any = false;
  for (const f of COUNTER_FIELDS) {
    if (r[f] < 0) r[f] = 0;
    else if (r[f] > 0) any = true;
  }
  return any ? r : undefined;
}

/** A stored UTC day on its usage days: whole, else hour by hour, what its hours miss on the day of its midday. */
function spread<T>(read: DayRead, total: T, hours: Map<number, T> | undefined, add: (date: string, c: T) => void, left: (total: T, hours: Map<number, T>) => T | undefined): void {
  const d = read.hourDates;
  if (d[0] === d[23] || !read.hours || !hours) {
    add(d[0] === d[23] ? d[0] : d[12], total);
    return;
  }
  for (const [h, c] of hours) add(d[h], c);
  const r = left(total, hours);
  if (r !== undefined) add(d[12], r);
}

function modelsLeft(total: Map<string, Counters>, hours: Map<number, Map<string, Counters>>): Map<string, Counters> | undefined {
  const out = new Map<string, Counters>();
  for (const [model, c] of total) {
    const r = rest(c, [...hours.values()].flatMap((m) => (m.has(model) ? [m.get(model)!] : [])));
    if (r) out.set(model, r);
  }
  return out.size ? out : undefined;
}

export function buildKeyUsage(plan: UsagePlan, s: StoredUsage, now: number): KeyUsage {
  const days = new Map<string, Counters>(plan.dates.map((d) => [d, emptyCounters()]));
  plan.days.forEach((read, i) => {
    const st = s.days[i];
    if (!st?.total) return;
    spread(read, st.total, st.hours, (date, c) => { const d = days.get(date); if (d) addCounters(d, c); },
      (total, hours) => rest(total, hours.values()));
  });

  const models = new Map<string, Counters>();
  const addModels = (date: string, day: Map<string, Counters>) => {
    if (date < plan.from || date > plan.to) return;
    for (const [model, c] of day) {
      let m = models.get(model);
      if (!m) models.set(model, (m = emptyCounters()));
      addCounters(m, c);
    }
  };
  plan.modelDays.forEach((read, i) => {
    const st = s.modelDays[i];
    if (st) spread(read, st.models, st.hours, addModels, modelsLeft);
  });

  const windows: WindowState[] = WINDOWS.map((w) => {
    const st = s.windows[w.window];
    // A window past its end restarts at the next spend: until then it shows as not started.
    return windowRuns(st, w.ms, now) ? { window: w.window, used: fromNano(st.used), start: st.start } : { window: w.window, used: 0, start: null };
  });
  return {
    total: toTotals(s.total),
    today: plan.today,
    days: [...days].filter(([, c]) => c.requests > 0).map(([date, c]) => ({ date, ...toTotals(c) })),
    models: topModels(models).map(({ model, counters }) => ({ model, ...toTotals(counters) })),
    windows,
    averageDurationMs: s.duration.requests > 0 ? Math.round((s.duration.ms / s.duration.requests) * 100) / 100 : 0,
    lastMinute: { requests: s.lastMinute.requests, tokens: s.lastMinute.tokens },
  };
}
