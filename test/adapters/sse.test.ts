// adapters/shared/sse.ts: incremental parsing across arbitrary chunk boundaries, line-end styles, fields, raw bytes, formatFrame.
import t from 'tap';
import { formatFrame, SseParser } from '../../adapters/shared/sse.ts';
import type { SseFrame } from '../../core/types.ts';
import { seeded } from '../helpers/random.ts';

/** Parse bytes fed in the given chunk sizes (cycled); returns every frame and the unterminated rest. */
function parseChunked(bytes: Buffer, sizes: (i: number) => number): { frames: SseFrame[]; rest: string } {
  const parser = new SseParser();
  const frames: SseFrame[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = Math.max(1, sizes(i));
    frames.push(...parser.push(bytes.subarray(at, at + n)));
    at += n;
  }
  return { frames, rest: parser.rest() };
}

// A realistic stream: OpenAI chat chunks, Anthropic-style named events, a keepalive comment, multi-line data,
// multibyte text (2, 3 and 4 byte UTF-8), and every line-end style. It ends with a complete frame.
const FRAMES: [string, SseFrame][] = [
  ['data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":null}\n\n',
    { event: undefined, data: '{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":null}', raw: '' }],
  ['data: {"choices":[{"index":0,"delta":{"content":"Héllo wörld, 日本語 🎉👍🏽"}}]}\n\n',
    { event: undefined, data: '{"choices":[{"index":0,"delta":{"content":"Héllo wörld, 日本語 🎉👍🏽"}}]}', raw: '' }],
  [': keepalive\n\n', { event: undefined, data: '', raw: '' }],
  ['event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\n',
    { event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_1"}}', raw: '' }],
  ['event: content_block_delta\r\ndata: {"type":"content_block_delta","delta":{"text":"ü€"}}\r\n\r\n',
    { event: 'content_block_delta', data: '{"type":"content_block_delta","delta":{"text":"ü€"}}', raw: '' }],
  ['data: line one\ndata: line two\ndata:\ndata: line four\n\n', { event: undefined, data: 'line one\nline two\n\nline four', raw: '' }],
  ['data:{"tight":true}\r\rdata: after cr\r\r', { event: undefined, data: '{"tight":true}', raw: '' }],
  ['', { event: undefined, data: 'after cr', raw: '' }],
  [': comment inside\nevent: ping\nid: 7\nretry: 1000\ndata: {"type":"ping"}\n\n', { event: 'ping', data: '{"type":"ping"}', raw: '' }],
  ['data: [DONE]\n\n', { event: undefined, data: '[DONE]', raw: '' }],
];
// The \r\r pair above holds two frames in one text; split their raw text by hand.
const TEXTS = FRAMES.map(([text]) => text);
const STREAM = TEXTS.join('');
const RAWS = [
  TEXTS[0], TEXTS[1], TEXTS[2], TEXTS[3], TEXTS[4], TEXTS[5],
  'data:{"tight":true}\r\r', 'data: after cr\r\r', TEXTS[8], TEXTS[9],
];
const EXPECTED: SseFrame[] = FRAMES.map(([, f], i) => ({ ...f, raw: RAWS[i] }));
const BYTES = Buffer.from(STREAM, 'utf8');

t.test('the whole stream in one push', async (t) => {
  t.equal(RAWS.join(''), STREAM, 'the raws of the expected frames tile the stream');
  const parser = new SseParser();
  t.strictSame(parser.push(BYTES), EXPECTED);
  t.equal(parser.rest(), '');
});

t.test('byte by byte gives the same frames', async (t) => {
  const { frames, rest } = parseChunked(BYTES, () => 1);
  t.strictSame(frames, EXPECTED);
  t.equal(rest, '');
});

t.test('random chunk sizes (seeded) give the same frames', async (t) => {
  for (let seed = 1; seed <= 200; seed++) {
    const rand = seeded(seed);
    const max = 1 + (seed % 40);
    const { frames, rest } = parseChunked(BYTES, () => 1 + Math.floor(rand() * max));
    t.strictSame(frames, EXPECTED, `seed ${seed}`);
    t.equal(rest, '', `seed ${seed} leaves nothing`);
    t.equal(frames.map((f) => f.raw).join(''), STREAM, `seed ${seed}: raw is the exact input`);
  }
});

t.test('every two-chunk split gives the same frames', async (t) => {
  let mismatches = 0;
  for (let cut = 1; cut < BYTES.length; cut++) {
    const parser = new SseParser();
    const frames = [...parser.push(BYTES.subarray(0, cut)), ...parser.push(BYTES.subarray(cut))];
    if (JSON.stringify(frames) !== JSON.stringify(EXPECTED)) mismatches++;
  }
  t.equal(mismatches, 0);
});

t.test('string chunks work like byte chunks', async (t) => {
  const parser = new SseParser();
  const frames: SseFrame[] = [];
  for (let i = 0; i < STREAM.length; i += 7) frames.push(...parser.push(STREAM.slice(i, i + 7)));
  t.strictSame(frames, EXPECTED);
});

t.test('separators: \\n\\n, \\r\\n\\r\\n, \\r\\r and mixed', async (t) => {
  const p = new SseParser();
  t.strictSame(p.push('data: a\n\ndata: b\r\n\r\ndata: c\r\rdata: d\n\r\n'), [
    { event: undefined, data: 'a', raw: 'data: a\n\n' },
    { event: undefined, data: 'b', raw: 'data: b\r\n\r\n' },
    { event: undefined, data: 'c', raw: 'data: c\r\r' },
    { event: undefined, data: 'd', raw: 'data: d\n\r\n' },
  ]);
  t.equal(p.rest(), '');
});

t.test('a \\r at a chunk end followed by \\n in the next chunk is one line end', async (t) => {
  const p = new SseParser();
  t.strictSame(p.push('data: x\r'), []);
  t.strictSame(p.push('\ndata: y\r'), []);
  t.strictSame(p.push('\n\r'), []);
  t.strictSame(p.push('\n'), [{ event: undefined, data: 'x\ny', raw: 'data: x\r\ndata: y\r\n\r\n' }], 'no empty line was seen in the \\r|\\n splits');
  t.strictSame(p.push('data: z\n\n'), [{ event: undefined, data: 'z', raw: 'data: z\n\n' }], 'the following frame does not start with a stray \\n');
});

t.test('a frame ended by \\r\\r is emitted without waiting for the next chunk', async (t) => {
  const p = new SseParser();
  const frames = p.push('data: x\r\r');
  t.strictSame(frames, [{ event: undefined, data: 'x', raw: 'data: x\r\r' }], 'the blank line already ended the frame');
});

t.test('multi-line data is joined with \\n; event, comments and data: without a space', async (t) => {
  const p = new SseParser();
  t.strictSame(p.push('event: content_block_delta\ndata:{"a":\ndata:  1}\n\n'), [
    { event: 'content_block_delta', data: '{"a":\n 1}', raw: 'event: content_block_delta\ndata:{"a":\ndata:  1}\n\n' },
  ], 'only one space after the colon is removed');
  t.strictSame(p.push(': just a comment\n: and another\n\n'), [{ event: undefined, data: '', raw: ': just a comment\n: and another\n\n' }]);
  t.strictSame(p.push('event: a\nevent: b\ndata\n\n'), [{ event: 'b', data: '', raw: 'event: a\nevent: b\ndata\n\n' }], 'the last event wins; "data" alone is an empty value');
  t.strictSame(p.push('event:\ndata: x:y: z\n\n'), [{ event: '', data: 'x:y: z', raw: 'event:\ndata: x:y: z\n\n' }], 'only the first colon separates');
  t.strictSame(p.push('unknown: field\nDATA: upper\ndata: kept\n\n'), [{ event: undefined, data: 'kept', raw: 'unknown: field\nDATA: upper\ndata: kept\n\n' }], 'unknown and wrongly cased fields are ignored');
});

t.test('blank lines between frames produce no frame', async (t) => {
  const p = new SseParser();
  t.strictSame(p.push('\n\n\r\ndata: a\n\n\n\ndata: b\n\n'), [
    { event: undefined, data: 'a', raw: 'data: a\n\n' },
    { event: undefined, data: 'b', raw: 'data: b\n\n' },
  ]);
});

t.test('multibyte UTF-8 split across chunks', async (t) => {
  const text = 'data: {"t":"é日🎉"}\n\n';
  const bytes = Buffer.from(text);
  const emoji = bytes.indexOf(Buffer.from('🎉'));
  const p = new SseParser();
  const frames = [
    ...p.push(bytes.subarray(0, emoji + 1)),
    ...p.push(bytes.subarray(emoji + 1, emoji + 3)),
    ...p.push(bytes.subarray(emoji + 3)),
  ];
  t.strictSame(frames, [{ event: undefined, data: '{"t":"é日🎉"}', raw: text }]);
  t.notMatch(frames[0].data, /\uFFFD/, 'no replacement characters');
});

t.test('rest() returns an unterminated tail', async (t) => {
  const p = new SseParser();
  t.strictSame(p.push('data: one\n\ndata: tw'), [{ event: undefined, data: 'one', raw: 'data: one\n\n' }]);
  t.strictSame(p.push('o\ndata: more'), []);
  t.equal(p.rest(), 'data: two\ndata: more');

  const cr = new SseParser();
  t.strictSame(cr.push('data: x\r'), []);
  t.equal(cr.rest(), 'data: x\r', 'a held \\r is part of the rest');

  const empty = new SseParser();
  t.equal(empty.rest(), '');
  t.strictSame(empty.push(''), []);
  t.equal(empty.rest(), '');
});

t.test('formatFrame', async (t) => {
  t.equal(formatFrame('{"a":1}'), 'data: {"a":1}\n\n');
  t.equal(formatFrame('{"type":"ping"}', 'ping'), 'event: ping\ndata: {"type":"ping"}\n\n');
  t.equal(formatFrame('a\nb'), 'data: a\ndata: b\n\n');
  t.equal(formatFrame(''), 'data: \n\n');
  t.equal(formatFrame('x', ''), 'event: \ndata: x\n\n');
});

t.test('formatFrame round-trips through the parser', async (t) => {
  const cases: [string, string | undefined][] = [
    ['{"id":"chatcmpl-1","choices":[]}', undefined],
    ['[DONE]', undefined],
    ['{"type":"message_stop"}', 'message_stop'],
    ['line one\nline two\n\nline four', 'multi'],
    ['', undefined],
    ['', 'empty'],
    ['  leading spaces', undefined],
    [':starts with a colon', undefined],
    ['unicode é 日本 🎉', 'ü'],
  ];
  const p = new SseParser();
  for (const [data, event] of cases) {
    const text = formatFrame(data, event);
    t.strictSame(p.push(text), [{ event, data, raw: text }], JSON.stringify([data, event]));
  }
  t.equal(p.rest(), '');

  const all = cases.map(([d, e]) => formatFrame(d, e)).join('');
  const { frames } = parseChunked(Buffer.from(all), () => 3);
  t.strictSame(frames.map((f) => [f.data, f.event]), cases, 'and when written back to back and read in small chunks');
});

t.test('formatFrame keeps data that contains \\r or \\r\\n', async (t) => {
  const p = new SseParser();
  const frames = p.push(formatFrame('a\rb\r\nc'));
  t.equal(frames.length, 1);
  t.equal(frames[0]?.data, 'a\nb\nc', 'every line of the data survives (line ends normalised to \\n)');
});

/**
 * The parser as the spec reads, one character at a time with no state kept between calls but the text: lines end at
 * \r\n, \n or \r, a blank line ends a non-empty frame, and a \r at the end of what arrived waits for the next chunk
 * unless it ends the stream. The parser proper finds line ends by search and resumes where it stopped; both must agree.
 */
function referenceFrames(text: string): { raws: string[]; rest: string } {
  const raws: string[] = [];
  let frameStart = 0;
  let lineStart = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c !== '\n' && c !== '\r') { i++; continue; }
    i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
    if (lineStart === i - (c === '\r' && text[i - 1] === '\n' ? 2 : 1)) {
      if (lineStart > frameStart) raws.push(text.slice(frameStart, i));
      frameStart = i;
    }
    lineStart = i;
  }
  return { raws, rest: text.slice(frameStart) };
}

