// The media fetch of translated requests to an inline-only upstream: an allowed URL becomes base64 with its media type,
// spliced into the upstream body (the client's request unchanged); private and loopback addresses (in every spelling,
// IPv6 forms that embed an IPv4 address decided on that address), other schemes, redirects, oversize and slow answers,
// wrong types, too many URLs and media larger together than the request's budget are refused with a 400 naming the
// host, fetched at most four at a time; data: URLs never touch the network. End to end, an OpenAI chat client's image
// URL reaches a Gemini upstream as inlineData, or the client gets the refusal in its own envelope.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { CanonRequest, ImageBlock } from '../../core/canonical.ts';
import { GatewayError } from '../../core/errors.ts';
import { isPrivateAddress } from '../../plugins/proxy/translate/addresses.ts';
import { fetchMedia, inlineMedia, type Inlined, type MediaOptions } from '../../plugins/proxy/translate/media.ts';
import { withGateway } from '../helpers/gateway.ts';
import { bridgeConfig, KEYS } from './bridge-config.ts';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
/** Random bytes sent in pieces of odd sizes (two single bytes first, apart): base64 made chunk by chunk must equal the whole's. */
const ODD = randomBytes(100_003);
let hits = 0;
let open = 0;
let mostOpen = 0;
const server: Server = createServer((req, res) => {
  hits++;
  mostOpen = Math.max(mostOpen, ++open);
  res.once('close', () => open--);
  if (req.url === '/odd.png') {
    res.writeHead(200, { 'content-type': 'image/png' });
    const send = async () => {
      for (const at of [0, 1]) {
        res.write(ODD.subarray(at, at + 1));
        await new Promise((r) => setTimeout(r, 20));
      }
      for (let at = 2, n = 1; at < ODD.length; at += n, n = (n * 7 + 3) % 9000 + 1) {
        res.write(ODD.subarray(at, at + n));
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    };
    return void send();
  }
  if (req.url?.startsWith('/400b/')) return void setTimeout(() => res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(400)), 100);
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
const o: MediaOptions = { maxBytes: 1000, totalBytes: 1_000_000, timeoutMs: 500, maxItems: 3, allowPrivate: [`127.0.0.1:${port}`] };

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

/** The body made of a request with its media (the canonical request's own JSON stands for the codec's), of the length it declares. */
async function upstreamBody(t: Tap, inlined: Inlined): Promise<CanonRequest> {
  const body = inlined.body(JSON.stringify(inlined.request));
  const chunks: Buffer[] = [];
  for await (const chunk of body.chunks()) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  t.equal(bytes.length, body.length, 'the body is as long as declared');
  return JSON.parse(bytes.toString()) as CanonRequest;
}

t.test('an allowed URL becomes inline base64 with its media type, in messages and tool results', async (t) => {
  const r = req(image(`${base}/cat.png`));
  const inlined = (await inlineMedia(r, o))!;
  t.strictSame(r.messages[0].content[1], image(`${base}/cat.png`), 'the client\'s request is left as it was');
  const sent = await upstreamBody(t, inlined);
  t.strictSame(sent.messages[0].content[1], { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG.toString('base64') } });
  t.strictSame(sent.messages[2].content[0], { type: 'tool_result', callId: 'c1', content: [{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG.toString('base64') } }] });
  t.strictSame(sent.messages[0].content[0], { type: 'text', text: 'look' }, 'the rest as it was');
  t.strictSame(await fetchMedia(`${base}/doc.pdf`, 'file', o).then((m) => m.mediaType), 'application/pdf', 'a file keeps its type');
  const odd = (await inlineMedia(req(image(`${base}/odd.png`)), { ...o, maxBytes: 200_000 }))!;
  const oddSent = (await upstreamBody(t, odd)).messages[0].content[1] as ImageBlock;
  t.equal(oddSent.source.kind === 'base64' && oddSent.source.data, ODD.toString('base64'), 'bytes that came in odd pieces: the same base64 as the whole\'s');
  t.equal(await inlineMedia({ ...req(), messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }, o), undefined, 'nothing to fetch: nothing made');
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

// IPv6 forms that carry an IPv4 address are decided on that address: each private form refused, its public twin allowed.
t.test('IPv6 forms embedding an IPv4 address are decided on the IPv4 address', async (t) => {
  const forms: [string, string, string][] = [
    // form, carrying 127.0.0.1 (or another private address), carrying 8.8.8.8
    ['IPv4-compatible ::/96', '::7f00:1', '::808:808'],
    ['IPv4-compatible, dotted', '::127.0.0.1', '::8.8.8.8'],
    ['IPv4-compatible, 10/8', '::a00:1', '::101:101'],
    ['IPv4-mapped ::ffff:0:0/96', '::ffff:7f00:1', '::ffff:808:808'],
    ['IPv4-mapped, written out', '0:0:0:0:0:ffff:7f00:1', '0:0:0:0:0:ffff:808:808'],
    ['IPv4-translated ::ffff:0:0:0/96', '::ffff:0:7f00:1', '::ffff:0:808:808'],
    ['IPv4-translated, dotted', '::ffff:0:169.254.169.254', '::ffff:0:8.8.8.8'],
    ['NAT64 64:ff9b::/96', '64:ff9b::7f00:1', '64:ff9b::808:808'],
    ['NAT64, dotted', '64:ff9b::192.168.1.1', '64:ff9b::8.8.4.4'],
    ['NAT64, written out', '64:ff9b:0:0:0:0:a9fe:a9fe', '64:ff9b:0:0:0:0:808:808'],
    ['NAT64 local-use 64:ff9b:1::/48, /96 form', '64:ff9b:1::7f00:1', '64:ff9b:1::808:808'],
    ['NAT64 local-use, dotted', '64:ff9b:1::10.0.0.1', '64:ff9b:1::1.1.1.1'],
    ['6to4 2002::/16', '2002:7f00:1::', '2002:808:808::'],
    ['6to4 of 10/8, with a host part', '2002:a00:1:1::1', '2002:808:808:1::1'],
    ['6to4 of 192.168/16', '2002:c0a8:101::1', '2002:101:101::1'],
    ['6to4 of 100.64/10 (CGNAT)', '2002:6440:1::', '2002:6380:1::'],
  ];
  for (const [form, blocked, allowed] of forms) {
    t.equal(isPrivateAddress(blocked), true, `${form}: ${blocked} refused`);
    t.equal(isPrivateAddress(allowed), false, `${form}: ${allowed} allowed`);
  }
  // A local-use NAT64 address not in its /96 form does not say where its IPv4 address is: refused.
  t.equal(isPrivateAddress('64:ff9b:1:808:8:800::'), true, 'another form of 64:ff9b:1::/48 refused');
  t.equal(isPrivateAddress('2001:4860:4860::8888'), false, 'a plain public IPv6 address allowed');
  const before = hits;
  for (const host of ['[::7f00:1]', '[::ffff:0:7f00:1]', '[64:ff9b::7f00:1]', '[64:ff9b:1::7f00:1]', '[2002:7f00:1::]']) {
    await refused(t, fetchMedia(`http://${host}:${port}/cat.png`, 'image', { ...o, allowPrivate: [] }), /not a public address/);
  }
  t.equal(hits, before, 'nothing was fetched');
});

t.test('the media of one request share one budget of bytes, and are fetched at most four at a time', async (t) => {
  const many = (n: number) => req(...Array.from({ length: n - 1 }, (_, i) => image(`${base}/400b/${i}`)));
  const wide = { ...o, maxItems: 16, totalBytes: 1000 };
  mostOpen = 0;
  const before = hits;
  await refused(t, inlineMedia(many(12), wide), /media are larger than 1000 bytes together/);
  t.ok(hits - before < 12, `the fetches stopped once the budget was passed (${hits - before} of 12 started)`);
  t.ok(mostOpen <= 4, `at most four at once (${mostOpen})`);
  mostOpen = 0;
  const fits = (await inlineMedia(many(12), { ...wide, totalBytes: 12 * 400 }))!;
  t.equal((await upstreamBody(t, fits)).messages[0].content.length, 12, 'within the budget, all fetched');
  t.equal(mostOpen, 4, 'four at a time');
  await refused(t, fetchMedia(`${base}/big-declared`, 'image', { ...o, maxBytes: 10_000 }, { left: 4999 }), /larger than 1000000 bytes together/);
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

t.test('end to end: after a failover the next account is sent the same whole body, its media made again', async (t) => {
  const config = bridgeConfig()
    .replace('      - { id: gemini-1, credential: cred-gemini-1 }', '      - { id: gemini-1, credential: "sim-fault:status=500", priority: 1 }')
    .replace('      - { id: gemini-2, credential: cred-gemini-2 }', '      - { id: gemini-2, credential: cred-gemini-2, priority: 2 }')
    .replace('pipelines:\n  relay: [auth, group-check, model-allowlist, rate-limit, metering, proxy]',
      `pipelines:\n  relay: [auth, group-check, model-allowlist, rate-limit, metering, { proxy: { media_allow_private: ["127.0.0.1:${port}"] } }]`);
  t.match(config, /sim-fault:status=500", priority: 1/, 'the first account fails');
  const gw = await withGateway(t, config);
  const before = hits;
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${KEYS.gemini}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `${base}/odd.png` } }] }] }),
  });
  t.equal(res.status, 200, await res.clone().text());
  const sent = gw.simulators['sim-gemini'].requests;
  t.equal(sent.length, 2, 'two attempts');
  t.equal(sent[0].body, sent[1].body, 'the same body both times');
  t.strictSame(JSON.parse(sent[1].body).contents[0].parts[1], { inlineData: { mimeType: 'image/png', data: ODD.toString('base64') } });
  t.equal(hits - before, 1, 'fetched once');
});

t.test('end to end: a kept Responses conversation keeps the URL, and continuing it fetches the image again', async (t) => {
  const gw = await withGateway(t, bridgeConfig().replace('pipelines:\n  relay: [auth, group-check, model-allowlist, rate-limit, metering, proxy]',
    `pipelines:\n  relay: [auth, group-check, model-allowlist, rate-limit, metering, { proxy: { media_allow_private: ["127.0.0.1:${port}"] } }]`));
  const respond = (body: object) => fetch(`${gw.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${KEYS.gemini}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-2.5-flash', ...body }),
  });
  const before = hits;
  const first = await respond({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: `${base}/cat.png` }] }] });
  t.equal(first.status, 200, await first.clone().text());
  const second = await respond({ previous_response_id: (await first.json() as { id: string }).id, input: 'And again?' });
  t.equal(second.status, 200, await second.clone().text());
  t.equal(hits - before, 2, 'fetched for each request');
  const sent = JSON.parse(gw.simulators['sim-gemini'].requests.at(-1)!.body);
  t.strictSame(sent.contents[0].parts[1], { inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } }, 'the continued conversation carries the image inline');
});
