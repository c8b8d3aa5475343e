// The openai-images adapter: the model from JSON or a multipart field (files never read), usage, stream events, the unsupported-platform body.
import t from 'tap';
import { GatewayError } from '../../core/errors.ts';
import { openaiImages as format } from '../../adapters/openai-images/index.ts';
import { readFormFields } from '../../adapters/openai-images/multipart.ts';
import { fakeCtx, framesOf, scan, schemaAccepts, sse } from './helpers.ts';

const BOUNDARY = '----formdata-undici-0123456789';
// Binary file contents, with bytes that look like line ends, dashes and a field header, but never the boundary.
const PNG_1 = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('\r\n--not-it\r\nContent-Disposition: form-data; name="model"\r\n\r\nfake\r\n'), Buffer.alloc(4096, 0xab)]);
const PNG_2 = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(2048, 0x0d)]);

type Part = { name: string; value: string | Buffer; filename?: string };
/** A multipart body as openai-node (undici FormData) writes it: CRLF everywhere. */
function multipart(parts: Part[], boundary = BOUNDARY, eol = '\r\n'): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `Content-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}`;
    const type = p.filename ? `${eol}Content-Type: image/png` : '';
    chunks.push(Buffer.from(`--${boundary}${eol}${disposition}${type}${eol}${eol}`), Buffer.from(p.value), Buffer.from(eol));
  }
  chunks.push(Buffer.from(`--${boundary}--${eol}`));
  return Buffer.concat(chunks);
}
const EDIT_PARTS: Part[] = [
  { name: 'image[]', value: PNG_1, filename: 'a.png' },
  { name: 'image[]', value: PNG_2, filename: 'b.png' },
  { name: 'prompt', value: 'Add a hat' },
  { name: 'model', value: 'gpt-image-1' },
  { name: 'n', value: '1' },
];
const multipartCtx = (body: Buffer, type = `multipart/form-data; boundary=${BOUNDARY}`) => fakeCtx({ headers: { 'content-type': type }, body });
const read = (format.model as { read(ctx: unknown): Promise<string | undefined> }).read;

t.test('edits: the model field after two image[] files, CRLF, files never decoded', async (t) => {
  const body = multipart(EDIT_PARTS);
  const decoded: Array<[number, number]> = [];
  const original = body.toString.bind(body);
  body.toString = ((encoding?: BufferEncoding, start = 0, end = body.length) => { decoded.push([start, end]); return original(encoding, start, end); }) as typeof body.toString;
  const ctx = multipartCtx(body);
  t.equal(await read(ctx), 'gpt-image-1');
  t.equal(format.isStream(undefined, ctx), false);
  const fileRanges = [PNG_1, PNG_2].map((file) => { const at = body.indexOf(file); return [at, at + file.length]; });
  for (const [s, e] of decoded) {
    for (const [fs, fe] of fileRanges) t.ok(e <= fs || s >= fe, `decoded ${s}..${e} stays outside the file at ${fs}..${fe}`);
  }
  t.ok(decoded.length > 0 && decoded.length < 20, 'only header lines and the wanted fields are decoded');
});

