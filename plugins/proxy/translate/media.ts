// Fetches the images and files a client gave by URL into inline bytes, for an upstream format that takes media only
// inline (Codec.inlineMedia: Gemini). This is the gateway reaching out on a client's behalf, so it is fenced: http(s)
// only; the host resolved once and every address checked (addresses.ts); the connection made to the address that was
// checked (a DNS answer that changes cannot move it); no redirect followed; a size cap per item and per request, a time
// cap, a cap on fetches per request, four at a time. The bytes are kept as they arrived and base64-encoded chunk by
// chunk as the upstream body is sent: no step handles a request's media whole, so other requests are not kept waiting.
import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from '../../../core/node-http.ts';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { CanonBlock, CanonMessage, CanonRequest, FileBlock, ImageBlock } from '../../../core/canonical.ts';
import type { Chunked } from '../upstream-request.ts';
import { GatewayError } from '../../../core/errors.ts';
import { proxyErrors } from '../pool-errors.ts';
import { isPrivateAddress } from './addresses.ts';

export interface MediaOptions {
  maxBytes: number;
  /** Bytes all the fetches of one request may bring together. */
  totalBytes: number;
  timeoutMs: number;
  /** URLs fetched for one request at most. */
  maxItems: number;
  /** `host:port` origins allowed although their address is not public (tests; an operator's own media server). */
  allowPrivate?: string[];
}

export const MEDIA_DEFAULTS: MediaOptions = { maxBytes: 20 * 1024 * 1024, totalBytes: 32 * 1024 * 1024, timeoutMs: 10_000, maxItems: 16 };

/** Fetches of one request at once. */
const PARALLEL = 4;
/** Bytes read, or base64 made for the upstream body, between two turns of the event loop. */
const TURN_BYTES = 256 * 1024;

const refuse = (host: string, why: string) => proxyErrors.media_fetch_failed({ host, why }, { param: 'messages' });

/** The url sources of a request: in messages, and inside tool results. */
function urlBlocks(req: CanonRequest): (ImageBlock | FileBlock)[] {
  const found: (ImageBlock | FileBlock)[] = [];
  const visit = (b: CanonBlock) => {
    if ((b.type === 'image' || b.type === 'file') && b.source.kind === 'url') found.push(b);
    if (b.type === 'tool_result') for (const c of b.content) visit(c);
  };
  for (const m of req.messages) for (const b of m.content) visit(b);
  return found;
}

/** One URL's media: its type, and its bytes in the chunks they arrived in. */
export interface Fetched { mediaType: string; chunks: Buffer[]; size: number }

/** What the fetches of one request share: the bytes they may still bring, and the signal that stops them all. */
export interface Shared { left: number; signal?: AbortSignal }

/** A request's url media, fetched: the request to encode (each url source a placeholder), and the body its JSON makes. */
export interface Inlined {
  request: CanonRequest;
  /** The upstream body of the encoded request's JSON text: the text around each placeholder, the base64 in its place. */
  body(json: string): Chunked;
}

/**
 * Fetches every url source of the request (the client's request is left as it was); undefined when it has none. The
 * request is refused when one cannot be fetched, or when together they pass `totalBytes`.
 */
export async function inlineMedia(req: CanonRequest, o: MediaOptions = MEDIA_DEFAULTS): Promise<Inlined | undefined> {
  const blocks = urlBlocks(req);
  if (blocks.length === 0) return undefined;
  if (blocks.length > o.maxItems) throw refuse('several hosts', `more than ${o.maxItems} media URLs in one request`);
  const fetched = await fetchAll(blocks, o);
  // A name no client can have written (fresh and random), which codecs and JSON.stringify pass on as it is.
  const tag = `media-${randomUUID()}-`;
  const index = new Map<CanonBlock, number>(blocks.map((b, i) => [b, i]));
  const swap = (b: CanonBlock): CanonBlock => {
    const i = index.get(b);
    if (i !== undefined) return { ...b as ImageBlock | FileBlock, source: { kind: 'base64', mediaType: fetched[i].mediaType, data: `${tag}${i}` } };
    return b.type === 'tool_result' ? { ...b, content: b.content.map(swap) as typeof b.content } : b;
  };
  const messages: CanonMessage[] = req.messages.map((m) => ({ ...m, content: m.content.map(swap) }));
  return { request: { ...req, messages }, body: (json) => splice(json, tag, fetched) };
}

