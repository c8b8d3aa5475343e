// Loads the store's Lua scripts and runs them by SHA (EVALSHA, falling back to EVAL once per connection/node; fuse.ts).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Cluster, type Redis } from 'ioredis';
import { withConstants } from './constants.ts';
import { evalsha, ScriptFuser } from './fuse.ts';

export type RedisClient = Redis | Cluster;

const fusers = new WeakMap<Redis, ScriptFuser>();

/** The list form of a script (fuse.ts): `fn`, a function of the calls of one turn, defined by `source`. */
export interface ManyForm { fn: string; source: string }

const read = (file: string) => readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');

export class LuaScript {
  readonly sha: string;
  /** What runs for one call (EVALSHA alone, or a function of a fused call). */
  readonly source: string;
  /** The list form, for a turn with several calls of this script; undefined when it has none. */
  readonly many: ManyForm | undefined;
  /**
   * `source` defaults to the file's text (tests pass their own to exercise a script Redis never saw), after the text of
   * the `uses` files (helpers several scripts share: Redis runs each script alone, with no includes), with the names of
   * constants.ts replaced by their values. `many`: the list form's file (with its own `uses`) and the function it
   * defines: a function of the n calls of one turn, (n, K, A, NK, NA): where call i's keys and arguments start in KEYS
   * and ARGV (K[i], A[i]) and how many (NK[i], NA[i]), returning their results, with the result of running them one by
   * one in order. A call alone always runs the one-call form, which costs Redis least.
   */
  constructor(file: string, source = read(file), uses: string[] = [], many?: { file: string; fn: string; uses?: string[]; source?: string }) {
    this.source = withConstants([...uses.map(read), source].join('\n'));
    this.sha = createHash('sha1').update(this.source).digest('hex');
    this.many = many && { fn: many.fn, source: withConstants([...(many.uses ?? []).map(read), many.source ?? read(many.file)].join('\n')) };
  }

  /**
   * Runs on the node owning keys[0]: every key of one call must share a hash tag (one slot). On one Redis, with the
   * other script calls of the same turn of the event loop (fuse.ts). Not async: the fuser's promise is the call's own
   * (an async wrapper would add a promise and a microtask to each of a request's four or so store calls).
   */
  run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    if (!(client instanceof Cluster)) {
      let fuser = fusers.get(client);
      if (!fuser) fusers.set(client, fuser = new ScriptFuser(client));
      return fuser.run(this, keys, args);
    }
    return evalsha(client, this, keys, args);
  }
}

export const scripts = {
  admit: new LuaScript('admit.lua', undefined, ['zadd.lua', 'held.lua'], {
    file: 'admit-many.lua', uses: ['zadd.lua', 'zset.lua', 'held.lua'], fn: 'admit_many',
  }),
  heartbeat: new LuaScript('heartbeat.lua'),
  settle: new LuaScript('settle.lua', undefined, ['log.lua'], { file: 'settle-many.lua', uses: ['log.lua'], fn: 'settle_many' }),
  release: new LuaScript('release.lua'),
  logKey: new LuaScript('log-key.lua', undefined, ['log.lua']),
  logGlobal: new LuaScript('log-global.lua', undefined, ['log.lua']),
  keyPut: new LuaScript('key-put.lua'),
  keyUpdate: new LuaScript('key-update.lua'),
  keyDelete: new LuaScript('key-delete.lua'),
  accountAcquire: new LuaScript('account-acquire.lua', undefined, ['zadd.lua', 'pick.lua'], {
    file: 'account-acquire-many.lua', uses: ['zadd.lua', 'zset.lua', 'pick.lua'], fn: 'acquire_many',
  }),
  accountCooldown: new LuaScript('account-cooldown.lua'),
  accountRelease: new LuaScript('account-release.lua', undefined, [], { file: 'account-release-many.lua', fn: 'release_many' }),
  accountStates: new LuaScript('account-states.lua'),
};
