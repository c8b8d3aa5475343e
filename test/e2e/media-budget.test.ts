// One request cannot make the gateway fetch without bound (issue 38, item 2). A chat or Anthropic client whose image URLs
// are fetched for a Gemini upstream: past the request's budget (media_max_total_bytes, by default server.body_limit) it
// gets media_fetch_failed in its own format, the fetches stop, nothing reaches the upstream and nothing is billed, on the
// file store and on Redis. Within the budget the bytes reach the upstream inline, and a gateway process fetching 28 MB of
// images for one request keeps its event loop turning: the base64 is made a chunk at a time as the body is sent.
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { eventually } from '../admin/helpers.ts';
import { withGateway, writeConfig } from '../helpers/gateway.ts';
import { bearer, post } from '../helpers/http.ts';
import { gatewayProcess } from '../helpers/process.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { redisForTest } from '../store/redis-server.ts';

// Gateway processes and tens of MB moved: more than the usual minute on a busy machine.
t.setTimeout(180_000);

const MB = 1024 * 1024;
const ADMIN = 'media-budget-admin-token-0123456789abcdef';
const KEY = 'sk-media-budget-0001';

/** A media server of `size`-byte images at /img/<n>.png, counting the fetches it saw. */
async function mediaServer(t: Test, size: number) {
  const image = Buffer.alloc(size, 0x5a);
  const seen = { started: 0 };
  const server = createServer((_req, res) => {
    seen.started++;
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': image.length }).end(image);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => { server.closeAllConnections(); server.close(); });
  const port = (server.address() as AddressInfo).port;
  const reset = () => { seen.started = 0; };
  return { image, seen, reset, origin: `127.0.0.1:${port}`, urls: (n: number) => Array.from({ length: n }, (_, i) => `http://127.0.0.1:${port}/img/${i}.png`) };
}

const geminiAnswer = JSON.stringify({
  candidates: [{ content: { role: 'model', parts: [{ text: 'A picture.' }] }, finishReason: 'STOP', index: 0 }],
  usageMetadata: { promptTokenCount: 1000, candidatesTokenCount: 3, totalTokenCount: 1003 },
});

const config = (o: { store: string; upstream: string; mediaOrigin: string; server?: string }) => `
server: { host: 127.0.0.1, port: 0${o.server ?? ''} }
store: { ${o.store} }
admin: { token: ${ADMIN} }
platforms:
  gem: { base_url: "${o.upstream}", auth: x-goog-api-key, format: [gemini] }
groups:
  main:
    platform: gem
    models: ["gemini-*"]
    accounts: [ { id: gem-1, credential: gem-credential-1 } ]
keys:
  - { id: media, key: ${KEY}, group: main }
pricing:
  "gemini-2.5-flash*": { input: 0.30, output: 2.50 }
pipelines:
  relay: [auth, group-check, model-allowlist, rate-limit, metering, { proxy: { media_allow_private: ["${o.mediaOrigin}"] } }]
routes:
  - { method: GET, path: /admin/usage, format: gateway, pipeline: [admin-auth, admin-usage] }
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
  - { method: POST, path: /v1/messages, format: anthropic-messages, pipeline: relay }
`;

const chat = (urls: string[]) => ({
  model: 'gemini-2.5-flash',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is on these?' }, ...urls.map((url) => ({ type: 'image_url', image_url: { url } }))] }],
});
const messages = (urls: string[]) => ({
  model: 'gemini-2.5-flash', max_tokens: 50,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is on these?' }, ...urls.map((url) => ({ type: 'image', source: { type: 'url', url } }))] }],
});

for (const [name, storeOf] of [
  ['file store', async () => `path: "${join(mkdtempSync(join(tmpdir(), 'gw-media-')), 'gateway.db')}"`],
  ['Redis', async (t: Test) => { const r = await redisForTest(t, 'media-budget'); return `redis: "${r.url}", prefix: "${r.prefix}"`; }],
] as const) {
  t.test(`${name}: media past the request's budget are refused in the client's format, not sent upstream, not billed`, async (t) => {
    const media = await mediaServer(t, 768 * 1024);
    const upstream = await startUpstream(t, (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(geminiAnswer));
    const gw = await withGateway(t, config({ store: await storeOf(t), upstream: upstream.url, mediaOrigin: media.origin, server: ', body_limit: 2mb' }));
    const records = async () => {
      const res = await fetch(`${gw.url}/admin/usage?key=media&limit=50`, { headers: bearer(ADMIN) });
      return (await res.json() as { records: { status: number }[] }).records;
    };

    // 8 images of 768 KB: 6 MB, three times the 2 MB body limit that is the default budget.
    const openai = await post(`${gw.url}/v1/chat/completions`, chat(media.urls(8)), bearer(KEY));
    const openaiError = (await openai.json() as { error: { code: string; type: string; message: string } }).error;
    t.equal(openai.status, 400, 'OpenAI chat client: 400');
    t.equal(openaiError?.code, 'media_fetch_failed');
    t.equal(openaiError?.type, 'invalid_request_error');
    t.match(openaiError?.message, /media are larger than 2097152 bytes together/);
    t.ok(media.seen.started < 8, `the fetches stopped at the budget (${media.seen.started} of 8 started)`);

    media.reset();
    const anthropic = await post(`${gw.url}/v1/messages`, messages(media.urls(8)), { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' });
    const anthropicBody = await anthropic.json() as { type: string; error: { type: string; message: string } };
    t.equal(anthropic.status, 400, 'Anthropic client: 400');
    t.equal(anthropicBody.type, 'error');
    t.equal(anthropicBody.error?.type, 'invalid_request_error');
    t.match(anthropicBody.error?.message, /media are larger than 2097152 bytes together/);
    t.ok(media.seen.started < 8, `the fetches stopped at the budget (${media.seen.started} of 8 started)`);
    t.equal(upstream.exchanges.length, 0, 'nothing reached the upstream');

    // Within the budget (2 × 768 KB) the images reach the upstream inline, and that request is billed.
    const ok = await post(`${gw.url}/v1/chat/completions`, chat(media.urls(2)), bearer(KEY));
    t.equal(ok.status, 200, await ok.clone().text());
    t.equal(upstream.exchanges.length, 1, 'one request upstream');
    const sent = JSON.parse(upstream.exchanges[0]?.body ?? '{}') as { contents?: { parts: { inlineData?: { mimeType: string; data: string } }[] }[] };
    const inline = sent.contents?.[0].parts.filter((p) => p.inlineData) ?? [];
    t.strictSame(inline.map((p) => p.inlineData), [1, 2].map(() => ({ mimeType: 'image/png', data: media.image.toString('base64') })), 'both images inline');
    const billed = await eventually(records, (r) => r.length >= 1, 10_000);
    t.same(billed.map((r) => r.status), [200], 'one record, the served request: the refused ones were never billed');
  });
}

/** A Gemini upstream that only counts what it is sent (this process must stay idle while /healthz is timed). */
async function countingUpstream(t: Test) {
  const got = { requests: 0, bytes: 0 };
  const server = createServer((req, res) => {
    got.requests++;
    req.on('data', (c: Buffer) => { got.bytes += c.length; });
    req.once('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(geminiAnswer));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => { server.closeAllConnections(); server.close(); });
  return { got, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

t.test('a gateway process fetching 28 MB of images for one request keeps its event loop turning', async (t) => {
  const media = await mediaServer(t, 4 * MB);
  const upstream = await countingUpstream(t);
  // The default budget: server.body_limit, 32 MB. The probe reports loop turns of over 10 ms of the process's CPU.
  const probe = fileURLToPath(new URL('../helpers/loop-probe.ts', import.meta.url));
  const gw = await gatewayProcess(t, writeConfig(config({ store: 'path: ":memory:"', upstream: upstream.url, mediaOrigin: media.origin })),
    { env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${probe}` } });
  // A first request compiles the code it runs (tens of ms of a cold process): the measure is of a warm one.
  const warm = await post(`${gw.url}/v1/chat/completions`, chat(media.urls(1)), bearer(KEY));
  t.equal(warm.status, 200, 'warm-up');
  await warm.arrayBuffer();
  await new Promise((r) => setTimeout(r, 100));
  const from = gw.stdout().length;
  let worst = 0;
  let probes = 0;
  let running = true;
  const probing = (async () => {
    while (running) {
      const start = performance.now();
      await (await fetch(`${gw.url}/healthz`)).arrayBuffer();
      worst = Math.max(worst, performance.now() - start);
      probes++;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const start = performance.now();
  const res = await post(`${gw.url}/v1/chat/completions`, chat(media.urls(7)), bearer(KEY));
  const took = performance.now() - start;
  running = false;
  await probing;
  t.equal(res.status, 200, await res.clone().text());
  t.ok(upstream.got.requests === 2 && upstream.got.bytes > 42 * MB, `the images went upstream, base64 (${upstream.got.bytes} bytes)`);
  const turns = [...gw.stdout().slice(from).matchAll(/^loop-probe ([\d.]+)$/gm)].map((m) => Number(m[1]));
  const longest = Math.max(0, ...turns);
  t.comment(`request ${Math.round(took)} ms; /healthz worst ${Math.round(worst)} ms over ${probes} probes (wall time, with the machine's load); ` +
    `${turns.length} loop turns over 10 ms of CPU, the longest ${longest} ms`);
  // Before, one synchronous step serialised the whole body (JSON.stringify, Buffer.from): 972 ms of CPU on a busy 2-core machine.
  t.ok(longest < 50, `no turn of the event loop took 50 ms of CPU (longest ${longest} ms)`);
});
