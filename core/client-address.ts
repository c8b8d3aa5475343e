// Who a request comes from: the peer's address, or behind proxies the operator trusts (server.trusted_proxies) the
// address their X-Forwarded-For names. A client can write any X-Forwarded-For: only a trusted proxy's is read.
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

interface Range { address: string; prefix?: number; family: 'ipv4' | 'ipv6' }

/** An IPv4-mapped IPv6 address (a dual-stack socket's view of an IPv4 peer) as the IPv4 address it is. */
const unmapped = (a: string): string => (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a);

/** An address or CIDR range as configured (192.168.0.10, 10.0.0.0/8, fd00::/8), or undefined when it is neither. */
export function parseRange(text: string): Range | undefined {
  const [address, bits, extra] = text.trim().split('/');
  const v = isIP(address);
  if (!v || extra !== undefined) return undefined;
  const family = v === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) return { address, family };
  const prefix = Number(bits);
  return /^\d{1,3}$/.test(bits) && prefix <= (v === 4 ? 32 : 128) ? { address, prefix, family } : undefined;
}

/** One hop of X-Forwarded-For as a bare address ("[2001:db8::1]:443" and "203.0.113.9:5000" lose their port), or ''. */
function hop(entry: string): string {
  let a = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
  if (bracketed) a = bracketed[1];
  else if (/^[\d.]+:\d+$/.test(a)) a = a.slice(0, a.indexOf(':'));
  return isIP(a) ? unmapped(a) : '';
}

/**
 * The function that finds a request's address under these trusted proxies. Walking X-Forwarded-For from its right
 * end, each hop a trusted proxy added is believed, up to the first address that is not a trusted proxy: that is the
 * client. A malformed hop stops the walk at the last address known.
 */
export function clientAddresses(trusted: readonly string[]): (req: IncomingMessage) => string {
  const peer = (req: IncomingMessage) => unmapped(req.socket.remoteAddress ?? '');
  if (!trusted.length) return peer;
  const list = new BlockList();
  for (const text of trusted) {
    const r = parseRange(text);
    if (!r) continue; // the config refused it
    if (r.prefix === undefined) list.addAddress(r.address, r.family);
    else list.addSubnet(r.address, r.prefix, r.family);
  }
  const isTrusted = (a: string) => a !== '' && list.check(a, isIP(a) === 4 ? 'ipv4' : 'ipv6');
  return (req) => {
    let address = peer(req);
    const header = req.headers['x-forwarded-for'];
    if (!header || !isTrusted(address)) return address;
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
    for (let i = hops.length - 1; i >= 0 && isTrusted(address); i--) {
      const next = hop(hops[i]);
      if (!next) break;
      address = next;
    }
    return address;
  };
}

/**
 * What a throttle counts an address under: an IPv4 address itself, an IPv6 one by its /64 (one host is usually given a
 * whole /64, so its addresses are one client's).
 */
export function throttleSubject(given: string): string {
  const address = unmapped(given);
  if (isIP(address) !== 6) return address;
  const [head, tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (64:ff9b::1.2.3.4) takes two groups.
  const rightGroups = right.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - rightGroups).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '').toLowerCase()).join(':')}::/64`;
}
