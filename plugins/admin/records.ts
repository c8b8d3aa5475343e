// Stage `admin-usage`: the usage records of every key, newest first, filtered and paged (GET /admin/usage).
import { adminErrors } from './errors.ts';
import type { Plugin } from '../../core/types.ts';
import type { Ending, RecordFilter } from '../../core/store/types.ts';
import { parseCursor } from '../../core/store/paging.ts';
import { parseTime, reply } from './common.ts';

interface Options { default_limit: number; max_limit: number }

const PARAMS = new Set(['key', 'group', 'model', 'status', 'ending', 'from', 'to', 'limit', 'cursor']);
const ENDINGS: Ending[] = ['completed', 'incomplete', 'failed', 'disconnected', 'missing-terminal', 'timeout'];

/** ?status=429 (one status) or 4xx (a class). */
function statusRange(v: string): { min: number; max: number } {
  const m = /^([1-5])(xx|\d\d)$/i.exec(v);
  if (!m) throw adminErrors.invalid_status(undefined, { param: 'status' });
  if (m[2].toLowerCase() === 'xx') return { min: Number(m[1]) * 100, max: Number(m[1]) * 100 + 99 };
  return { min: Number(v), max: Number(v) };
}

export const adminUsage: Plugin<Options> = {
  name: 'admin-usage',
  description: 'Lists usage records: ?key=&group=&model=&status= (429, or a class: 4xx) &ending= (completed, incomplete, failed, disconnected, missing-terminal, timeout) &from=&to= (ISO 8601 or epoch ms) &limit=&cursor= (from the previous page). Place after admin-auth.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      default_limit: { type: 'integer', minimum: 1, default: 100, description: 'Records per page when ?limit is not given.' },
      max_limit: { type: 'integer', minimum: 1, default: 500, description: 'Largest ?limit accepted.' },
    },
  },
  // Only behind admin-auth: a chain without it is refused when the config loads.
  requires: ['admin'],
  create(options, env) {
    return async (ctx) => {
      const q = ctx.url.searchParams;
      // A misspelt filter would silently list everything; refuse it instead.
      for (const name of q.keys()) {
        if (!PARAMS.has(name)) throw adminErrors.invalid_query({ name, known: [...PARAMS].join(', ') }, { param: name });
      }
      const limit = q.has('limit') ? Number(q.get('limit')) : options.default_limit;
      if (!Number.isInteger(limit) || limit < 1 || limit > options.max_limit) {
        throw adminErrors.invalid_limit(options.max_limit, { param: 'limit' });
      }
      const filter: RecordFilter = { limit };
      for (const name of ['key', 'group', 'model', 'cursor'] as const) {
        const v = q.get(name);
        if (v) filter[name] = v;
      }
      if (filter.cursor && !parseCursor(filter.cursor)) throw adminErrors.invalid_cursor(undefined, { param: 'cursor' });
      if (q.get('status')) filter.status = statusRange(q.get('status')!);
      const ending = q.get('ending');
      if (ending) {
        if (!ENDINGS.includes(ending as Ending)) throw adminErrors.invalid_ending(ENDINGS.join(', '), { param: 'ending' });
        filter.ending = ending as Ending;
      }
      if (q.get('from')) filter.from = parseTime(q.get('from'), 'from');
      if (q.get('to')) filter.to = parseTime(q.get('to'), 'to');
      if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to) {
        throw adminErrors.invalid_time('from must not be after to', { param: 'from' });
      }
      const page = await env.store.records(filter);
      reply(ctx, 200, { records: page.records, cursor: page.cursor ?? null });
    };
  },
};
