// OpenAI Images on the simulator: generations and multipart edits, a real PNG, and the fixed usage numbers.
import { crc32 } from 'node:zlib';
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { AUTH, postJson } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const usage = (text: number, images: number, n: number) => ({
  input_tokens: text + 65 * images,
  output_tokens: 272 * n,
  total_tokens: text + 65 * images + 272 * n,
  input_tokens_details: { text_tokens: text, image_tokens: 65 * images },
  output_tokens_details: { image_tokens: 272 * n, text_tokens: 0 },
});

/** Checks the PNG signature and every chunk's CRC, and returns the IHDR width and height. */
function pngSize(b64: string): [number, number] {
  const png = Buffer.from(b64, 'base64');
  if (png.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error('not a PNG signature');
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    if (png.readUInt32BE(at + 8 + length) !== crc32(png.subarray(at + 4, at + 8 + length))) throw new Error('bad chunk CRC');
    at += 12 + length;
  }
  return [png.readUInt32BE(16), png.readUInt32BE(20)];
}

function edit(form: FormData, headers: Record<string, string> = AUTH): Promise<Response> {
  return fetch(sim.url + '/v1/images/edits', { method: 'POST', headers, body: form });
}

// Bytes that look like multipart syntax, so the parser must find boundaries, not CRLFs or dashes.
const tricky = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x2d, 0x2d, 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0xff]);

t.test('generations with a gpt-image model: n base64 PNGs and exact usage', async (t) => {
  const res = await postJson(sim, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'A red fox in the snow', n: 2, size: '1024x1024' });
  t.equal(res.status, 200);
  const body = await res.json();
  t.type(body.created, 'number');
  t.equal(body.data.length, 2);
  for (const item of body.data) {
    t.same(Object.keys(item), ['b64_json']);
    t.same(pngSize(item.b64_json), [1, 1], 'a valid 1×1 PNG');
  }
  t.same([body.background, body.output_format, body.quality, body.size], ['opaque', 'png', 'medium', '1024x1024']);
  // By hand: A|red|fox|in|the|snow = 6 text tokens; output 272 × 2 = 544.
  t.same(body.usage, usage(6, 0, 2));
});

t.test('dall-e models answer without usage, by URL unless asked for base64', async (t) => {
  const byUrl = await (await postJson(sim, '/v1/images/generations', { model: 'dall-e-3', prompt: 'a cat' })).json();
  t.notOk('usage' in byUrl);
  t.match(byUrl.data[0].url, /^data:image\/png;base64,/);
  t.equal(byUrl.data[0].revised_prompt, 'a cat');
  const b64 = await (await postJson(sim, '/v1/images/generations', { prompt: 'a cat', response_format: 'b64_json' })).json();
  t.same(Object.keys(b64.data[0]), ['b64_json']);
});

t.test('generations: a missing prompt or a bad n is a 400 naming the parameter', async (t) => {
  for (const [body, param] of [[{ model: 'gpt-image-1' }, 'prompt'], [{ model: 'gpt-image-1', prompt: 'x', n: 11 }, 'n'], ['nope', null]] as const) {
    const res = await postJson(sim, '/v1/images/generations', body);
    t.equal(res.status, 400);
    t.equal((await res.json()).error.param, param);
  }
});

t.test('edits: multipart with image[] twice counts 65 input tokens per image', async (t) => {
  const form = new FormData();
  form.append('model', 'gpt-image-1');
  form.append('prompt', 'Add a hat');
  form.append('image[]', new Blob([tricky], { type: 'image/png' }), 'a.png');
  form.append('image[]', new Blob([tricky], { type: 'image/png' }), 'b.png');
  form.append('size', '1536x1024');
  const res = await edit(form);
  t.equal(res.status, 200);
  const body = await res.json();
  t.equal(body.data.length, 1);
  t.same(pngSize(body.data[0].b64_json), [1, 1]);
  t.equal(body.size, '1536x1024', 'form fields are read');
  // By hand: Add|a|hat = 3 text tokens + 2 × 65 image tokens = 133; output 272.
  t.same(body.usage, usage(3, 2, 1));
  const recorded = sim.requests[sim.requests.length - 1];
  t.match(recorded.headers['content-type'], /^multipart\/form-data; boundary=/);
});

t.test('edits: a single image field and n from a form string', async (t) => {
  const form = new FormData();
  form.append('model', 'gpt-image-1');
  form.append('prompt', 'Add a hat');
  form.append('n', '3');
  form.append('image', new Blob([tricky], { type: 'image/png' }), 'a.png');
  const body = await (await edit(form)).json();
  t.equal(body.data.length, 3);
  t.same(body.usage, usage(3, 1, 3));
});

t.test('edits: JSON with images[] references', async (t) => {
  const res = await postJson(sim, '/v1/images/edits', { model: 'gpt-image-1', prompt: 'Add a hat', images: [{ image_url: 'https://example.com/a.png' }] });
  t.same((await res.json()).usage, usage(3, 1, 1));
});

t.test('edits: no image is a 400; a broken form is a 400', async (t) => {
  const form = new FormData();
  form.append('model', 'gpt-image-1');
  form.append('prompt', 'Add a hat');
  const res = await edit(form);
  t.equal(res.status, 400);
  t.same(await res.json(), { error: { message: "Missing required parameter: 'image'.", type: 'invalid_request_error', param: 'image', code: 'missing_required_parameter' } });
  const broken = await fetch(sim.url + '/v1/images/edits', {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'multipart/form-data; boundary=xyz' },
    body: '--xyz\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nunterminated',
  });
  t.equal(broken.status, 400);
  t.equal((await broken.json()).error.type, 'invalid_request_error');
});

t.test('images faults use the OpenAI envelope', async (t) => {
  const res = await postJson(sim, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'x' }, { 'x-simulator-fault': 'status=500' });
  t.equal(res.status, 500);
  t.same(await res.json(), { error: { message: 'Simulated upstream error (status 500).', type: 'server_error', param: null, code: null } });
});
