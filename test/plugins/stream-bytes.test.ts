// A relayed SSE stream reaches the client byte for byte however the upstream's bytes are cut into chunks: at frame ends
// (each chunk then goes out as it came, plugins/proxy/stream-pump.ts), inside a frame, inside a multi-byte character, and in
// the middle of a character that starts a frame.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { chatConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { startUpstream } from '../helpers/upstream.ts';

const frame = (content: string, extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({
  id: 'chatcmpl-bytes', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini',
  choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }], ...extra,
})}\n\n`;
const usage = `data: ${JSON.stringify({ id: 'chatcmpl-bytes', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } })}\n\n`;
const text = [frame('héllo '), frame('✓ wörld '), frame('😀'), frame('€'), frame('tail'), usage, 'data: [DONE]\n\n'].join('');
const whole = Buffer.from(text);

/** Offsets to cut `whole` at: every frame end, and one, two and three bytes into each multi-byte character. */
function cuts(kind: string): number[] {
  const ends: number[] = [];
  for (let i = whole.indexOf('\n\n'); i !== -1; i = whole.indexOf('\n\n', i + 2)) ends.push(i + 2);
  if (kind === 'frames') return ends;
  const inside: number[] = [];
  for (let i = 0; i < whole.length; i++) if (whole[i] >= 0xc0) inside.push(i + 1, i + 2);
  // A frame that starts with a character cut in two: the chunk before ends at the frame's first byte of it.
  const startsCut = whole.indexOf(Buffer.from('data: {"id":"chatcmpl-bytes","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"😀')) + 95;
  return [...new Set([...ends, ...inside, startsCut])].filter((n) => n > 0 && n < whole.length).sort((a, b) => a - b);
}

const upstream = await startUpstream(t, async (req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  let at = 0;
  for (const cut of [...cuts(String(req.headers['x-cut'])), whole.length]) {
    res.write(whole.subarray(at, cut));
    at = cut;
    await sleep(15); // each piece its own read on the gateway's side
  }
  res.end();
});

const gw = await withGateway(t, chatConfig({
  keyId: 'bytes', key: 'sk-bytes-0009', platform: `{ base_url: "${upstream.url}", format: openai-chat, forward_headers: [x-cut] }`,
}));

// The gateway asks the upstream for usage; a client that did not ask for it gets the stream without its usage chunk.
for (const kind of ['frames', 'characters']) {
  for (const asked of [true, false]) {
    t.test(`chunks cut at ${kind === 'frames' ? 'frame ends' : 'frame ends and inside characters'}, usage ${asked ? '' : 'not '}asked for: the same bytes`, async (t) => {
      const body = chatBody('gpt-4o-mini', 'hi', { stream: true, ...(asked ? { stream_options: { include_usage: true } } : {}) });
      const res = await post(gw.url + '/v1/chat/completions', body, { ...bearer('sk-bytes-0009'), 'x-cut': kind });
      t.equal(res.status, 200);
      const got = Buffer.from(await res.arrayBuffer());
      const expected = Buffer.from(asked ? text : text.replace(usage, ''));
      t.equal(got.toString('utf8'), expected.toString('utf8'));
      t.ok(got.equals(expected), 'byte for byte');
    });
  }
}