t.test('multipart variants: single image, quoted boundary, bare LF, a stream field, no model', async (t) => {
  const single = multipart([{ name: 'image', value: PNG_2, filename: 'x.png' }, { name: 'model', value: 'gpt-image-1.5' }, { name: 'stream', value: 'true' }], 'abc 123');
  const ctx = multipartCtx(single, 'multipart/form-data; boundary="abc 123"');
  t.equal(await read(ctx), 'gpt-image-1.5', 'quoted boundary with a space');
  t.equal(format.isStream(undefined, ctx), true, 'stream field "true"');

  const lf = multipart(EDIT_PARTS, 'b0undary', '\n');
  t.equal(await read(multipartCtx(lf, 'Multipart/Form-Data; charset=utf-8; boundary=b0undary')), 'gpt-image-1', 'bare LF line ends');

  const none = multipart(EDIT_PARTS.filter((p) => p.name !== 'model'));
  const noModel = multipartCtx(none);
  t.equal(await read(noModel), undefined, 'no model field: the allow-list asks for one');
  t.equal(format.isStream(undefined, noModel), false);

  const fileNamedModel = multipart([{ name: 'model', value: 'not-a-field', filename: 'model.txt' }, { name: 'model', value: 'dall-e-2' }]);
  t.equal(await read(multipartCtx(fileNamedModel)), 'dall-e-2', 'a file part is never taken for a field');

  t.equal(await read(multipartCtx(multipart([{ name: 'model', value: 'gpt-image-1' }]), 'multipart/form-data')), undefined, 'no boundary');
  t.equal(await read(multipartCtx(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\ngpt-image-1`))), undefined, 'truncated: no closing delimiter');
  t.strictSame(readFormFields(multipart(EDIT_PARTS), `multipart/form-data; boundary=${BOUNDARY}`, ['prompt', 'n']), { prompt: 'Add a hat', n: '1' });
  const big = multipart([{ name: 'model', value: 'x'.repeat(10_000) }]);
  t.strictSame(readFormFields(big, `multipart/form-data; boundary=${BOUNDARY}`, ['model']), {}, 'an oversized field is not copied');
});

t.test('generations: the model and stream flag from JSON', async (t) => {
  const ctx = fakeCtx({ headers: { 'content-type': 'application/json' }, json: { model: 'gpt-image-1', prompt: 'A cat', stream: true, partial_images: 2 } });
  t.equal(await read(ctx), 'gpt-image-1');
  t.equal(format.isStream(undefined, ctx), true);
  t.equal(format.isStream({ stream: true }, fakeCtx()), true);
  const plain = fakeCtx({ json: { prompt: 'A cat', model: 42 } });
  t.equal(await read(plain), undefined, 'a non-string model is no model');
  t.equal(format.isStream(undefined, plain), false);
  t.ok(schemaAccepts(format, { model: 'gpt-image-1', prompt: 'A cat' }));
  t.notOk(schemaAccepts(format, { model: 'gpt-image-1', prompt: 'A cat', stream: 'true' }));
});

t.test('usage from the body (GPT-image models only)', async (t) => {
  // The response of docs/wire-formats.md#images.
  t.strictSame(format.usageFromBody({ created: 1767225600, data: [{ b64_json: 'iVBORw0KGgo' }], usage: {
    input_tokens: 50, output_tokens: 4160, total_tokens: 4210,
    input_tokens_details: { text_tokens: 10, image_tokens: 40 }, output_tokens_details: { image_tokens: 4160, text_tokens: 0 },
  } }), { input: 50, cacheRead: 0, cacheWrite: 0, output: 4160, reasoning: 0 });
  t.strictSame(format.usageFromBody({ usage: { input_tokens: 300, input_tokens_details: { cached_tokens: 100, text_tokens: 20, image_tokens: 280 }, output_tokens: 1056 } }),
    { input: 300, cacheRead: 100, cacheWrite: 0, output: 1056, reasoning: 0 });
  t.equal(format.usageFromBody({ created: 1, data: [{ url: 'https://x' }] }), undefined, 'dall-e answers carry no usage');
});

t.test('image streams: usage and the end on *.completed, partial images untouched', async (t) => {
  const usage = { input_tokens: 50, output_tokens: 4160, total_tokens: 4210, input_tokens_details: { text_tokens: 10, image_tokens: 40 } };
  for (const kind of ['image_generation', 'image_edit']) {
    const upstream = sse([
      [`${kind}.partial_image`, { type: `${kind}.partial_image`, b64_json: 'A'.repeat(5000), partial_image_index: 0, background: 'opaque', created_at: 1, output_format: 'png', quality: 'low', size: '1024x1024' }],
      [`${kind}.completed`, { type: `${kind}.completed`, b64_json: 'B'.repeat(5000), background: 'opaque', created_at: 2, output_format: 'png', quality: 'low', size: '1024x1024', usage }],
    ]);
    const partial = scan(format, fakeCtx(), upstream.slice(0, upstream.indexOf(`event: ${kind}.completed`))).scanner;
    t.equal(partial.terminal(), false);
    t.equal(partial.usage(), undefined);
    const { scanner, out } = scan(format, fakeCtx(), upstream, 1000);
    t.equal(out, upstream);
    t.equal(scanner.terminal(), true, kind);
    t.strictSame(scanner.usage(), { input: 50, cacheRead: 0, cacheWrite: 0, output: 4160, reasoning: 0 });
    const eventless = scan(format, fakeCtx(), upstream.replace(/^event: .*\n/gm, ''), 1000).scanner;
    t.equal(eventless.usage()?.output, 4160, 'without event lines too');
  }
  const failed = scan(format, fakeCtx(), sse([['error', { type: 'error', error: { type: 'server_error', code: 'server_error', message: 'Image failed' } }]])).scanner;
  t.equal(failed.error(), 'Image failed');
  t.equal(failed.terminal(), false);
});

t.test('a non-OpenAI group gets exactly the established 404 body', async (t) => {
  const err = format.unsupported!('anthropic');
  t.equal(err.status, 404);
  t.equal(JSON.stringify(format.errorBody(err, { id: 'r1' })), '{"error":{"type":"not_found_error","message":"Images API is not supported for this platform"}}');
});

t.test('other errors use the OpenAI envelope; a cut stream ends with event: error', async (t) => {
  t.strictSame(format.errorBody(new GatewayError(404, 'model_not_found', 'No such model', { param: 'model' }), { id: 'r1' }),
    { error: { message: 'No such model', type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
  t.strictSame(format.errorBody(new GatewayError(429, 'rate_limited', 'Slow down'), { id: 'r1' }),
    { error: { message: 'Slow down', type: 'rate_limit_error', param: null, code: 'rate_limited' } });
  const frames = framesOf(format.streamError(new GatewayError(502, 'upstream_stream_truncated', 'The upstream stream ended before it completed')));
  t.equal(frames.length, 1);
  t.equal(frames[0].event, 'error');
  t.strictSame(JSON.parse(frames[0].data), { type: 'error', error: { message: 'The upstream stream ended before it completed', type: 'upstream_error', param: null, code: 'upstream_stream_truncated' } });
  t.equal(scan(format, fakeCtx(), format.streamError(new GatewayError(502, 'x', 'cut'))).scanner.error(), 'cut');
});

t.test('keepalive and model list', async (t) => {
  t.equal(format.keepalive, ': keepalive\n\n');
  t.strictSame(format.modelList!([{ id: 'gpt-image-1', owner: 'openai' }]), { object: 'list', data: [{ id: 'gpt-image-1', object: 'model', created: 1704067200, owned_by: 'openai' }] });
  t.equal(format.upstreamAuth, 'bearer');
  t.ok('read' in format.model);
});

t.test('replaceFormField splices a text field and leaves file bytes untouched', async (t) => {
  const { replaceFormField, readFormFields } = await import('../../adapters/openai-images/multipart.ts');
  const boundary = 'XyZ';
  const type = `multipart/form-data; boundary=${boundary}`;
  const file = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00]);
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\ngpt-image\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image[]"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const out = replaceFormField(body, type, 'model', 'gpt-image-1-upstream');
  t.ok(out);
  t.equal(readFormFields(out!, type, ['model']).model, 'gpt-image-1-upstream');
  t.equal(out!.length, body.length - 'gpt-image'.length + 'gpt-image-1-upstream'.length);
  t.ok(out!.includes(file), 'file bytes are carried over unchanged');
  t.equal(replaceFormField(body, type, 'prompt', 'x'), undefined, 'an absent field is not invented');
});
