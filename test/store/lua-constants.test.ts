// The Lua scripts read the rules' constants by name (lua/constants.ts), with the values the embedded store reads: no
// number of one of them is typed again in a script, and every name a script uses is one the loader knows.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { LUA_CONSTANTS, withConstants } from '../../core/store/lua/constants.ts';
import { scripts } from '../../core/store/lua/index.ts';
import { PASS_STRIDE } from '../../core/store/rules/accounts.ts';
import { CONCURRENCY_RETRY_MS, HELD_RETRY_MS, HOLD_MINUTES, MINUTE_MS, RPM_WINDOW_MS, WINDOWS } from '../../core/store/units.ts';

const LUA = new URL('../../core/store/lua/', import.meta.url);
const files = readdirSync(LUA).filter((f) => f.endsWith('.lua'));
/** A script's code without its comments. */
const code = (text: string) => text.split('\n').map((l) => l.replace(/--.*$/, '')).join('\n');

t.test('the constants are the values the embedded store reads', async (t) => {
  t.match(LUA_CONSTANTS, {
    MINUTE_MS, RPM_WINDOW_MS, HOLD_MINUTES, CONCURRENCY_RETRY_MS, HELD_RETRY_MS, PASS_STRIDE,
    WINDOW_5H_MS: WINDOWS[0].ms, WINDOW_1D_MS: WINDOWS[1].ms, WINDOW_7D_MS: WINDOWS[2].ms,
  });
  for (const [name, value] of Object.entries(LUA_CONSTANTS)) t.ok(Number.isSafeInteger(value) && value > 0, `${name} is a positive integer`);
});

t.test('no script types a constant\'s value; each name a script uses is replaced where it is loaded', async (t) => {
  // Values of 4 digits or more only: 1000 is also a count of items per command, and 15 a count of anything.
  const values = new Set(Object.values(LUA_CONSTANTS).filter((v) => v >= 10_000));
  const used = new Set<string>();
  for (const f of files) {
    const text = code(readFileSync(new URL(f, LUA), 'utf8'));
    for (const n of text.match(/\b\d{5,}\b/g) ?? []) t.notOk(values.has(Number(n)), `${f}: ${n} is a constant's value`);
    for (const n of text.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? []) {
      if (n in LUA_CONSTANTS) used.add(n);
    }
    t.notMatch(code(withConstants(text)), /\b[A-Z][A-Z0-9]*_MS\b|\bHOLD_MINUTES\b|\bPASS_STRIDE\b/, `${f}: every constant replaced`);
  }
  t.strictSame([...used].sort(), Object.keys(LUA_CONSTANTS).sort(), 'every constant is read by a script');
  t.match(scripts.admit.source, `now - ${RPM_WINDOW_MS})`, 'a loaded script holds the value');
  t.match(scripts.admit.many!.source, `now - ${RPM_WINDOW_MS})`, 'and its list form');
});