/** The JSON text cut at each `"<tag><i>"`, with media i's base64 in place of the placeholder, made as it is sent. */
function splice(json: string, tag: string, fetched: Fetched[]): Chunked {
  const parts: (Buffer | Fetched)[] = [];
  let from = 0;
  for (let at = json.indexOf(tag); at !== -1; at = json.indexOf(tag, from)) {
    const end = json.indexOf('"', at);
    parts.push(Buffer.from(json.slice(from, at)), fetched[Number(json.slice(at + tag.length, end))]);
    from = end;
  }
  parts.push(Buffer.from(json.slice(from)));
  return {
    length: parts.reduce((n, p) => n + (Buffer.isBuffer(p) ? p.length : Math.ceil(p.size / 3) * 4), 0),
    async *chunks() {
      let made = 0;
      for (const p of parts) {
        for (const chunk of Buffer.isBuffer(p) ? [p] : base64(p.chunks)) {
          yield chunk;
          // Other requests' turn every so often, however much the socket would take at once.
          if ((made += chunk.length) >= TURN_BYTES) { made = 0; await new Promise(setImmediate); }
        }
      }
    },
  };
}

/** The base64 text of bytes held in chunks, a chunk at a time: none is joined with the others (0-2 bytes carried over). */
function* base64(chunks: Buffer[]): Generator<Buffer> {
  let carry: Buffer | undefined;
  for (const c of chunks) {
    let from = 0;
    if (carry) {
      from = Math.min(3 - carry.length, c.length);
      const group = Buffer.concat([carry, c.subarray(0, from)]);
      carry = group.length < 3 ? group : undefined;
      if (carry) continue;
      yield Buffer.from(group.toString('base64'), 'latin1');
    }
    const whole = c.length - ((c.length - from) % 3);
    if (whole > from) yield Buffer.from(c.toString('base64', from, whole), 'latin1');
    if (whole < c.length) carry = c.subarray(whole);
  }
  if (carry) yield Buffer.from(carry.toString('base64'), 'latin1');
}

/** The blocks' URLs, a few at a time, under one budget of bytes; the first refusal stops the other fetches and is the answer. */
async function fetchAll(blocks: (ImageBlock | FileBlock)[], o: MediaOptions): Promise<Fetched[]> {
  const stop = new AbortController();
  const shared: Shared = { left: o.totalBytes, signal: stop.signal };
  const fetched: Fetched[] = [];
  let next = 0;
  const fetcher = async () => {
    while (next < blocks.length && !stop.signal.aborted) {
      const i = next++;
      fetched[i] = await fetchMedia((blocks[i].source as { url: string }).url, blocks[i].type, o, shared);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PARALLEL, blocks.length) }, fetcher));
  } catch (err) {
    stop.abort();
    throw err;
  }
  return fetched;
}

