// Which addresses a fetch made on a client's behalf must not reach: loopback, private, link-local, CGNAT, multicast and
// reserved IPv4 and IPv6 ranges, and every IPv6 form that carries an IPv4 address, decided on the IPv4 address it reaches.
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) blocked.addSubnet(net, bits, 'ipv4');
// 64:ff9b:1::/48 whole: only its /96 form (EMBEDDING) says where the IPv4 address is, any other is refused.
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32],
  ['64:ff9b:1::', 48]] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/** The 16-bit groups of a valid IPv6 address (a trailing dotted IPv4 part as its two groups). */
function groups(address: string): number[] {
  let text = address.split('%')[0].toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16));
}

/**
 * IPv6 prefixes that carry an IPv4 address, as [prefix groups, prefix bits, group where the IPv4 address starts]: such
 * an address is decided on the IPv4 address it reaches.
 */
const EMBEDDING: [number[], number, number][] = ([
  ['::', 96, 6], // IPv4-compatible ::a.b.c.d (deprecated; :: and ::1 fall in 0.0.0.0/8)
  ['::ffff:0:0', 96, 6], // IPv4-mapped
  ['::ffff:0:0:0', 96, 6], // IPv4-translated (SIIT)
  ['64:ff9b::', 96, 6], // NAT64, well-known prefix
  ['64:ff9b:1::', 96, 6], // NAT64, local-use prefix in its /96 form
  ['2002::', 16, 1], // 6to4
] as const).map(([net, bits, at]) => [groups(net), bits, at]);

/** Whether the groups start with the prefix (prefixes here are whole groups). */
const within = (g: number[], net: number[], bits: number) => net.slice(0, bits / 16).every((n, i) => g[i] === n);

/** The IPv4 address an IPv6 one carries (see EMBEDDING), if any. */
function embeddedV4(address: string): string | undefined {
  const g = groups(address);
  const found = EMBEDDING.find(([net, bits]) => within(g, net, bits));
  if (!found) return undefined;
  const [hi, lo] = [g[found[2]], g[found[2] + 1]];
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
