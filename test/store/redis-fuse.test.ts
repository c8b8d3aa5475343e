// Script calls of one turn of the event loop go to Redis as one script call (core/store/lua/fuse.ts): each caller still
// gets its own answer or its own error, in call order, and a call of a later turn goes on its own.
// A redis-server of the test's own, so INFO commandstats counts only these calls.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { LuaScript, scripts } from '../../core/store/lua/index.ts';
import { redisProcess } from '../helpers/redis-process.ts';

/** Calls per command since the last CONFIG RESETSTAT, from INFO commandstats. */
async function commandCalls(redis: Redis): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}

// Fresh sources each run: a script Redis knows from an earlier run would hide the loading path.
const salt = randomBytes(6).toString('hex');
const append = new LuaScript('append', `-- ${salt}\nredis.call('RPUSH', KEYS[1], ARGV[1]) return redis.call('LRANGE', KEYS[1], 0, -1)`);
const incr = new LuaScript('incr', `-- ${salt}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`);
const nothing = new LuaScript('nothing', `-- ${salt}\nif ARGV[1] == 'false' then return false end return nil`);

t.test('calls of one turn: one script call, each caller its own answer, in order', async (t) => {
  const server = await redisProcess(t);
  const c = new Redis(server.url);
  t.teardown(() => c.quit());
  await c.set('n', '5');
  await c.config('RESETSTAT');
  const answers = await Promise.all([
    append.run(c, ['log'], ['a']),
    incr.run(c, ['n'], [2]),
    append.run(c, ['log'], ['b']),
    nothing.run(c, ['x'], ['false']),
    nothing.run(c, ['x'], ['nil']),
    incr.run(c, ['n'], [-10]),
  ]);
  t.strictSame(answers, [['a'], 7, ['a', 'b'], null, null, -3]);
  const calls = await commandCalls(c);
  // The set of three scripts is new to this server: EVALSHA answered NOSCRIPT, then EVAL loaded and ran it.
  t.equal(calls.eval, 1, 'one script call for the six');
  t.equal(calls.rpush, 2, 'every call ran');

  await c.config('RESETSTAT');
  t.strictSame(await Promise.all([incr.run(c, ['n'], [1]), nothing.run(c, ['x'], ['nil']), append.run(c, ['log'], ['c'])]), [-2, null, ['a', 'b', 'c']]);
  const again = await commandCalls(c);
  t.equal(again.evalsha, 1, 'the same scripts in another order: one EVALSHA of the set Redis knows now');
  t.equal(again.eval, undefined);
});

// A script with a list form: all its calls of a turn in one invocation of it (it logs the size of each list); a call
// alone runs it as a turn of one.
const tally = new LuaScript('tally', `-- ${salt}
local function tally(n, K, A)
  local out = {}
  for i = 1, n do
    local key, by = KEYS[K[i] + 1], ARGV[A[i] + 1]
    if by == 'bad' then out[i] = {err = 'bad call'} else out[i] = redis.call('INCRBY', key, by) end
  end
  redis.call('RPUSH', 'sizes', n)
  return out
end`, [], 'tally');

t.test('a script with a list form takes its calls of a turn at once, at the place of the first; each still gets its own answer', async (t) => {
  const server = await redisProcess(t);
  const c = new Redis(server.url);
  t.teardown(() => c.quit());
  const answers = await Promise.allSettled([
    tally.run(c, ['n'], [1]),
    incr.run(c, ['n'], [2]),
    tally.run(c, ['n'], ['bad']),
    tally.run(c, ['n'], [3]),
  ]);
  t.strictSame(answers.map((a) => (a.status === 'fulfilled' ? a.value : a.reason.message)), [1, 6, 'bad call', 4],
    'the three tally calls ran together before incr');
  t.strictSame(await c.lrange('sizes', 0, -1), ['3'], 'one invocation of three calls');
  t.equal(await tally.run(c, ['n'], [10]), 16, 'alone (no other call in the turn)');
  await t.rejects(tally.run(c, ['n'], ['bad']), /bad call/);
  t.strictSame(await Promise.all([tally.run(c, ['n'], [1]), incr.run(c, ['n'], [1])]), [17, 18], 'with other scripts but alone of its own');
  t.strictSame(await c.lrange('sizes', 0, -1), ['3', '1', '1', '1'], 'a call alone runs the list form as a turn of one');
});

// Answers of every shape a script gives, fused as alone; calls of one script with the same keys send them once.
const shapes = new LuaScript('shapes', `-- ${salt}
local kind = ARGV[1]
if kind == 'keys' then return KEYS end
if kind == 'hole' then return {1, nil, 3} end
if kind == 'nested' then return {1, {2, {3}}, 'x'} end
if kind == 'status' then return redis.status_reply('FINE') end
if kind == 'error' then return redis.error_reply('refused here') end
if kind == 'empty' then return {} end
return tonumber(kind)`);

