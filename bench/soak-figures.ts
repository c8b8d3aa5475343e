// The soak's figures from its samples (one every 2 s) and its answers counted by minute: a row per minute, and the
// first minute against the last, the issue's leak test (RSS and heap flat: within 10 %). The heap is judged by its live
// size at the minute's end, after a full collection (live-heap.ts): the samples' heap is a sawtooth between
// collections, whose mean moves with where the samples fall in it (docs/performance.md); the live heap is what grows
// in a leak. The samples' mean is shown beside it.
import { cpuDelta } from './proc.ts';

export const SAMPLE_EVERY_S = 2;
const PER_MINUTE = 60 / SAMPLE_EVERY_S;
export const FLAT_WITHIN_PCT = 10;

/**
 * Sample i, taken SAMPLE_EVERY_S × i seconds into the load (0: as it starts); null where a reading failed. At a minute's
 * end (i a multiple of the samples a minute, from the first) also the live heap, after a full collection.
 */
export interface Sample { i: number; rssBytes: number | null; heapBytes: number | null; cpu: Map<number, number> | null; liveHeapBytes?: number | null }
/** One minute's requests answered (counted when the answer came), errors, non-2xx answers and 2xx answers not whole. */
export interface Counts { requests: number; errors: number; non2xx: number; short: number }

export interface MinuteRow extends Counts {
  minute: number;
  /** Means of the minute's samples (those taken at 2 … 60 s into it) that were read; null if none was. */
  rssMb: number | null;
  heapMb: number | null;
  /** The live heap at the minute's end, after a full collection (the verdict's heap figure); null if not read. */
  liveHeapMb: number | null;
  rssSamples: number;
  heapSamples: number;
  /** The gateway's CPU time from the minute's start to its end ÷ its requests; null without both readings. */
  cpuUsPerRequest: number | null;
}

const round = (n: number, digits: number) => Number(n.toFixed(digits));
const mb = (bytes: number | null | undefined) => (typeof bytes === 'number' ? round(bytes / 2 ** 20, 1) : null);
const meanMb = (xs: number[]) => (xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length / 2 ** 20, 1) : null);

export function minuteRow(m: number, samples: Sample[], counts: Counts): MinuteRow {
  const at = (i: number) => samples.find((s) => s.i === i);
  const inMinute = samples.filter((s) => s.i > m * PER_MINUTE && s.i <= (m + 1) * PER_MINUTE);
  const rss = inMinute.flatMap((s) => (s.rssBytes === null ? [] : [s.rssBytes]));
  const heap = inMinute.flatMap((s) => (s.heapBytes === null ? [] : [s.heapBytes]));
  const cpu0 = at(m * PER_MINUTE)?.cpu;
  const cpu1 = at((m + 1) * PER_MINUTE)?.cpu;
  return {
    minute: m + 1, ...counts,
    rssMb: meanMb(rss), heapMb: meanMb(heap), liveHeapMb: mb(at((m + 1) * PER_MINUTE)?.liveHeapBytes), rssSamples: rss.length, heapSamples: heap.length,
    cpuUsPerRequest: cpu0 && cpu1 && counts.requests > 0 ? round(cpuDelta(cpu0, cpu1) / counts.requests, 1) : null,
  };
}

/** Where the samples fell short of PER_MINUTE a minute, in words; [] when every reading was taken. */
export function missing(rows: MinuteRow[], samples: Sample[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    if (r.rssSamples < PER_MINUTE) out.push(`minute ${r.minute}: RSS ${r.rssSamples} of ${PER_MINUTE} samples`);
    if (r.heapSamples < PER_MINUTE) out.push(`minute ${r.minute}: heap ${r.heapSamples} of ${PER_MINUTE} samples`);
    if (r.liveHeapMb === null) out.push(`minute ${r.minute}: no live heap (the gateway's inspector did not answer)`);
    if (r.cpuUsPerRequest === null && r.requests > 0) out.push(`minute ${r.minute}: no CPU figure (a reading at its start or end failed)`);
  }
  const cpuFailed = samples.filter((s) => s.cpu === null).length;
  if (cpuFailed) out.push(`${cpuFailed} CPU readings failed`);
  return out;
}

export interface Verdict {
  rssChangePct: number | null;
  heapChangePct: number | null;
  /** true: both within FLAT_WITHIN_PCT; false: either beyond it; null: no verdict (one minute, or means missing). */
  flat: boolean | null;
  text: string;
}

const change = (first: number | null, last: number | null) => (first && last !== null ? round(((last - first) / first) * 100, 1) : null);
const signed = (pct: number) => `${pct >= 0 ? '+' : ''}${pct} %`;

/** The first minute's mean RSS and live heap against the last minute's (the heap samples' mean is quoted beside). */
export function verdict(rows: MinuteRow[]): Verdict {
  if (rows.length < 2) return { rssChangePct: null, heapChangePct: null, flat: null, text: 'no verdict: one minute only, so the first minute is the last' };
  const first = rows[0];
  const last = rows[rows.length - 1];
  const rssChangePct = change(first.rssMb, last.rssMb);
  const heapChangePct = change(first.liveHeapMb, last.liveHeapMb);
  const heapMeanPct = change(first.heapMb, last.heapMb);
  if (rssChangePct === null || heapChangePct === null) {
    return { rssChangePct, heapChangePct, flat: null, text: 'no verdict: the first or the last minute has no RSS sample or live heap' };
  }
  const flat = Math.abs(rssChangePct) <= FLAT_WITHIN_PCT && Math.abs(heapChangePct) <= FLAT_WITHIN_PCT;
  return {
    rssChangePct, heapChangePct, flat,
    text: `${flat ? 'flat' : 'NOT flat'}: RSS ${first.rssMb} → ${last.rssMb} MB (${signed(rssChangePct)}), live heap ${first.liveHeapMb} → ${last.liveHeapMb} MB (${signed(heapChangePct)}); target: both within ${FLAT_WITHIN_PCT} %`
      + ` (heap mean ${first.heapMb} → ${last.heapMb} MB${heapMeanPct === null ? '' : `, ${signed(heapMeanPct)}`})`,
  };
}