t.test('random streams of every line end, read in random chunks, frame as the reference reads them', async (t) => {
  const pieces = ['data: {"a":"x"}', 'data:', 'data: ', 'event: e', ': note', 'id: 1', 'x', 'é', '🎉', '\n', '\n', '\r', '\r\n', '\n\n', '\r\r'];
  let mismatches = 0;
  for (let seed = 1; seed <= 400; seed++) {
    const rand = seeded(seed);
    let text = '';
    for (let n = 5 + Math.floor(rand() * 40); n > 0; n--) text += pieces[Math.floor(rand() * pieces.length)];
    // A stream that ends in a lone \r: the reference sees it whole; the parser holds it (it may be half of \r\n).
    if (text.endsWith('\r') && !text.endsWith('\r\r')) text += 'x';
    const want = referenceFrames(text);
    const whole = new SseParser();
    const got = { raws: whole.push(text).map((f) => f.raw), rest: whole.rest() };
    // In chunks, a \r\r ending one chunk ends its frame there (the test above), so a \n opening the next is a blank
    // line of its own: the frames' fields are the same, their raw text may split differently.
    const fields = (frames: SseFrame[]) => JSON.stringify(frames.map((f) => [f.event, f.data]));
    const chunked = parseChunked(Buffer.from(text), () => 1 + Math.floor(rand() * 9)).frames;
    if (JSON.stringify(got) !== JSON.stringify(want) || fields(chunked) !== fields(new SseParser().push(text))) {
      mismatches++;
      t.strictSame(got, want, `seed ${seed}: ${JSON.stringify(text)}`);
      t.equal(fields(chunked), fields(new SseParser().push(text)), `seed ${seed} in chunks`);
    }
  }
  t.equal(mismatches, 0, '400 random streams frame alike');
});

t.test('a one-line data frame reads as the general rule reads it', async (t) => {
  // The parser's shortcut for `data: …\n\n`; the frames around it take the general path.
  const cases: [string, string][] = [
    ['data: {"a":1}\n\n', '{"a":1}'], ['data:{"a":1}\n\n', '{"a":1}'], ['data:  two spaces\n\n', ' two spaces'],
    ['data:\n\n', ''], ['data: \n\n', ''], ['data: a:b\n\n', 'a:b'],
  ];
  for (const [raw, data] of cases) t.strictSame(new SseParser().push(raw), [{ event: undefined, data, raw }], JSON.stringify(raw));
  t.strictSame(new SseParser().push('data: a\rdata: b\n\n'), [{ event: undefined, data: 'a\nb', raw: 'data: a\rdata: b\n\n' }], 'a lone \\r inside is a line end');
  t.strictSame(new SseParser().push('data: a\ndata: b\n\n'), [{ event: undefined, data: 'a\nb', raw: 'data: a\ndata: b\n\n' }], 'two lines are joined');
  t.strictSame(new SseParser().push('datum: a\n\n'), [{ event: undefined, data: '', raw: 'datum: a\n\n' }], 'another field is not data');
});