t.test('every shape of answer reaches its caller as it would alone; shared keys are sent once', async (t) => {
  const server = await redisProcess(t);
  const c = new Redis(server.url);
  t.teardown(() => c.quit());
  const cases: [string[], string][] = [
    [['a', 'b'], 'keys'], [['a', 'b'], 'keys'], [['c'], 'keys'], [['a', 'b'], 'keys'], [['x'], 'hole'], [['x'], 'nested'],
    [['x'], 'status'], [['x'], 'error'], [['x'], 'empty'], [['x'], '-7'], [['x'], 'keys'],
  ];
  const settle = (ps: Promise<unknown>[]) => Promise.allSettled(ps).then((rs) => rs.map((r) => (r.status === 'fulfilled' ? r.value : `error: ${r.reason.message}`)));
  const alone: unknown[] = [];
  for (const [keys, kind] of cases) alone.push(...(await settle([shapes.run(c, keys, [kind])])));
  t.strictSame(alone, [['a', 'b'], ['a', 'b'], ['c'], ['a', 'b'], [1], [1, [2, [3]], 'x'], 'FINE', 'error: refused here', [], -7, ['x']]);
  await c.config('RESETSTAT');
  const watcher = new Redis(server.url);
  const monitor = await watcher.monitor();
  t.teardown(() => { monitor.disconnect(); watcher.disconnect(); });
  const seen: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[]) => { if (/^eval/i.test(args[0])) seen.push(args); });
  // Fused: each caller gets what it got alone (the error fails its own call only).
  t.strictSame(await settle(cases.map(([keys, kind]) => shapes.run(c, keys, [kind]))), alone);
  const calls = await commandCalls(c);
  t.equal(calls.eval, 1, 'one script run for the eleven (EVAL: the set of scripts is new to this server)');
  await new Promise((r) => setTimeout(r, 50));
  // A call with the keys of the script's last call that sent keys refers to them: a,b / (a,b) / c / a,b / x / (x) ...
  t.strictSame(seen.at(-1)?.slice(3, 3 + Number(seen.at(-1)?.[2])), ['a', 'b', 'c', 'a', 'b', 'x'], 'keys sent once per run of equal ones');
});

t.test('a fused call is all text (ioredis writes it in one piece), and its header counts past 16 bits of calls\' arguments', async (t) => {
  const server = await redisProcess(t);
  const c = new Redis(server.url);
  t.teardown(() => c.quit());
  const sent: unknown[][] = [];
  const send = c.sendCommand.bind(c);
  c.sendCommand = ((command: { name: string; args: unknown[] }, stream?: unknown) => {
    if (/^eval/.test(command.name)) sent.push(command.args);
    return send(command as never, stream as never);
  }) as typeof c.sendCommand;
  // A list-form call of 19 000 arguments first (a call of more than MAX_ARGS would go alone), 300 small ones after it:
  // the first fused call carries it and the 199 that fit with it (MAX_ARGS 20 000), its header 19 000 and 200, past
  // what 7 or 14 bits hold; the rest go in a second one.
  const big = Array.from({ length: 19_000 }, (_, i) => String(i % 7));
  const calls = [tally.run(c, ['big'], big), ...Array.from({ length: 300 }, (_, i) => tally.run(c, [`k${i % 3}`], [1]))];
  const answers = await Promise.all(calls);
  t.equal(answers[0], 0, 'the large call ran with its own first argument (0)');
  t.strictSame(answers.slice(-3), [100, 100, 100], 'and every small one, in order');
  // EVALSHA, answered NOSCRIPT (the set of scripts is new to this server), then EVAL: the same arguments each time.
  const fused = sent.filter((args) => args.length > 19_000);
  t.ok(fused.length >= 1, `${sent.length} script calls of ${sent.map((a) => a.length).join(', ')} arguments`);
  t.equal(fused.flat().filter((a) => typeof a !== 'string').length, 0, 'every argument a string: no Buffer puts ioredis on its slow path');
  for (const args of fused) t.ok(/^[\x00-\x7f]*$/.test(String(args[2 + Number(args[1])])), 'the header is ASCII');
});

t.test('an error fails its own call only; the calls before and after it ran', async (t) => {
  const server = await redisProcess(t);
  const c = new Redis(server.url);
  t.teardown(() => c.quit());
  await c.set('text', 'not a number');
  const [before, failed, after] = await Promise.allSettled([
    incr.run(c, ['n'], [1]),
    incr.run(c, ['text'], [1]),
    append.run(c, ['log'], ['z']),
  ]);
  t.strictSame(before, { status: 'fulfilled', value: 1 });
  t.equal(failed.status, 'rejected');
  t.match((failed as PromiseRejectedResult).reason.message, /not an integer/);
  t.strictSame(after, { status: 'fulfilled', value: ['z'] });
});

