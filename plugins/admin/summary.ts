// Stage `admin-summary`: requests, errors, tokens and cost of the whole gateway over a window, as time series by model,
// group or key with totals (GET /admin/usage/summary), read from the store's gateway-wide rollups.
import { adminErrors } from './errors.ts';
import type { Env, Plugin } from '../../core/types.ts';
import type { RollupUnit, UsageBucket } from '../../core/store/types.ts';
import { UNIT_MS } from '../../core/store/summary.ts';
import { reply } from './common.ts';

interface Options { default_top: number }

/** Each window is drawn in buckets of one unit: 60 minutes, 24 or 168 hours, 30 UTC days, the current one included. */
export const WINDOWS: Record<string, { unit: RollupUnit; buckets: number }> = {
  '1h': { unit: 'minute', buckets: 60 },
  '1d': { unit: 'hour', buckets: 24 },
  '7d': { unit: 'hour', buckets: 168 },
  '30d': { unit: 'day', buckets: 30 },
};
const BY = ['model', 'group', 'key'] as const;
type By = (typeof BY)[number];
const MAX_TOP = 50;

interface Counts { requests: number; errors: number; tokens: number; cost: number }
const COUNTS = ['requests', 'errors', 'tokens', 'cost'] as const;
// Costs are added in nano-dollars: a float sum of many small costs drifts.
const nano = (usd: number) => Math.round(usd * 1e9);

/** The window's buckets, read from the store: which rollup unit, and its first and last bucket. */
export async function windowBuckets(store: { usageBuckets(unit: RollupUnit, from: number, to: number): Promise<UsageBucket[]> }, window: string, now: number) {
  // Own names only: a query of "constructor" or "__proto__" is not a window.
  const w = Object.hasOwn(WINDOWS, window) ? WINDOWS[window] : undefined;
  if (!w) throw adminErrors.invalid_window(Object.keys(WINDOWS).join(', '), { param: 'window' });
  const buckets = await store.usageBuckets(w.unit, now - (w.buckets - 1) * UNIT_MS[w.unit], now);
  return { ...w, buckets };
}

const zero = (): Counts => ({ requests: 0, errors: 0, tokens: 0, cost: 0 });

function totalsOf(points: Counts[]): Counts & { error_rate: number } {
  const t = zero();
  for (const p of points) for (const c of COUNTS) t[c] += c === 'cost' ? nano(p.cost) : p[c];
  t.cost /= 1e9;
  return { ...t, error_rate: t.requests ? Math.round((t.errors / t.requests) * 1e6) / 1e6 : 0 };
}

interface Series { name: string; label?: string; other?: true; points: Counts[] }

/** One series per name (model, group or key) with a point per bucket; beyond the `top` busiest, the rest is one series. */
function splitBy(buckets: UsageBucket[], by: By, top: number): Series[] {
  const byName = new Map<string, Counts[]>();
  buckets.forEach((b, i) => {
    for (const u of b.usage) {
      let points = byName.get(u[by]);
      if (!points) byName.set(u[by], (points = buckets.map(zero)));
      for (const c of COUNTS) points[i][c] += u[c];
    }
  });
  const ranked = [...byName.entries()].map(([name, points]) => ({ name, points, t: totalsOf(points) }))
    .sort((a, b) => b.t.requests - a.t.requests || b.t.cost - a.t.cost || (a.name < b.name ? -1 : 1));
  const rest = ranked.slice(top);
  const shown: Series[] = ranked.slice(0, top);
  if (rest.length) {
    const points = buckets.map((_b, i) => totalsOf(rest.map((r) => r.points[i])));
    shown.push({ name: `${rest.length} more`, other: true, points });
  }
  return shown;
}

/** By key: each series of a named key is labelled with its name (and its id too where two shown keys share a name). */
async function labelKeys(env: Env, series: Series[]): Promise<void> {
  const names = new Map((await env.store.listKeys()).filter((k) => k.name).map((k) => [k.id, k.name!]));
  const named = series.filter((s) => !s.other && names.has(s.name));
  for (const s of named) {
    const name = names.get(s.name)!;
    s.label = named.filter((x) => names.get(x.name) === name).length > 1 ? `${name} (${s.name})` : name;
  }
}

const seriesView = (s: Series) => ({
  name: s.name, ...(s.label !== undefined ? { label: s.label } : {}), ...(s.other ? { other: true } : {}),
  requests: s.points.map((p) => p.requests), errors: s.points.map((p) => p.errors), tokens: s.points.map((p) => p.tokens),
  cost: s.points.map((p) => nano(p.cost) / 1e9), totals: totalsOf(s.points),
});

export const adminSummary: Plugin<Options> = {
  name: 'admin-summary',
  description: 'Answers the gateway\'s requests, errors (status 400 or more, or ended failed, missing-terminal or timeout), tokens and cost over ?window= (1h in minutes, 1d and 7d in hours, 30d in UTC days; default 1d) as time series ?by= model, group or key (default model; a named key\'s series has its name as label), the ?top= busiest apart and the rest summed, with totals. Place after admin-auth.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: { default_top: { type: 'integer', minimum: 1, maximum: MAX_TOP, default: 8, description: 'Series shown apart when ?top is not given.' } },
  },
  create(options, env) {
    return async (ctx) => {
      const q = ctx.url.searchParams;
      const window = q.get('window') || '1d';
      const by = (q.get('by') || 'model') as By;
      if (!BY.includes(by)) throw adminErrors.invalid_by(BY.join(', '), { param: 'by' });
      const top = q.has('top') ? Number(q.get('top')) : options.default_top;
      if (!Number.isInteger(top) || top < 1 || top > MAX_TOP) throw adminErrors.invalid_top(MAX_TOP, { param: 'top' });
      const now = Date.now();
      const { unit, buckets } = await windowBuckets(env.store, window, now);
      const series = splitBy(buckets, by, top);
      if (by === 'key') await labelKeys(env, series);
      reply(ctx, 200, {
        window, by, unit, from: new Date(buckets[0].start).toISOString(), to: new Date(now).toISOString(),
        buckets: buckets.map((b) => b.start), series: series.map(seriesView), totals: totalsOf(series.flatMap((x) => x.points)),
      });
    };
  },
};
