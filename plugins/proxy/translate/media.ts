// Fetches the images and files a client gave by URL into inline bytes, for an upstream format that takes media only
// inline (Codec.inlineMedia: Gemini). This is the gateway reaching out on a client's behalf, so it is fenced: http(s)
// only; the host resolved once and every address checked (no loopback, private, link-local, CGNAT, multicast or
// reserved address, IPv4-mapped and NAT64 forms included); the connection made to the address that was checked (a DNS
// answer that changes cannot move it); no redirect followed; a size cap, a time cap, a cap on fetches per request.
import { lookup } from 'node:dns/promises';
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from '../../../core/node-http.ts';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import type { CanonBlock, CanonRequest, FileBlock, ImageBlock } from '../../../core/canonical.ts';
import { GatewayError } from '../../../core/errors.ts';
import { proxyErrors } from '../pool-errors.ts';

export interface MediaOptions {
  maxBytes: number;
  timeoutMs: number;
  /** URLs fetched for one request at most. */
  maxItems: number;
  /** `host:port` origins allowed although their address is not public (tests; an operator's own media server). */
  allowPrivate?: string[];
}

export const MEDIA_DEFAULTS: MediaOptions = { maxBytes: 20 * 1024 * 1024, timeoutMs: 10_000, maxItems: 16 };

const blocked = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32]] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/** The IPv4 address an IPv6 one carries (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), if any. */
function embeddedV4(address: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = parseInt(m[2], 16);
  const lo = parseInt(m[3], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** True for an address a fetch must not reach. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedV4(address);
  return v4 !== undefined ? blocked.check(v4, 'ipv4') : blocked.check(address, 'ipv6');
}

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

/** Replaces every url source of the request by its bytes, inline (in place); refuses the request when one cannot be fetched. */
export async function inlineMedia(req: CanonRequest, o: MediaOptions = MEDIA_DEFAULTS): Promise<void> {
  const blocks = urlBlocks(req);
  if (blocks.length > o.maxItems) throw refuse('several hosts', `more than ${o.maxItems} media URLs in one request`);
  for (let i = 0; i < blocks.length; i += 4) {
    await Promise.all(blocks.slice(i, i + 4).map(async (b) => {
      const url = (b.source as { url: string }).url;
      const got = await fetchMedia(url, b.type, o);
      b.source = { kind: 'base64', mediaType: got.mediaType, data: got.bytes.toString('base64') };
    }));
  }
}

/** One URL's bytes and media type, under the rules above. */
export async function fetchMedia(href: string, kind: 'image' | 'file', o: MediaOptions): Promise<{ mediaType: string; bytes: Buffer }> {
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
  const pinned = addresses[0];
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'GET', timeout: o.timeoutMs, headers: { accept: kind === 'image' ? 'image/*' : '*/*', 'user-agent': 'model-gateway-media' },
      // The address that was checked, whatever the name resolves to now.
      lookup: (_name, opts, cb) => ((opts as { all?: boolean }).all
        ? (cb as unknown as (e: null, a: typeof addresses) => void)(null, [pinned])
        : cb(null, pinned.address, pinned.family)),
    }, resolve);
    const timer = setTimeout(() => req.destroy(refuse(host, `no answer within ${o.timeoutMs} ms`)), o.timeoutMs);
    req.once('close', () => clearTimeout(timer));
    req.once('timeout', () => req.destroy(refuse(host, `no answer within ${o.timeoutMs} ms`)));
    req.once('error', (err) => reject(err instanceof GatewayError ? err : refuse(host, 'the connection failed')));
    req.end();
  });
  const status = res.statusCode ?? 0;
  if (status !== 200) { res.resume(); throw refuse(host, status >= 300 && status < 400 ? 'it redirects (redirects are not followed)' : `it answered ${status}`); }
  const mediaType = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (kind === 'image' ? !mediaType.startsWith('image/') : !/^[a-z]+\/[a-z0-9.+-]+$/.test(mediaType)) {
    res.resume();
    throw refuse(host, `its content type "${mediaType || 'none'}" is not ${kind === 'image' ? 'an image' : 'a file type'}`);
  }
  if (Number(res.headers['content-length'] ?? 0) > o.maxBytes) { res.destroy(); throw refuse(host, `it is larger than ${o.maxBytes} bytes`); }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
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
      if (size > o.maxBytes) fail(`it is larger than ${o.maxBytes} bytes`);
      else chunks.push(c);
    });
    res.once('end', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ mediaType, bytes: Buffer.concat(chunks) });
    });
    res.once('error', () => fail('the transfer failed'));
    res.once('aborted', () => fail('the transfer was cut'));
  });
}
