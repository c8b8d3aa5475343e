// Script calls made in one turn of the event loop (and while a fused call is in flight) go to one Redis as one script
// call, grouped by script; a script's list form runs all its calls at once, reading and writing what they share once.
// Any order of them is one their callers could have seen: all were sent before any was answered. Each call keeps its
// own answer or error. Under Cluster the calls are fused per hash slot (a script may touch one slot only); a single
// Redis is the case of one slot.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import calculateSlot from 'cluster-key-slot';
import { Cluster, Command, type Redis } from 'ioredis';
import { withConstants } from './constants.ts';

/** A connection to one Redis or to a Cluster. */
export type RedisClient = Redis | Cluster;

/** What the fuser reads of a script (index.ts's LuaScript). */
export interface FusedScript {
  readonly sha: string;
  readonly source: string;
  readonly many: { fn: string; source: string } | undefined;
}

/** Before every fused script and list form (prelude.lua). */
export const PRELUDE = withConstants(readFileSync(new URL('./prelude.lua', import.meta.url), 'utf8'));

interface Call { script: FusedScript; keys: string[]; args: (string | number)[]; resolve(v: unknown): void; reject(e: Error): void }

/** A fused call stays this small (keys + arguments), so no one call holds Redis long; a larger call goes alone. */
const MAX_ARGS = 20_000;
/** New calls wait for the call in flight at most this long, so a stall does not spend their own time limits. */
const HOLD_MS = 10;
/** A call this large with no list form (a chunk of records) goes alone: copying its arguments costs more. */
const ALONE_ARGS = 64;
/** Distinct script combinations kept compiled (a few occur: admit + acquire, release + settle, the batch's). */
const MAX_COMBOS = 64;

/**
 * One script running `scripts` as local functions. ARGV[1] is the header, one text argument (docs/performance.md):
 * numbers of 21 bits as three 7-bit characters, per group of calls of one script its function and number of calls,
 * then per call #keys + 2^20 (-m: the keys of the group's m-th call) and #args. Script i is f<i>(KEYS, ARGV) for one
 * call, or g<i>(n, K, A, NK, NA) for a list form: call m's keys are KEYS[K[m] + 1 .. K[m] + NK[m]], its arguments
 * likewise in ARGV. The answer holds per group its calls' answers (false for nil, {err = message} for a failed call).
 */
function fusedSource(scripts: FusedScript[]): string {
  const fns = scripts.map((s, i) => {
    const m = s.many;
    return m ? `local function g${i + 1}(n, K, A, NK, NA)\n${m.source}\nreturn ${m.fn}(n, K, A, NK, NA)\nend`
      : `local function f${i + 1}(KEYS, ARGV)\n${s.source}\nend`;
  });
  return `${PRELUDE}
${fns.join('\n')}
local fns = {${scripts.map((s, i) => (s.many ? 'false' : `f${i + 1}`)).join(', ')}}
local lists = {${scripts.map((s, i) => (s.many ? `g${i + 1}` : 'false')).join(', ')}}
local function err(r) return type(r) == 'table' and r.err or tostring(r) end
-- p: where the next group's header starts; k, a: where its calls' keys and arguments start in KEYS and ARGV.
local head, p, k, a, g, out = ARGV[1], 1, 0, 1, 0, {}
while p < #head do
  g = g + 1
  local f1, f2, f3, n1, n2, n3 = string.byte(head, p, p + 5)
  local f, n = (f1 * 128 + f2) * 128 + f3, (n1 * 128 + n2) * 128 + n3
  p = p + 6
  -- Call m's keys: NK[m] from KEYS[K[m] + 1]; its arguments: NA[m] from ARGV[A[m] + 1].
  local K, A, NK, NA = presized(n), presized(n), presized(n), presized(n)
  for m = 1, n do
    local k1, k2, k3, a1, a2, a3 = string.byte(head, p, p + 5)
    local nk, na = (k1 * 128 + k2) * 128 + k3 - 1048576, (a1 * 128 + a2) * 128 + a3
    p = p + 6
    if nk < 0 then
      K[m], NK[m] = K[-nk], NK[-nk]
    else
      K[m], NK[m] = k, nk
      k = k + nk
    end
    A[m], NA[m] = a, na
    a = a + na
  end
  local list = lists[f]
  if list then
    local ok, r = pcall(list, n, K, A, NK, NA)
    if ok then out[g] = r else out[g] = {err = err(r)} end
  else
    local fn, r = fns[f], {}
    for m = 1, n do
      local keys, argv, ko, ao = {}, {}, K[m], A[m]
      for j = 1, NK[m] do keys[j] = KEYS[ko + j] end
      for j = 1, NA[m] do argv[j] = ARGV[ao + j] end
      local ok, v = pcall(fn, keys, argv)
      if not ok then v = {err = err(v)} elseif v == nil then v = false end
      r[m] = v
    end
    out[g] = r
  end
end
return out`;
}

