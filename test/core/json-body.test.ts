// parseBody (core/json-body.ts) reads what JSON.parse reads; refuses a body nesting deeper than 400 levels, and one
// naming a field twice in its top-level object or an object directly in it, however the name is spelt.
import t from 'tap';
import { MAX_JSON_DEPTH, parseBody } from '../../core/json-body.ts';
import { seeded } from '../helpers/random.ts';

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

t.test('random bodies: what JSON.parse reads', async (t) => {
  for (let seed = 1; seed <= 300; seed++) {
    const rand = seeded(seed);
    const body = { a: value(rand, 1), b: value(rand, 1), messages: [value(rand, 2), value(rand, 2)] };
    const text = JSON.stringify(body, null, seed % 3 === 0 ? 2 : undefined);
    if ((await parsed(text)) !== JSON.stringify(JSON.parse(text))) { t.fail(`seed ${seed}`); return; }
  }
});

t.test('a field named twice in the top-level object, or in an object directly in it, is refused', async (t) => {
  const large = 'x'.repeat(2 * 1024 * 1024);
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
  t.match(await refusal(`{"pad":"${'x'.repeat(2 * 1024 * 1024)}","a":${nest(MAX_JSON_DEPTH + 1)}}`), { code: 'invalid_body' }, 'past a long string too');
  t.equal(await parsed(`{"a":"${'['.repeat(5000)}"}`), `{"a":"${'['.repeat(5000)}"}`);
  t.match(await refusal('{"a": ['), { status: 400, code: 'invalid_json' });
  t.match(await refusal('[1,2]'), { status: 400, code: 'invalid_body', message: 'Request body must be a JSON object' });
  t.match(await refusal(`{"a":"${'x'.repeat(2 * 1024 * 1024)}`), { code: 'invalid_json' }, 'an unterminated string');
});
