// Loads the store's Lua scripts and runs them by SHA (EVALSHA, falling back to EVAL once per connection/node; fuse.ts).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Cluster, type Redis } from 'ioredis';
import { evalsha, ScriptFuser } from './fuse.ts';

export type RedisClient = Redis | Cluster;

const fusers = new WeakMap<Redis, ScriptFuser>();

export class LuaScript {
  readonly sha: string;
  /** What EVAL runs for one call alone. */
  readonly source: string;
  /** The script's text (after its `uses`), as fused with others (fuse.ts). */
  readonly body: string;
  /** The function of a list of calls the script defines, when it takes several at once (fuse.ts); else undefined. */
  readonly many: string | undefined;
  /**
   * `source` defaults to the file's text (tests pass their own to exercise a script Redis never saw), after the text of
   * the `uses` files (helpers several scripts share: Redis runs each script alone, with no includes). With `many`, the
   * script defines that function of a list of calls ({k, a, nk, na} each: where its keys and arguments start in KEYS
   * and ARGV, and how many) returning the list of their results; one call alone runs it with a list of one.
   */
  constructor(file: string, source = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8'), uses: string[] = [], many?: string) {
    this.body = [...uses.map((u) => readFileSync(new URL(`./${u}`, import.meta.url), 'utf8')), source].join('\n');
    this.many = many;
    this.source = many ? `${this.body}\nreturn ${many}({{0, 0, #KEYS, #ARGV}})[1]` : this.body;
    this.sha = createHash('sha1').update(this.source).digest('hex');
  }

  /**
   * Runs on the node owning keys[0]: every key of one call must share a hash tag (one slot). On one Redis, with the
   * other script calls of the same turn of the event loop (fuse.ts).
   */
  async run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    if (!(client instanceof Cluster)) {
      let fuser = fusers.get(client);
      if (!fuser) fusers.set(client, fuser = new ScriptFuser(client));
      return fuser.run(this, keys, args);
    }
    return evalsha(client, this, keys, args);
  }
}

export const scripts = {
  admit: new LuaScript('admit.lua', undefined, ['zset.lua'], 'admit_many'),
  heartbeat: new LuaScript('heartbeat.lua'),
  settle: new LuaScript('settle.lua', undefined, [], 'settle_many'),
  release: new LuaScript('release.lua'),
  settleBatch: new LuaScript('settle-batch.lua', undefined, ['trim.lua']),
  globalRecord: new LuaScript('global-record.lua', undefined, ['trim.lua']),
  keyPut: new LuaScript('key-put.lua'),
  keyUpdate: new LuaScript('key-update.lua'),
  keyDelete: new LuaScript('key-delete.lua'),
  accountAcquire: new LuaScript('account-acquire.lua', undefined, ['zset.lua'], 'acquire_many'),
  accountCooldown: new LuaScript('account-cooldown.lua'),
  accountRelease: new LuaScript('account-release.lua', undefined, [], 'release_many'),
  accountStates: new LuaScript('account-states.lua'),
};
