// The Redis key layout. Per API key everything shares the hash tag {k:<id>}, per group of upstream accounts
// {g:<group>} (one Cluster slot each, so one Lua script updates it atomically); the record log and rollups across keys
// are spread over {global:<stripe>} (a chunk of records to one stripe, readers merge them); the rest lives under {global}.

/** Key names made per API key and group are kept (a request names them three times): at most this many of each. */
const KEPT_NAMES = 10_000;

/** `make(id)`, kept per id (all of them dropped when KEPT_NAMES are). */
function kept<V>(make: (id: string) => V): (id: string) => V {
  const made = new Map<string, V>();
  return (id) => {
    let v = made.get(id);
    if (v === undefined) {
      if (made.size >= KEPT_NAMES) made.clear();
      made.set(id, (v = make(id)));
    }
    return v;
  };
}

/** The global record log and rollups are spread over this many hash tags, so no one Cluster slot takes every record. */
export const GLOBAL_STRIPES = 6;

export type KeyNames = ReturnType<typeof keyNames>;
export type StripeNames = ReturnType<typeof stripeNames>;
export type GroupNames = ReturnType<typeof groupNames>;

/** Keys of one API key: `<prefix>{k:<id>}:<name>`. */
function keyNames(prefix: string, keyId: string) {
  const p = `${prefix}{k:${keyId}}:`;
  return {
    lease: `${p}lease`, // zset request id -> lease expiry (ms)
    rpm: `${p}rpm`, // zset request id -> admitted at (ms), last 60 s
    tpm: (minute: number) => `${p}tpm:${minute}`, // string: reserved + actual tokens of that minute
    acct: `${p}acct`, // hash spend, s5h/u5h, s1d/u1d, s7d/u7d (nano-dollars; window starts in ms)
    held: `${p}held`, // hash admission minute -> nano-dollars held by requests in flight (lua/held.lua)
    total: `${p}total`, // hash of counters (rollup.ts COUNTER_FIELDS), duration_ms and timed (requests with a duration)
    day: (date: string) => `${p}day:${date}`, // hash of counters for one UTC day
    dayModels: (date: string) => `${p}dm:${date}`, // hash "<counter>:<model>" for one UTC day
    hours: (date: string) => `${p}hr:${date}`, // hash "<HH>:<counter>" for each UTC hour of one UTC day
    hourModels: (date: string) => `${p}hm:${date}`, // hash "<HH>:<counter>:<model>" for each UTC hour of one UTC day
    rate: (minute: number) => `${p}rate:${minute}`, // hash "<epoch second>:r" requests, ":t" tokens settled in that second
    // hash request id -> 'd' settled (the settlement's idempotency marker), 'r' released (release.lua), for the
    // requests admitted in that minute
    markers: (minute: number) => `${p}mk:${minute}`,
    log: `${p}lg`, // hash chunk id -> chunk of records (batch.ts), '#' -> how many the chunks hold
    logIndex: `${p}lgi`, // zset "<chunk id> <oldest time> <records>" -> the chunk's newest record time
    conversation: (id: string) => `${p}conv:${id}`, // string: a kept conversation's JSON (expires: PX)
    signature: (name: string) => `${p}sig:${name}`, // string: a tool call's signature (expires: PX)
  };
}

/** Keys of one group's upstream accounts: `<prefix>{g:<group>}:<name>`. Every key expires. */
function groupNames(prefix: string, group: string) {
  const p = `${prefix}{g:${group}}:`;
  return {
    lease: kept((account: string) => `${p}lease:${account}`), // zset request id -> lease expiry (ms)
    state: kept((account: string) => `${p}state:${account}`), // hash cool (end ms), why (reason), probe ("1"), used (ms)
    bound: (kind: string, name: string) => `${p}${kind}:${name}`, // string: account (sticky session or response pin)
  };
}

/** One stripe of the records of every key: `<prefix>{global:<i>}:<name>`. */
function stripeNames(prefix: string, i: number) {
  const p = `${prefix}{global:${i}}:`;
  return {
    log: `${p}lg`, // the records of every key (those of the chunks written to this stripe), as a key's log
    logIndex: `${p}lgi`,
    summary: (unit: string, start: number) => `${p}sum:${unit}:${start}`, // hash of one bucket's rollup fields (summary.ts)
  };
}

export class KeyLayout {
  readonly prefix: string;
  readonly global: { keys: string; keyIds: string; claim: (name: string) => string; deliveries: string };
  /** The record log and rollups of every key, in GLOBAL_STRIPES parts (each chunk of records in one). */
  readonly stripes: StripeNames[];
  /** Pub/sub channel announcing issued-key changes to every process. */
  readonly channel: string;

  constructor(prefix: string) {
    this.prefix = prefix;
    const g = `${prefix}{global}:`;
    this.global = {
      keys: `${g}keys`, // hash sha256 -> issued key JSON
      keyIds: `${g}keyids`, // hash id -> sha256
      claim: (name: string) => `${g}once:${name}`, // string: the notifier's claim of an event (expires: PX)
      deliveries: `${g}deliveries`, // list of the latest webhook deliveries (JSON), newest first
    };
    this.stripes = Array.from({ length: GLOBAL_STRIPES }, (_, i) => stripeNames(prefix, i));
    this.channel = `${prefix}keys`;
  }

  /** Keys of one API key (keyNames), kept per key. */
  readonly key: (keyId: string) => KeyNames = kept((keyId) => keyNames(this.prefix, keyId));

  /** Keys of one group's upstream accounts (groupNames), kept per group. */
  readonly group: (group: string) => GroupNames = kept((group) => groupNames(this.prefix, group));
}
