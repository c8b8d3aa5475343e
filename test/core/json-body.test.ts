// parseBody (core/json-body.ts) reads what JSON.parse reads, small bodies whole and large ones in parts, and refuses a
// large one exactly when JSON.parse would, wherever it is broken between its parts; refuses a body nesting deeper than
// 400 levels, and one naming a field twice in its top-level object or an object directly in it, however the name is
// spelt; takes turns of the event loop while it reads a large body.
import t from 'tap';
import { MAX_JSON_DEPTH, parseBody } from '../../core/json-body.ts';
import { SLICE_BYTES } from '../../core/slices.ts';
import { seeded } from '../helpers/random.ts';
import { turnsDuring } from '../helpers/loop-turns.ts';

const STRINGS = ['', 'plain', 'a "quoted" \\ back\\slash \\\\', '{"model":"x"}', '}]{[,:"', 'line\nbreak\ttab', 'é ü 中文 🎉 \u2028'];

function value(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 4 || r < 0.35) {
    const s = rand();
    if (s < 0.3) return Math.floor(rand() * 1e6) * (rand() < 0.5 ? 1 : -1);
    if (s < 0.4) return [true, false, null][Math.floor(rand() * 3)];
    return STRINGS[Math.floor(rand() * STRINGS.length)];
  }
  if (r < 0.65) return Array.from({ length: Math.floor(rand() * 5) }, () => value(rand, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 6); i > 0; i--) o[['model', 'stream', 'max_tokens', 'é"\\', '1', 'x'][Math.floor(rand() * 6)]] = value(rand, depth + 1);
  return o;
}

const parsed = async (text: string) => JSON.stringify(await parseBody(Buffer.from(text)));
const refusal = (text: string) => parseBody(Buffer.from(text)).then(() => undefined, (err: { status: number; code: string; message: string; param: string | null }) => err);

t.test('random bodies, small and over a slice: what JSON.parse reads', async (t) => {
  for (let seed = 1; seed <= 300; seed++) {
    const rand = seeded(seed);
    const body = { a: value(rand, 1), b: value(rand, 1), messages: [value(rand, 2), value(rand, 2)] };
    const text = JSON.stringify(body, null, seed % 3 === 0 ? 2 : undefined);
    if ((await parsed(text)) !== JSON.stringify(JSON.parse(text))) { t.fail(`seed ${seed}`); return; }
  }
  // Large: a top-level array read element by element, every other field whole; characters of one to four bytes.
  for (const [i, indent] of [undefined, 2, '\t'].entries()) {
    const messages = Array.from({ length: 3500 }, (_, n) => (n % 50 ? { role: 'user', content: `é中🎉\\"[${n}]{},:`.repeat(20) } : value(seeded(n), 1)));
    const body = { model: 'm', '2': 'two', '1': [1, { a: [] }], __proto__x: 1, messages, empty: [], tools: { deep: [[[{}]]] }, n: -1.5e-7, last: null };
    const text = JSON.stringify(body, null, indent);
    const padded = i === 1 ? `\n ${text.replace('"empty": []', '"empty": [\n   ]')} \n` : text;
    t.ok(Buffer.byteLength(padded) > SLICE_BYTES, 'larger than a slice');
    t.equal(await parsed(padded), JSON.stringify(JSON.parse(padded)), `indent ${String(indent)}`);
  }
  const proto = `{"__proto__":{"x":1},"messages":[${'"x",'.repeat(SLICE_BYTES / 4)}"y"]}`;
  const read = await parseBody(Buffer.from(proto)) as Record<string, unknown>;
  t.ok(Object.hasOwn(read, '__proto__') && Object.getPrototypeOf(read) === Object.prototype, '__proto__ is a field, as JSON.parse reads it');
});

t.test('a large body broken anywhere between its parts is refused exactly when JSON.parse refuses it', async (t) => {
  const element = JSON.stringify({ role: 'user', content: 'x'.repeat(200) });
  const text = `{"model": "m", "messages": [${Array(5000).fill(element).join(', ')}], "max_tokens": 5, "tools": []}`;
  const middle = text.indexOf('}, {', text.length / 2);
  // Where the parts meet: the body's start and end, the array's brackets, one separator in the middle.
  const spots = [...Array(40).keys(), ...Array.from({ length: 40 }, (_, k) => middle - 20 + k), ...Array.from({ length: 60 }, (_, k) => text.length - 60 + k)];
  const edits = [(s: string, at: number) => s.slice(0, at) + s.slice(at + 1), ...[',', ':', '[', ']', '{', '}', '"', '0', 'x', ' '].map((c) => (s: string, at: number) => s.slice(0, at) + c + s.slice(at))];
  const rand = seeded(7);
  let refused = 0;
  let compared = 0;
  for (let n = 0; n < 60; n++) {
    const broken = edits[Math.floor(rand() * edits.length)](text, spots[Math.floor(rand() * spots.length)]);
    let expected: string | undefined;
    try { expected = JSON.stringify(JSON.parse(broken)); } catch { /* refused */ }
    const read = await parseBody(Buffer.from(broken)).then((v) => JSON.stringify(v), (err: { code: string; message: string }) => err);
    if (typeof read !== 'string' && read.code === 'invalid_body' && /more than once/.test(read.message)) continue; // an edit that made a name twice
    compared++;
    if (expected === undefined) {
      refused++;
      if (typeof read === 'string' || read.code !== 'invalid_json') { t.fail(`edit ${n}: not refused: ${JSON.stringify(broken.slice(-80))}`); return; }
    } else if (read !== expected) { t.fail(`edit ${n}: not read as JSON.parse reads it`); return; }
  }
  t.ok(compared > 45 && refused > 10, `${compared} edits compared, ${refused} of them refused by both`);
});

