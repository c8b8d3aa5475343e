// The media fetch of translated requests to an inline-only upstream: an allowed URL becomes base64 with its media type;
// private and loopback addresses (in every spelling), other schemes, redirects, oversize and slow answers, wrong types
// and too many URLs are refused with a 400 naming the host; data: URLs never touch the network. End to end, an OpenAI
// chat client's image URL reaches a Gemini upstream as inlineData, or the client gets the refusal in its own envelope.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { CanonRequest, ImageBlock } from '../../core/canonical.ts';
import { GatewayError } from '../../core/errors.ts';
import { fetchMedia, inlineMedia, isPrivateAddress, type MediaOptions } from '../../plugins/proxy/translate/media.ts';
import { withGateway } from '../helpers/gateway.ts';
import { bridgeConfig, KEYS } from './bridge-config.ts';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
let hits = 0;
const server: Server = createServer((req, res) => {
  hits++;
  if (req.url === '/cat.png') return void res.writeHead(200, { 'content-type': 'image/png; charset=binary' }).end(PNG);
  if (req.url === '/doc.pdf') return void res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.4');
  if (req.url === '/page') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
  if (req.url === '/big-declared') return void res.writeHead(200, { 'content-type': 'image/png', 'content-length': '5000' }).end(Buffer.alloc(5000));
  if (req.url === '/big-chunked') {
    res.writeHead(200, { 'content-type': 'image/png' });
    for (let i = 0; i < 10; i++) res.write(Buffer.alloc(500));
    return void res.end();
  }
  if (req.url === '/slow') return void setTimeout(() => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG), 1500);
  if (req.url === '/redirect') return void res.writeHead(302, { location: 'http://127.0.0.1:1/secret' }).end();
  res.writeHead(404).end();
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
t.teardown(() => server.close());
const port = (server.address() as AddressInfo).port;
const base = `http://127.0.0.1:${port}`;
const o: MediaOptions = { maxBytes: 1000, timeoutMs: 500, maxItems: 3, allowPrivate: [`127.0.0.1:${port}`] };

const image = (url: string): ImageBlock => ({ type: 'image', source: { kind: 'url', url } });
const req = (...blocks: ImageBlock[]): CanonRequest => ({
  operation: 'generate', model: 'm', stream: false, system: [], tools: [], extras: {},
  messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, ...blocks] },
    { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'see', arguments: '{}' }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'c1', content: [image(`${base}/cat.png`)] }] }],
});

async function refused(t: Tap, p: Promise<unknown>, why: RegExp) {
  const err = await p.then(() => undefined, (e: unknown) => e);
  t.ok(err instanceof GatewayError, String(err));
  t.equal((err as GatewayError).status, 400);
  t.equal((err as GatewayError).code, 'media_fetch_failed');
  t.match((err as GatewayError).message, why);
}
type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

t.test('an allowed URL becomes inline base64 with its media type, in messages and tool results', async (t) => {
  const r = req(image(`${base}/cat.png`));
  await inlineMedia(r, o);
  const first = r.messages[0].content[1] as ImageBlock;
  t.strictSame(first.source, { kind: 'base64', mediaType: 'image/png', data: PNG.toString('base64') });
  const inResult = r.messages[2].content[0];
  t.strictSame(inResult.type === 'tool_result' && inResult.content[0].type === 'image' && inResult.content[0].source.kind, 'base64');
  t.strictSame(await fetchMedia(`${base}/doc.pdf`, 'file', o).then((m) => m.mediaType), 'application/pdf', 'a file keeps its type');
});

t.test('addresses that are not public, in every spelling, are refused before any connection', async (t) => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::',
    'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a00:1', '224.0.0.1']) t.ok(isPrivateAddress(a), a);
  for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) t.notOk(isPrivateAddress(a), a);
  const before = hits;
  const strict = { ...o, allowPrivate: [] };
  for (const url of [`${base}/cat.png`, `http://localhost:${port}/cat.png`, `http://[::1]:${port}/cat.png`, 'http://10.0.0.1/x.png',
    'http://169.254.169.254/latest/meta-data', `http://[::ffff:127.0.0.1]:${port}/cat.png`, 'http://2130706433/x.png']) {
    await refused(t, fetchMedia(url, 'image', strict), /not a public address/);
  }
  t.equal(hits, before, 'nothing reached the local server');
});

t.test('other schemes, redirects, wrong types, oversize, slow answers and too many URLs are refused', async (t) => {
  await refused(t, fetchMedia('ftp://example.com/x.png', 'image', o), /only http and https/);
  await refused(t, fetchMedia('file:///etc/passwd', 'image', o), /only http and https/);
  await refused(t, fetchMedia(`${base}/redirect`, 'image', o), /redirects are not followed/);
  await refused(t, fetchMedia(`${base}/page`, 'image', o), /content type "text\/html" is not an image/);
  await refused(t, fetchMedia(`${base}/big-declared`, 'image', o), /larger than 1000 bytes/);
  await refused(t, fetchMedia(`${base}/big-chunked`, 'image', o), /larger than 1000 bytes/);
  await refused(t, fetchMedia(`${base}/slow`, 'image', o), /within 500 ms/);
  await refused(t, fetchMedia(`${base}/missing.png`, 'image', o), /answered 404/);
  await refused(t, inlineMedia(req(image(`${base}/cat.png`), image(`${base}/cat.png`), image(`${base}/cat.png`)), o), /more than 3 media URLs/);
});

t.test('end to end: a chat client\'s image URL reaches a Gemini upstream inline; a private one is refused in the client\'s envelope', async (t) => {
  const gw = await withGateway(t, bridgeConfig().replace('pipelines:\n  relay: [auth, group-check, model-allowlist, rate-limit, metering, proxy]',
    `pipelines:\n  relay: [auth, group-check, model-allowlist, rate-limit, metering, { proxy: { media_allow_private: ["127.0.0.1:${port}"] } }]`));
  const send = (url: string) => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${KEYS.gemini}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url } }] }] }),
  });
  const ok = await send(`${base}/cat.png`);
  t.equal(ok.status, 200, await ok.clone().text());
  const sent = JSON.parse(gw.simulators['sim-gemini'].requests.at(-1)!.body);
  t.strictSame(sent.contents[0].parts[1], { inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } });
  const before = gw.simulators['sim-gemini'].requests.length;
  const bad = await send('http://169.254.169.254/latest/meta-data/iam');
  t.equal(bad.status, 400);
  const body = await bad.json() as { error: { code: string; type: string; message: string } };
  t.equal(body.error.code, 'media_fetch_failed');
  t.equal(body.error.type, 'invalid_request_error');
  t.match(body.error.message, /169\.254\.169\.254/);
  t.equal(gw.simulators['sim-gemini'].requests.length, before, 'refused before any upstream');
});
