// Options both stores take (retention, record caps), with the defaults the config reference documents.

export interface StoreOptions {
  /** Usage records live this long (rollups and totals keep ROLLUP_DAYS; settle markers at most SETTLE_MARKER_MS). */
  retentionDays?: number;
  /** Newest records kept per API key. */
  recordsPerKey?: number;
  /** Newest records kept in the global index (admin listings across keys). */
  recordsTotal?: number;
}

export const DEFAULT_RETENTION_DAYS = 30;
export const DEFAULT_RECORDS_PER_KEY = 10_000;
export const DEFAULT_RECORDS_TOTAL = 100_000;

const pos = (n: number | undefined, d: number): number => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : d);

export function resolveOptions(o: StoreOptions): { retentionMs: number; recordsPerKey: number; recordsTotal: number } {
  return {
    retentionMs: Math.round(pos(o.retentionDays, DEFAULT_RETENTION_DAYS) * 86_400_000),
    // At least one, as the config requires (a fraction below one would make a cap of none).
    recordsPerKey: Math.max(1, Math.floor(pos(o.recordsPerKey, DEFAULT_RECORDS_PER_KEY))),
    recordsTotal: Math.max(1, Math.floor(pos(o.recordsTotal, DEFAULT_RECORDS_TOTAL))),
  };
}
