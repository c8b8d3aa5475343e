// serialize and stringify (core/slices.ts) write exactly what JSON.stringify writes, and join what Buffer.concat joins; a
// large value is written (and large chunks joined) a slice at a time with turns of the event loop between: a timer due
// meanwhile runs before the last slice.
import t from 'tap';
import { join, serialize, SLICE_BYTES, stringify } from '../../core/slices.ts';
import { seeded } from '../helpers/random.ts';
import { turnsDuring } from '../helpers/loop-turns.ts';

const STRINGS = ['', 'plain', 'a "quoted" \\ back\\slash', 'line\nbreak\ttab\u0001', 'emoji 🎉 \u2028', 'lone \ud800 and \udc00', 'é ü 中文'];

/** A random value with what JSON.stringify treats apart: undefined, functions and symbols, toJSON, holes, -0, NaN. */
function value(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 5 || r < 0.3) {
    const s = rand();
    if (s < 0.2) return Math.floor(rand() * 1e6) * (rand() < 0.5 ? 1 : -1);
    if (s < 0.25) return [-0, NaN, Infinity, 1e-7][Math.floor(rand() * 4)];
    if (s < 0.35) return [true, false, null][Math.floor(rand() * 3)];
    if (s < 0.4) return [undefined, () => 1, Symbol('s')][Math.floor(rand() * 3)];
    if (s < 0.45) return new Date(Math.floor(rand() * 2e12));
    if (s < 0.5) return { toJSON: (key: string) => (key.length % 2 ? `key:${key}` : undefined) };
    return STRINGS[Math.floor(rand() * STRINGS.length)];
  }
  if (r < 0.6) {
    const a = Array.from({ length: Math.floor(rand() * 6) }, () => value(rand, depth + 1));
    if (rand() < 0.1) a.length += 2; // holes
    return a;
  }
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 6); i > 0; i--) o[['a', 'b', '1', '0', 'é"\\', '__proto__x', 'toJSONx'][Math.floor(rand() * 7)]] = value(rand, depth + 1);
  return o;
}

/** A string of `n` characters whose surrogate pairs straddle every piece boundary the writer might cut at. */
const pairs = (n: number) => '🎉'.repeat(Math.ceil(n / 2)).slice(0, n);

t.test('random values, small and made large: byte for byte what JSON.stringify writes', async (t) => {
  let large = 0;
  for (let seed = 1; seed <= 1000; seed++) {
    const rand = seeded(seed);
    const small = value(rand, 0);
    // Made large: the value among long strings (cut into pieces, some mid-pair) and long arrays (walked element by element).
    const big = seed > 10 ? undefined : { head: 'a'.repeat(seed % 2) + pairs(SLICE_BYTES / 2 + (seed % 7)), body: [small, 'x'.repeat(SLICE_BYTES), small], list: Array.from({ length: 5000 }, (_, i) => (i % 3 ? i : small)), tail: small };
    for (const v of big ? [small, big] : [small]) {
      const expected = JSON.stringify(v);
      if (expected === undefined) continue;
      const bytes = await serialize(v);
      if (!bytes.equals(Buffer.from(expected))) { t.fail(`seed ${seed}: serialize differs`); return; }
      if ((await stringify(v)) !== expected) { t.fail(`seed ${seed}: stringify differs`); return; }
      if (v === big) large++;
    }
  }
  t.equal(large, 10, 'every large value compared');
});

t.test('a large value is written in slices with turns of the event loop between; a small one in one go', async (t) => {
  const big = { messages: Array.from({ length: 40_000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `turn ${i} `.repeat(20) }] })) };
  const { value: bytes, turns } = await turnsDuring(() => serialize(big));
  t.ok(bytes.length > 8 * SLICE_BYTES, `${(bytes.length / 2 ** 20).toFixed(1)} MB written`);
  t.ok(turns >= 4, `the event loop turned while it was written (${turns} times)`);

  let ran = false;
  setImmediate(() => { ran = true; });
  await serialize({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  t.notOk(ran, 'a small value is written without waiting for a turn');
});

t.test('join: what Buffer.concat joins; a large one with turns of the event loop between slices', async (t) => {
  const rand = seeded(3);
  const chunks = Array.from({ length: 300 }, (_, i) => Buffer.alloc(1 + Math.floor(rand() * 16384), i));
  const size = chunks.reduce((n, c) => n + c.length, 0);
  const { value: joined, turns } = await turnsDuring(() => join(chunks, size));
  t.ok(size > SLICE_BYTES * 2 && joined.equals(Buffer.concat(chunks)), `${size} bytes joined as Buffer.concat joins them`);
  t.ok(turns >= 1, `the event loop turned while they were joined (${turns} times)`);
  t.ok((await join(chunks.slice(0, 3), chunks[0].length + chunks[1].length + chunks[2].length)).equals(Buffer.concat(chunks.slice(0, 3))), 'a small join');
});
