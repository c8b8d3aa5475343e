// Stage `usage`: GET /v1/usage — the key's own usage, limits and status, in the JSON shape existing tools read (sub2api §6.3).
import { GatewayError } from '../core/errors.ts';
import type { KeyConfig, Plugin } from '../core/types.ts';
import type { KeyUsage, UsageTotals, WindowState } from '../core/store/types.ts';
import { usageQuery } from './usage-query.ts';
import { sendJson } from '../core/reply.ts';

const WINDOW_MS = { '5h': 5 * 3600_000, '1d': 86_400_000, '7d': 7 * 86_400_000 } as const;
const LIMIT_FIELD = { '5h': 'usd_5h', '1d': 'usd_1d', '7d': 'usd_7d' } as const;
const round = (usd: number) => Math.round(usd * 1e9) / 1e9;

function totalsView(t: UsageTotals) {
  return {
    requests: t.requests, input_tokens: t.input_tokens, output_tokens: t.output_tokens,
    cache_creation_tokens: t.cache_write_tokens, cache_read_tokens: t.cache_read_tokens,
    total_tokens: t.input_tokens + t.output_tokens + t.cache_write_tokens + t.cache_read_tokens,
    cost: round(t.cost), actual_cost: round(t.cost),
  };
}

const EMPTY: UsageTotals = { requests: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, cost: 0 };

function windowsView(key: KeyConfig, windows: WindowState[], now: number) {
  return (Object.keys(WINDOW_MS) as (keyof typeof WINDOW_MS)[]).flatMap((w) => {
    const limit = key.limits[LIMIT_FIELD[w]];
    if (!limit) return [];
    const state = windows.find((s) => s.window === w);
    const active = state?.start != null && now < state.start + WINDOW_MS[w];
    const used = active ? state!.used : 0;
    return [{
      window: w, limit, used: round(used), remaining: round(Math.max(0, limit - used)),
      window_start: active ? new Date(state!.start!).toISOString() : null,
      ...(active ? { reset_at: new Date(state!.start! + WINDOW_MS[w]).toISOString() } : {}),
    }];
  });
}

export function usageView(key: KeyConfig, groupName: string, usage: KeyUsage, now: number) {
  const spent = usage.total.cost;
  const quota = key.limits.quota_usd ?? 0;
  const rateLimits = windowsView(key, usage.windows, now);
  const expired = key.expires_at !== undefined && key.expires_at <= now;
  const exhausted = (quota > 0 && spent >= quota) || rateLimits.some((w) => w.remaining <= 0);
  const status = expired ? 'expired' : quota > 0 && spent >= quota ? 'quota_exhausted' : 'active';
  const remainders = [...(quota > 0 ? [quota - spent] : []), ...rateLimits.map((w) => w.remaining)];
  const limited = quota > 0 || rateLimits.length > 0;
  return {
    mode: limited ? 'quota_limited' : 'unrestricted',
    isValid: status === 'active' && !exhausted,
    status,
    ...(limited ? {} : { planName: groupName }),
    ...(quota > 0 ? { quota: { limit: quota, used: round(spent), remaining: round(Math.max(0, quota - spent)), unit: 'USD' } } : {}),
    remaining: remainders.length ? round(Math.max(0, Math.min(...remainders))) : -1,
    unit: 'USD',
    ...(rateLimits.length ? { rate_limits: rateLimits } : {}),
    ...(key.expires_at !== undefined ? {
      expires_at: new Date(key.expires_at).toISOString(),
      days_until_expiry: Math.max(0, Math.ceil((key.expires_at - now) / 86_400_000)),
    } : {}),
    usage: {
      today: totalsView(usage.days.find((d) => d.date === usage.today) ?? EMPTY),
      total: totalsView(usage.total),
      average_duration_ms: usage.averageDurationMs,
      rpm: usage.lastMinute.requests,
      tpm: usage.lastMinute.tokens,
    },
    daily_usage: usage.days.map((d) => {
      const v = totalsView(d);
      return { date: d.date, requests: v.requests, input_tokens: v.input_tokens, output_tokens: v.output_tokens, cache_read_tokens: v.cache_read_tokens, cache_write_tokens: v.cache_creation_tokens, cost: v.cost, actual_cost: v.actual_cost };
    }),
    model_stats: usage.models.map((m) => ({ model: m.model, ...totalsView(m) })),
  };
}

export const usage: Plugin<Record<string, never>> = {
  name: 'usage',
  description: 'Answers the key\'s own usage (GET /v1/usage): status, quota, spend windows, today/total, average duration, current rpm/tpm (settled in the last 60 whole seconds), per day (?days=1..90) and per model (?start_date=&end_date=, YYYY-MM-DD), with days in ?timezone= (IANA, default UTC; in :30 and :45 zones a day starts 30 or 15 minutes before local midnight). Never the operator\'s upstream cost.',
  schema: { type: 'object', additionalProperties: false, properties: {} },
  requires: ['key'],
  create(_options, env) {
    return async (ctx) => {
      const key = ctx.key!;
      const query = usageQuery(ctx.search ? ctx.url.searchParams : new URLSearchParams());
      const now = Date.now();
      const data = await env.store.keyUsage(key.id, { ...query, now });
      ctx.end('completed');
      sendJson(ctx.res, 200, usageView(key, key.group, data, now), { 'cache-control': 'no-store' });
    };
  },
};
