// Assembles a KeyUsage answer from stored counters, identically for both stores.
import type { KeyUsage, WindowState } from './types.ts';
import { addCounters, emptyCounters, sortModels, toTotals, type Counters } from './rollup.ts';
import { WINDOWS, fromNano, type WindowName } from './units.ts';

export interface StoredUsage {
  total: Counters;
  /** The requested days, oldest first, with their counters (undefined: no rollup that day). */
  days: [string, Counters | undefined][];
  /** Per-model counters of each day in the model range. */
  modelDays: Map<string, Counters>[];
  /** Window starts and used nano-dollars as stored (possibly past their end). */
  windows: Partial<Record<WindowName, { start: number; used: number }>>;
}

export function buildKeyUsage(s: StoredUsage, now: number): KeyUsage {
  const models = new Map<string, Counters>();
  for (const day of s.modelDays) {
    for (const [model, c] of day) {
      let m = models.get(model);
      if (!m) models.set(model, (m = emptyCounters()));
      addCounters(m, c);
    }
  }
  const windows: WindowState[] = WINDOWS.map((w) => {
    const st = s.windows[w.window];
    // A window past its end restarts at the next spend: until then it shows as not started.
    const active = st !== undefined && now < st.start + w.ms;
    return { window: w.window, used: active ? fromNano(st.used) : 0, start: active ? st.start : null };
  });
  return {
    total: toTotals(s.total),
    days: s.days.filter(([, c]) => c !== undefined && c.requests > 0).map(([date, c]) => ({ date, ...toTotals(c!) })),
    models: sortModels([...models].map(([model, c]) => ({ model, ...toTotals(c) }))),
    windows,
  };
}