/** Sends at once, outside ioredis's auto-pipeline (which would hold it for another turn of the loop). */
export async function evalsha(client: RedisClient, script: { sha: string; source: string }, keys: string[], args: (string | number | Buffer)[]): Promise<unknown> {
  const send = (name: string, first: string) =>
    client.sendCommand(new Command(name, [first, keys.length, ...keys, ...args], { replyEncoding: 'utf8' })) as Promise<unknown>;
  try {
    return await send('evalsha', script.sha);
  } catch (err) {
    // A restarted or failed-over server has an empty script cache; EVAL loads the script again.
    if (!String((err as Error)?.message).includes('NOSCRIPT')) throw err;
    return send('eval', script.source);
  }
}

/** Added to a call's #keys in the header, so the -m of a call that reuses an earlier one's keys is not negative. */
const KEYS_OFFSET = 2 ** 20;

/** n (0 to 2^21 - 1) into the header at p as three 7-bit ASCII characters, most significant first; returns the next p. */
function write21(head: Buffer, p: number, n: number): number {
  if (!(n >= 0 && n < 2 ** 21)) throw new RangeError(`fused script header: ${n} does not fit in 21 bits`);
  head[p] = n >> 14;
  head[p + 1] = (n >> 7) & 127;
  head[p + 2] = n & 127;
  return p + 3;
}

const sameKeys = (a: string[], b: string[]): boolean => a.length === b.length && a.every((k, i) => k === b[i]);

/** Each call's answer from the fused script's answer: per group of calls (fusedSource), per call its value. */
function answer(groups: Call[][], out: unknown[]): void {
  groups.forEach((calls, g) => {
    const r = out[g];
    calls.forEach((c, m) => {
      const v = r instanceof Error ? r : Array.isArray(r) && m < r.length ? r[m] : NO_RESULT;
      if (v instanceof Error) c.reject(new Error(v.message));
      else c.resolve(v ?? null);
    });
  });
}

const NO_RESULT = new Error('fused script returned no result');

export class ScriptFuser {
  readonly #client: RedisClient;
  /** A call's fusing group: its keys' slot on a Cluster, one group on a single Redis. */
  readonly #slotOf: (c: Call) => number;
  #queue: Call[] = [];
  readonly #combos = new Map<string, { sha: string; source: string; index: Map<FusedScript, number> }>();

  constructor(client: RedisClient) {
    this.#client = client;
    this.#slotOf = client instanceof Cluster ? (c) => (c.keys.length ? calculateSlot(c.keys[0]) : -1) : () => 0;
  }

  /** Fused calls sent and not answered yet: while there is one, new calls wait for its answer (#schedule). */
  #inFlight = 0;
  #scheduled = false;
  #hold: NodeJS.Timeout | undefined;