t.test('a large call of a script with no list form goes as its own script call; the rest of its turn still go as one', async (t) => {
  const server = await redisProcess(t);
  const c = new Redis(server.url);
  t.teardown(() => c.quit());
  const many = Array.from({ length: 100 }, (_, i) => `v${i}`);
  // A script Redis knows, run alone once, so the calls below count as EVALSHA only.
  const last = new LuaScript('last', `-- ${salt}\nredis.call('SET', KEYS[1], ARGV[#ARGV]) return #ARGV`);
  await last.run(c, ['last'], ['0']);
  await Promise.all([incr.run(c, ['n'], [0]), append.run(c, ['log'], ['0'])]);
  await c.config('RESETSTAT');
  const answers = await Promise.all([incr.run(c, ['n'], [1]), last.run(c, ['last'], many), append.run(c, ['log'], ['a']), last.run(c, ['last'], ['small'])]);
  t.strictSame(answers, [1, 100, ['0', 'a'], 1], 'each caller its own answer');
  t.equal(await c.get('last'), 'small', 'the small call made after the large one ran after it');
  t.equal((await commandCalls(c)).evalsha, 2, 'the 100-argument call alone; the three others fused');
});

t.test('a call of a later turn goes on its own', async (t) => {
  const server = await redisProcess(t);
  const c = new Redis(server.url);
  t.teardown(() => c.quit());
  await incr.run(c, ['n'], [1]); // loads the script
  await c.config('RESETSTAT');
  await incr.run(c, ['n'], [1]);
  await incr.run(c, ['n'], [1]);
  t.equal((await commandCalls(c)).evalsha, 2);
  t.equal(await c.get('n'), '3');
});

t.test('calls made while a script call is in flight wait for its answer, then go as one', async (t) => {
  const server = await redisProcess(t);
  const c = new Redis(server.url);
  t.teardown(() => c.quit());
  await incr.run(c, ['n'], [1]); // loads the script
  await append.run(c, ['log'], ['x']);
  await Promise.all([incr.run(c, ['n'], [1]), append.run(c, ['log'], ['y'])]); // and the set of both
  await c.config('RESETSTAT');
  server.pause(); // the first call stays unanswered while the others are made, each in a turn of its own
  t.teardown(() => server.resume());
  const first = incr.run(c, ['n'], [10]);
  await new Promise((r) => setTimeout(r, 20));
  const second = incr.run(c, ['n'], [100]);
  await new Promise((r) => setImmediate(r));
  const third = append.run(c, ['log'], ['z']);
  await new Promise((r) => setTimeout(r, 20));
  server.resume();
  t.strictSame(await Promise.all([first, second, third]), [12, 112, ['x', 'y', 'z']]);
  t.equal((await commandCalls(c)).evalsha, 2, 'the first alone, the two made meanwhile together');
});

t.test('a script call that does not answer holds the calls made meanwhile back only briefly: each has its own time limit', async (t) => {
  const server = await redisProcess(t);
  const c = new Redis(server.url, { commandTimeout: 300 });
  c.on('error', () => {});
  t.teardown(() => c.disconnect());
  await incr.run(c, ['n'], [1]);
  server.pause();
  t.teardown(() => server.resume());
  const first = incr.run(c, ['n'], [1]).catch((err: Error) => err);
  await new Promise((r) => setTimeout(r, 100));
  const made = Date.now();
  const second = await incr.run(c, ['n'], [1]).catch((err: Error) => err);
  const waited = Date.now() - made;
  t.match(String(second), /timed out/);
  t.match(String(await first), /timed out/);
  t.ok(waited >= 290 && waited < 450, `the second call failed ${waited} ms after it was made (its own 300 ms, not the first's rest first)`);
});

t.test('a connection that fails fails every call it carried', async (t) => {
  const server = await redisProcess(t);
  const c = new Redis(server.url, { commandTimeout: 200 });
  c.on('error', () => {});
  t.teardown(() => c.disconnect());
  await incr.run(c, ['n'], [1]);
  server.pause();
  t.teardown(() => server.resume());
  const results = await Promise.allSettled([incr.run(c, ['n'], [1]), append.run(c, ['log'], ['q'])]);
  t.strictSame(results.map((r) => r.status), ['rejected', 'rejected']);
  t.match((results[0] as PromiseRejectedResult).reason.message, /timed out/);
});

t.test('a Redis without ZMSCORE (before 6.2) runs the list forms too: the members are asked one by one', async (t) => {
  const answers: unknown[][] = [];
  for (const args of [[], ['--rename-command', 'ZMSCORE', '']]) {
    const server = await redisProcess(t, { args });
    const c = new Redis(server.url);
    t.teardown(() => c.quit());
    if (args.length) await t.rejects(c.call('ZMSCORE', 'x', 'a'), /unknown command/i, 'no ZMSCORE here');
    const keys = ['{k}:lease', '{k}:rpm', '{k}:tpm', '{k}:acct', '{k}:held'];
    // Concurrency 2: the third admission of the turn is refused; the one alone after it too.
    const admit = (id: string) => scripts.admit.run(c, keys, [1_000_000, id, 10, '60000 0 0 0 0 2 0 0', 0]);
    answers.push([...(await Promise.all([admit('a'), admit('b'), admit('c')])), await admit('d'), await c.zrange('{k}:lease', '0', '-1')]);
  }
  t.match(answers[0], [1, 1, [0, 'concurrency'], [0, 'concurrency'], ['a', 'b']]);
  t.strictSame(answers[1], answers[0]);
});
