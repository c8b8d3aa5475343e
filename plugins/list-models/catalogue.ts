// What an upstream lists, asked through one of a group's accounts: kept per runtime for a TTL and refreshed off the request
// path (a stale list is served while the next one is asked); only a first, cold ask makes a request wait, and not for long.
import type { AccountConfig, Env, GroupConfig, ModelListUpstream, UpstreamAuthStyle } from '../../core/types.ts';

export interface CatalogueOptions { ttl_ms: number; first_wait_ms: number; retry_ms: number; timeout_ms: number }

/** Where to ask: the list, and how the platform's accounts present their credential and where they live. */
export interface Source {
  list: ModelListUpstream; auth: UpstreamAuthStyle; baseUrl: string | undefined;
  /** The platform's kind and the account's credential on each page's request (plugins/upstream-access.ts). */
  finish?: (account: AccountConfig, path: string, headers: Record<string, string>) => Promise<{ path: string; headers: Record<string, string> }>;
}

interface Entry {
  /** The last list the upstream gave, kept while a newer one is asked (or cannot be). */
  ids?: Set<string>;
  /** When the last ask began, and whether it failed. */
  askedAt: number;
  failed: boolean;
  pending?: Promise<void>;
}

// Bounds on what one ask may cost: pages followed, bytes read per page, accounts tried.
const MAX_PAGES = 20;
const MAX_BYTES = 8 * 1024 * 1024;
const MAX_ACCOUNTS = 3;

/** One table per runtime (a reload starts afresh), shared by every list-models stage of it: one ask serves every route. */
const tables = new WeakMap<Env, Map<string, Map<ModelListUpstream, Entry>>>();

async function readJson(res: Response): Promise<unknown> {
  const declared = Number(res.headers.get('content-length'));
  if (declared > MAX_BYTES) throw new Error(`answer of ${declared} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.length;
    if (size > MAX_BYTES) throw new Error(`answer over ${MAX_BYTES} bytes`);
    chunks.push(chunk);
  }
  // JSON.parse quotes the text it fails on: the reason logged must not carry the upstream's words.
  try { return JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { throw new Error('an answer that is not JSON'); }
}

/** Every page of the list through one account; throws on any failure (status, timeout, unreadable answer). */
async function askAccount(source: Source, account: AccountConfig, timeoutMs: number): Promise<Set<string>> {
  const base = account.base_url ?? source.baseUrl;
  if (!base) throw new Error('no base URL');
  const given: Record<string, string> = { accept: 'application/json', ...source.list.headers };
  if (!source.finish && source.auth.header) given[source.auth.header] = source.auth.value(account.credential);
  const ids = new Set<string>();
  let path: string | undefined = source.list.path;
  for (let page = 0; path !== undefined && page < MAX_PAGES; page++) {
    const out = source.finish ? await source.finish(account, path, { ...given }) : { path, headers: given };
    const res = await fetch(base + out.path, { headers: out.headers, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`status ${res.status}`);
    }
    const read = source.list.page(await readJson(res));
    for (const id of read.ids) ids.add(id);
    path = read.next;
  }
  return ids;
}

export function catalogue(env: Env, o: CatalogueOptions) {
  let table = tables.get(env);
  if (!table) tables.set(env, table = new Map());
  const groups = table;

  /** The group's enabled accounts by priority, tried in turn until one answers. */
  async function ask(group: GroupConfig, source: Source): Promise<Set<string>> {
    const accounts = group.accounts.filter((a) => a.enabled).sort((a, b) => a.priority - b.priority).slice(0, MAX_ACCOUNTS);
    if (!accounts.length) throw new Error('no enabled account');
    let last: unknown;
    for (const account of accounts) {
      try { return await askAccount(source, account, o.timeout_ms); } catch (err) { last = err; }
    }
    throw last;
  }

  function refresh(group: GroupConfig, source: Source, entry: Entry): void {
    if (entry.pending) return;
    entry.askedAt = Date.now();
    entry.pending = ask(group, source).then(
      (ids) => {
        entry.ids = ids;
        entry.failed = false;
        env.models.listed(ids); // names an upstream serves may label metrics
      },
      (err: Error & { cause?: { code?: unknown; message?: unknown } }) => {
        // Said once per outage, not on every retry; a status, a socket error or a bound, never a header or a body.
        const cause = err.cause?.code ?? err.cause?.message;
        const reason = typeof cause === 'string' ? cause : err.message;
        if (!entry.failed) env.log.warn({ group: group.name, list: source.list.path, reason }, 'the upstream model list could not be read: listing what is known');
        entry.failed = true;
      },
    ).finally(() => { entry.pending = undefined; });
  }

  /**
   * The ids the upstream lists for this group, or undefined while it cannot be asked (not yet, or failing). A list
   * past its TTL is still answered, and asked again behind the request.
   */
  return async function ids(group: GroupConfig, source: Source): Promise<Set<string> | undefined> {
    let lists = groups.get(group.name);
    if (!lists) groups.set(group.name, lists = new Map());
    let entry = lists.get(source.list);
    if (!entry) lists.set(source.list, entry = { askedAt: 0, failed: false });
    if (Date.now() - entry.askedAt >= (entry.failed ? o.retry_ms : o.ttl_ms)) refresh(group, source, entry);
    // Cold: wait for the first answer, at most first_wait_ms after it was asked for.
    if (!entry.ids && entry.pending) await within(entry.pending, entry.askedAt + o.first_wait_ms - Date.now());
    return entry.ids;
  };
}

async function within(promise: Promise<void>, ms: number): Promise<void> {
  if (ms <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); })]);
  clearTimeout(timer);
}
