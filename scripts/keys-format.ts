// How the keys CLI prints what the admin API answers: aligned plain-text tables (no colours, so output pipes cleanly).

type Row = (string | number | null | undefined)[];

export function formatTable(headers: string[], rows: Row[]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (c ?? '').padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

export const usd = (v: number) => `$${v.toFixed(6).replace(/0{1,4}$/, '')}`;
const when = (v: string | number | null | undefined) => (v === null || v === undefined ? '' : new Date(v).toISOString().replace(/\.\d+Z$/, 'Z'));

interface Window { window: string; used: number; limit: number }
interface KeyView {
  id: string; name: string | null; source: string; group: string; status: string; limits: Record<string, number>; expires_at: string | null; created_at: string | null;
  // What the list answers besides the record (as the console shows it); a record just made has none of them.
  usable?: boolean; spent?: number; quota?: { used: number; limit: number } | null; rate_limits?: Window[]; last_used?: string | null;
}

export function limitsText(limits: Record<string, number>): string {
  return Object.entries(limits).map(([k, v]) => (k.startsWith('usd_') || k === 'quota_usd' ? `${k}=${usd(v)}` : `${k}=${v}`)).join(' ') || '-';
}

/** Spent against the quota, or in all when the key has none (as the console's Spent column). */
const spentText = (k: KeyView): string | undefined => (k.quota ? `${usd(k.quota.used)} of ${usd(k.quota.limit)}` : k.spent === undefined ? undefined : usd(k.spent));
/** The USD windows as the console shows them: "1d $0.2 of $1", several apart by commas. */
const windowsText = (k: KeyView): string | undefined => k.rate_limits?.map((w) => `${w.window} ${usd(w.used)} of ${usd(w.limit)}`).join(', ') || undefined;
/** An active key that one of its limits refuses now says so, as in the console. */
const statusText = (k: KeyView): string => (k.status === 'active' && k.usable === false ? 'limit-reached' : k.status);

export function keysTable(keys: KeyView[]): string {
  return formatTable(['ID', 'NAME', 'SOURCE', 'GROUP', 'STATUS', 'LIMITS', 'EXPIRES', 'CREATED', 'SPENT', 'WINDOWS', 'LAST_USED'],
    keys.map((k) => [k.id, k.name, k.source, k.group, statusText(k), limitsText(k.limits), when(k.expires_at), when(k.created_at),
      spentText(k), windowsText(k), when(k.last_used)]));
}

interface RecordView { time: number; key_id: string; model: string; group: string; input_tokens: number; output_tokens: number; cost: number; status: number; ending: string; request_id: string }

export function recordsTable(records: RecordView[]): string {
  return formatTable(['TIME', 'KEY', 'MODEL', 'GROUP', 'IN', 'OUT', 'COST', 'STATUS', 'ENDING', 'REQUEST'],
    records.map((r) => [when(r.time), r.key_id, r.model, r.group, r.input_tokens, r.output_tokens, usd(r.cost), r.status, r.ending, r.request_id]));
}

interface Totals { requests: number; input_tokens: number; output_tokens: number; total_tokens: number; cost: number }
interface UsageView {
  status: string; mode: string; quota?: { limit: number; used: number; remaining: number };
  rate_limits?: { window: string; used: number; limit: number; reset_at?: string }[];
  usage: { today: Totals; total: Totals }; model_stats: (Totals & { model: string })[];
}

export function keyUsageText(key: KeyView, u: UsageView): string {
  const lines = [`key ${key.id} (${key.group}): ${u.status}, ${u.mode}`];
  if (u.quota) lines.push(`quota: ${usd(u.quota.used)} of ${usd(u.quota.limit)} used, ${usd(u.quota.remaining)} left`);
  for (const w of u.rate_limits ?? []) lines.push(`${w.window} window: ${usd(w.used)} of ${usd(w.limit)}${w.reset_at ? `, resets ${when(w.reset_at)}` : ''}`);
  lines.push('', formatTable(['', 'REQUESTS', 'IN', 'OUT', 'TOKENS', 'COST'], [
    ['today', u.usage.today.requests, u.usage.today.input_tokens, u.usage.today.output_tokens, u.usage.today.total_tokens, usd(u.usage.today.cost)],
    ['total', u.usage.total.requests, u.usage.total.input_tokens, u.usage.total.output_tokens, u.usage.total.total_tokens, usd(u.usage.total.cost)],
    ...u.model_stats.map((m) => [m.model, m.requests, m.input_tokens, m.output_tokens, m.total_tokens, usd(m.cost)]),
  ]));
  return lines.join('\n');
}