  run(script: FusedScript, keys: string[], args: (string | number)[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ script, keys, args, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Sends what is queued at the end of the turn (setImmediate), and not before the call in flight is answered (or
   * HOLD_MS passed): under load one script call then carries a round trip's requests, not a turn's.
   */
  #schedule(): void {
    if (this.#scheduled || !this.#queue.length) return;
    if (this.#inFlight > 0) {
      this.#hold ??= setTimeout(() => {
        this.#hold = undefined;
        this.#sendQueued();
      }, HOLD_MS).unref();
      return;
    }
    this.#sendQueued();
  }

  #sendQueued(): void {
    if (this.#scheduled || !this.#queue.length) return;
    clearTimeout(this.#hold);
    this.#hold = undefined;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #sent(): void {
    this.#inFlight--;
    this.#schedule();
  }

  #flush(): void {
    const queue = this.#queue;
    if (!queue.length) return;
    this.#queue = [];
    const bySlot = new Map<number, { calls: Call[]; size: number }>();
    for (const c of queue) {
      const n = c.keys.length + c.args.length + 3;
      // A call with no keys has no slot to share (-1): alone.
      const slot = this.#slotOf(c);
      if ((n > ALONE_ARGS && !c.script.many) || slot < 0) {
        this.#send([c]);
        continue;
      }
      let group = bySlot.get(slot);
      if (!group) bySlot.set(slot, (group = { calls: [], size: 0 }));
      else if (group.size + n > MAX_ARGS) { this.#send(group.calls); group.calls = []; group.size = 0; }
      group.calls.push(c);
      group.size += n;
    }
    for (const group of bySlot.values()) this.#send(group.calls);
  }

  #send(calls: Call[]): void {
    this.#inFlight++;
    if (calls.length === 1) {
      const [c] = calls;
      evalsha(this.#client, c.script, c.keys, c.args).then(
        (v) => { c.resolve(v); this.#sent(); },
        (err: Error) => { c.reject(err); this.#sent(); },
      );
      return;
    }
    // The calls of each script together, the scripts in the order of their first call.
    const byScript = new Map<FusedScript, Call[]>();
    for (const c of calls) {
      const group = byScript.get(c.script);
      if (group) group.push(c);
      else byScript.set(c.script, [c]);
    }
    const groups = [...byScript.values()];
    const combo = this.#combo(calls);
    const head = Buffer.allocUnsafe(6 * (groups.length + calls.length));
    const keys: string[] = [];
    const args: (string | number)[] = [''];
    let p = 0;
    for (const group of groups) {
      p = write21(head, p, combo.index.get(group[0].script)!);
      p = write21(head, p, group.length);
      // The last call of the group that sent its keys: a call with the same keys refers to it instead.
      let last: { at: number; keys: string[] } | undefined;
      group.forEach((c, m) => {
        const same = last !== undefined && sameKeys(last.keys, c.keys);
        p = write21(head, p, (same ? -last!.at : c.keys.length) + KEYS_OFFSET);
        p = write21(head, p, c.args.length);
        for (const v of c.args) args.push(v);
        if (same) return;
        last = { at: m + 1, keys: c.keys };
        for (const k of c.keys) keys.push(k);
      });
    }
    args[0] = head.toString('latin1', 0, p);
    evalsha(this.#client, combo, keys, args).then(
      (out) => { answer(groups, out as unknown[]); this.#sent(); },
      (err: Error) => { for (const c of calls) c.reject(err); this.#sent(); },
    );
  }

  #combo(calls: Call[]) {
    // In one order whatever the calls' order, so each set of scripts is compiled (and loaded into Redis) once.
    const scripts = [...new Set(calls.map((c) => c.script))].sort((a, b) => (a.sha < b.sha ? -1 : 1));
    const id = scripts.map((s) => s.sha).join(',');
    let combo = this.#combos.get(id);
    if (!combo) {
      if (this.#combos.size >= MAX_COMBOS) this.#combos.clear();
      const source = fusedSource(scripts);
      combo = { source, sha: createHash('sha1').update(source).digest('hex'), index: new Map(scripts.map((s, i) => [s, i + 1])) };
      this.#combos.set(id, combo);
    }
    return combo;
  }
}