/** One URL's media type and bytes, under the rules above; `shared` is the budget it draws on with its request's others. */
export async function fetchMedia(href: string, kind: 'image' | 'file', o: MediaOptions, shared: Shared = { left: o.totalBytes }): Promise<Fetched> {
  const target = await resolveTarget(href, o);
  const res = await get(target, kind, o, shared.signal);
  const host = target.host;
  // A refused answer's body is not read: the connection is closed instead.
  const status = res.statusCode ?? 0;
  if (status !== 200) { res.destroy(); throw refuse(host, status >= 300 && status < 400 ? 'it redirects (redirects are not followed)' : `it answered ${status}`); }
  const mediaType = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (kind === 'image' ? !mediaType.startsWith('image/') : !/^[a-z]+\/[a-z0-9.+-]+$/.test(mediaType)) {
    res.destroy();
    throw refuse(host, `its content type "${mediaType || 'none'}" is not ${kind === 'image' ? 'an image' : 'a file type'}`);
  }
  const declared = Number(res.headers['content-length'] ?? 0);
  if (declared > o.maxBytes) { res.destroy(); throw refuse(host, `it is larger than ${o.maxBytes} bytes`); }
  if (declared > shared.left) { res.destroy(); throw refuse(host, tooMany(o)); }
  const { chunks, size } = await readBody(res, host, o, shared);
  return { mediaType, chunks, size };
}

const tooMany = (o: MediaOptions) => `the request's media are larger than ${o.totalBytes} bytes together`;

/** Where a URL may be fetched from: http(s) only, and the one address it is fetched from, checked. */
interface Target { url: URL; host: string; pinned: { address: string; family: number } }

async function resolveTarget(href: string, o: MediaOptions): Promise<Target> {
  let url: URL;
  try { url = new URL(href); } catch { throw refuse('an invalid URL', 'it is not a URL'); }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(url.protocol, 'only http and https URLs are fetched');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const allowed = o.allowPrivate?.includes(`${host}:${port}`) === true;
  let addresses: { address: string; family: number }[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true, verbatim: true });
  } catch { throw refuse(host, 'its name does not resolve'); }
  if (!addresses.length || (!allowed && addresses.some((a) => isPrivateAddress(a.address)))) {
    throw refuse(host, 'it is not a public address');
  }
  return { url, host, pinned: addresses[0] };
}

/** The GET's answer (its head), from the address that was checked, whatever the name resolves to now. */
function get({ url, host, pinned }: Target, kind: 'image' | 'file', o: MediaOptions, signal?: AbortSignal): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'GET', timeout: o.timeoutMs, signal,
      headers: { accept: kind === 'image' ? 'image/*' : '*/*', 'user-agent': 'model-gateway-media' },
      lookup: (_name, opts, cb) => ((opts as { all?: boolean }).all
        ? (cb as unknown as (e: null, a: (typeof pinned)[]) => void)(null, [pinned])
        : cb(null, pinned.address, pinned.family)),
    }, resolve);
    const timer = setTimeout(() => req.destroy(refuse(host, `no answer within ${o.timeoutMs} ms`)), o.timeoutMs);
    req.once('close', () => clearTimeout(timer));
    req.once('timeout', () => req.destroy(refuse(host, `no answer within ${o.timeoutMs} ms`)));
    req.once('error', (err) => reject(err instanceof GatewayError ? err : refuse(host, 'the connection failed')));
    req.end();
  });
}

/** The answer's bytes as they arrived, within the item's cap, the request's budget and the time cap. */
function readBody(res: IncomingMessage, host: string, o: MediaOptions, shared: Shared): Promise<{ chunks: Buffer[]; size: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let unpaused = 0;
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(refuse(host, why));
      res.destroy();
    };
    const timer = setTimeout(() => fail(`not received within ${o.timeoutMs} ms`), o.timeoutMs);
    res.on('data', (c: Buffer) => {
      size += c.length;
      shared.left -= c.length;
      if (size > o.maxBytes) return fail(`it is larger than ${o.maxBytes} bytes`);
      if (shared.left < 0) return fail(tooMany(o));
      chunks.push(c);
      // Other requests' turn every so often, however fast the bytes come.
      if ((unpaused += c.length) >= TURN_BYTES) {
        unpaused = 0;
        res.pause();
        setImmediate(() => res.resume());
      }
    });
    res.once('end', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ chunks, size });
    });
    res.once('error', () => fail('the transfer failed'));
    res.once('aborted', () => fail('the transfer was cut'));
    res.once('close', () => fail('the transfer was cut'));
  });
}