t.test('a field named twice in the top-level object, or in an object directly in it, is refused', async (t) => {
  const large = 'x'.repeat(SLICE_BYTES + 10);
  const twice: [string, string][] = [
    ['{"model":"a","model":"b"}', 'model'],
    ['{ "model" : "a" ,\n "stream": true, "model": "b"}', 'model'],
    ['{"mod\\u0065l":"a","model":"b"}', 'model'],
    ['{"\\u006d\\u006f\\u0064\\u0065\\u006c":"a","model":"b"}', 'model'],
    ['{"max_tokens":1,"messages":[{"role":"user","content":"\\"max_tokens\\":2"}],"max_tokens":100000}', 'max_tokens'],
    ['{"generationConfig":{"maxOutputTokens":1,"maxOutputTokens":99999}}', 'generationConfig.maxOutputTokens'],
    ['{"a":{"x":{}},"generationConfig":{"maxOutputTokens":1,"temperature":1,"maxOutputTokens":2}}', 'generationConfig.maxOutputTokens'],
    [`{"text":"${large}","model":"a","stream":false,"model":"b"}`, 'model'],
    [`{"model":"a","text":"${large}","model":"b"}`, 'model'],
  ];
  for (const [text, name] of twice) {
    const err = await refusal(text);
    t.match(err, { status: 400, code: 'invalid_body', param: name }, `${text.slice(0, 60)}: refused`);
    t.match(err?.message, `"${name}" more than once`);
  }
  const once = [
    '{"messages":[{"role":"user","role":"assistant"}]}',
    '{"a":{"x":1},"b":{"x":2}}',
    '{"a":{"b":{"c":1,"c":2}}}',
    '{"s":"\\"model\\":1,","model":2}',
    '{"model":"model","stream":"model"}',
    '{"a":[{"model":1},{"model":2}],"model":3}',
    '{"x\\\\":1,"x":2}',
  ];
  for (const text of once) t.equal(await parsed(text), JSON.stringify(JSON.parse(text)), `${text}: read as JSON.parse reads it`);
});

t.test('nesting: 400 levels are read, 401 refused; brackets inside strings do not count', async (t) => {
  const nest = (n: number) => `{"a":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
  t.equal(await parsed(nest(MAX_JSON_DEPTH)), JSON.stringify(JSON.parse(nest(MAX_JSON_DEPTH))));
  t.match(await refusal(nest(MAX_JSON_DEPTH + 1)), { status: 400, code: 'invalid_body', message: /more than 400 levels/ });
  t.match(await refusal(`{"pad":"${'x'.repeat(2 * SLICE_BYTES)}","a":${nest(MAX_JSON_DEPTH + 1)}}`), { code: 'invalid_body' }, 'past a slice too');
  t.equal(await parsed(`{"a":"${'['.repeat(5000)}"}`), `{"a":"${'['.repeat(5000)}"}`);
  t.match(await refusal('{"a": ['), { status: 400, code: 'invalid_json' });
  t.match(await refusal('[1,2]'), { status: 400, code: 'invalid_body', message: 'Request body must be a JSON object' });
  t.match(await refusal(`{"a":"${'x'.repeat(2 * SLICE_BYTES)}`), { code: 'invalid_json' }, 'an unterminated string past a slice');
});

t.test('a large body is read in slices, with turns of the event loop between; a small one in one go', async (t) => {
  const big = Buffer.from(JSON.stringify({ messages: Array.from({ length: 30_000 }, (_, i) => ({ role: 'user', content: `turn ${i} `.repeat(20) })) }));
  const { turns } = await turnsDuring(() => parseBody(big));
  t.ok(turns >= 4, `the event loop turned while ${(big.length / 2 ** 20).toFixed(1)} MB were read (${turns} times)`);

  let ran = false;
  setImmediate(() => { ran = true; });
  await parseBody(Buffer.from('{"model":"m","messages":[]}'));
  t.notOk(ran, 'a small body is read without waiting for a turn');
});
