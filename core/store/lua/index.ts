// Loads the store's Lua scripts and runs them by SHA (EVALSHA, falling back to EVAL once per connection/node; fuse.ts).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { withConstants } from './constants.ts';
import { type FusedScript, PRELUDE, type RedisClient, ScriptFuser } from './fuse.ts';

export type { RedisClient };

const fusers = new WeakMap<RedisClient, ScriptFuser>();

/** A script's list form (fuse.ts): `fn`, a function of the calls of one turn, defined by `source`. */
export interface ManyForm { fn: string; source: string }

const read = (file: string) => readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');

export class LuaScript implements FusedScript {
  readonly sha: string;
  /** What a call alone runs (EVALSHA): the script, or its list form on a turn of one. */
  readonly source: string;
  /** The list form, which every call of the script runs (fused or alone); undefined for a one-call script. */
  readonly many: ManyForm | undefined;
  /**
   * The file's text (or `source`: tests) after the `uses` files' (shared helpers: Redis has no includes), the names of
   * constants.ts replaced by their values. `many`: the list form's function (fuse.ts), which must answer as running the
   * calls one by one in order would; without it the text is the script of one call.
   */
  constructor(file: string, source = read(file), uses: string[] = [], many?: string) {
    const text = withConstants([...uses.map(read), source].join('\n'));
    this.many = many === undefined ? undefined : { fn: many, source: text };
    // A call alone: a turn of one, its keys and arguments all of KEYS and ARGV.
    this.source = many === undefined ? text : `${PRELUDE}${text}\nreturn ${many}(1, {0}, {0}, {#KEYS}, {#ARGV})[1]`;
    this.sha = createHash('sha1').update(this.source).digest('hex');
  }

  /** Every key of one call shares a hash tag (one slot); fused with the turn's other calls on that slot (fuse.ts). */
  run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    let fuser = fusers.get(client);
    if (!fuser) fusers.set(client, fuser = new ScriptFuser(client));
    return fuser.run(this, keys, args);
  }
}

export const scripts = {
  admit: new LuaScript('admit.lua', undefined, ['zadd.lua', 'zset.lua', 'held.lua'], 'admit_many'),
  heartbeat: new LuaScript('heartbeat.lua'),
  settle: new LuaScript('settle.lua', undefined, ['log.lua', 'held.lua'], 'settle_many'),
  release: new LuaScript('release.lua', undefined, ['held.lua']),
  logKey: new LuaScript('log-key.lua', undefined, ['log.lua']),
  logGlobal: new LuaScript('log-global.lua', undefined, ['log.lua']),
  keyPut: new LuaScript('key-put.lua'),
  keyUpdate: new LuaScript('key-update.lua'),
  keyDelete: new LuaScript('key-delete.lua'),
  accountAcquire: new LuaScript('account-acquire.lua', undefined, ['zadd.lua', 'zset.lua', 'pick.lua'], 'acquire_many'),
  accountCooldown: new LuaScript('account-cooldown.lua'),
  accountRelease: new LuaScript('account-release.lua', undefined, [], 'release_many'),
  accountStates: new LuaScript('account-states.lua'),
};
