// The throttle of invalid credentials (core/auth-throttle.ts) and the client address it counts (core/client-address.ts):
// bounded memory, windows and blocks that end, IPv6 counted by /64, and X-Forwarded-For believed only from trusted proxies.
import type { IncomingMessage } from 'node:http';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import t from 'tap';
import { AuthThrottle } from '../../core/auth-throttle.ts';
import { clientAddresses, parseRange, throttleSubject } from '../../core/client-address.ts';
import type { ThrottleRule } from '../../core/types.ts';

const RULE: ThrottleRule = { slow_after: 1, delay_ms: 100, max_delay_ms: 250, block_after: 3, window_ms: 10_000, block_ms: 60_000 };
const throttle = (rule = RULE, max = 100) => new AuthThrottle('key', rule, max, pino({ level: 'silent' }), new Registry());
const T = 1_700_000_000_000;

t.test('slowed past slow_after (delay growing to max_delay_ms), refused past block_after until block_ms ends', async (t) => {
  const th = throttle();
  const seen = [1, 2, 3, 4, 5].map((i) => th.failed('198.51.100.1', T + i));
  t.same(seen, [{ delayMs: 0 }, { delayMs: 100 }, { delayMs: 200 }, { blockedMs: 60_000 }, { blockedMs: 59_999 }]);
  t.same(th.failed('198.51.100.2', T + 5), { delayMs: 0 }, 'another address is counted apart');
  t.same(th.failed('198.51.100.1', T + 60_004), { delayMs: 0 }, 'the block over: counted from the start again');
  t.same(throttle({ ...RULE, slow_after: 0, block_after: 0 }).failed('198.51.100.1', T), { delayMs: 0 }, '0 turns both off');
  const capped = throttle({ ...RULE, block_after: 0 });
  t.same([1, 2, 3, 4].map((i) => capped.failed('198.51.100.3', T + i)), [{ delayMs: 0 }, { delayMs: 100 }, { delayMs: 200 }, { delayMs: 250 }], 'delays stop at max_delay_ms');
});

t.test('a window that passed starts the count again', async (t) => {
  const th = throttle();
  th.failed('198.51.100.1', T);
  t.same(th.failed('198.51.100.1', T + 1), { delayMs: 100 });
  t.same(th.failed('198.51.100.1', T + 10_000), { delayMs: 0 }, 'window_ms after the first failure: a fresh count');
});

t.test('memory is bounded: past max_addresses the least recently seen is forgotten', async (t) => {
  const th = throttle(RULE, 100);
  th.failed('192.0.2.1', T);
  th.failed('192.0.2.2', T);
  for (let i = 0; i < 99; i++) th.failed(`10.0.${i >> 8}.${i & 255}`, T + 1);
  t.equal(th.size, 100);
  t.same(th.failed('192.0.2.2', T + 2), { delayMs: 100 }, 'a recent address is remembered');
  t.same(th.failed('192.0.2.1', T + 2), { delayMs: 0 }, 'the oldest was forgotten');
  for (let i = 0; i < 10_000; i++) th.failed(`2001:db8:${i.toString(16)}::1`, T + 3);
  t.equal(th.size, 100, 'ten thousand more addresses: still 100');
  th.configure(RULE, 10);
  t.equal(th.size, 10, 'a smaller bound on reload applies at once');
});

t.test('IPv6 counts by /64, IPv4 by address', async (t) => {
  for (const [a, subject] of [
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'], ['2001:DB8:1:2::9', '2001:db8:1:2::/64'], ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'], ['fe80::1:2:3:4', 'fe80:0:0:0::/64'], ['2001:db8:0001:0002::', '2001:db8:1:2::/64'], ['::ffff:1.2.3.4', '1.2.3.4'], ['64:ff9b::1.2.3.4', '64:ff9b:0:0::/64'],
    ['203.0.113.9', '203.0.113.9'], ['', ''],
  ]) t.equal(throttleSubject(a), subject, a || '(none)');
  const th = throttle();
  th.failed('2001:db8:1:2::1', T);
  t.same(th.failed('2001:db8:1:2:ffff::7', T + 1), { delayMs: 100 }, 'another address of the same /64 is the same client');
});

const req = (remoteAddress: string, xff?: string | string[]) => ({ socket: { remoteAddress }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } }) as unknown as IncomingMessage;

t.test('the client address: the peer, or past trusted proxies the last untrusted hop of X-Forwarded-For', async (t) => {
  const none = clientAddresses([]);
  t.equal(none(req('198.51.100.1', '203.0.113.5')), '198.51.100.1', 'no trusted proxy: X-Forwarded-For is ignored');
  t.equal(none(req('::ffff:198.51.100.1')), '198.51.100.1', 'an IPv4-mapped peer is its IPv4 address');
  const behind = clientAddresses(['10.0.0.0/8', '192.168.1.10', 'fd00::/8']);
  t.equal(behind(req('10.1.2.3', '203.0.113.5')), '203.0.113.5');
  t.equal(behind(req('::ffff:10.1.2.3', '203.0.113.5')), '203.0.113.5', 'a mapped peer in a trusted range');
  t.equal(behind(req('10.1.2.3', '198.51.100.9, 203.0.113.5')), '203.0.113.5', 'what the client wrote before the proxy is not believed');
  t.equal(behind(req('10.1.2.3', '203.0.113.5, 192.168.1.10, 10.9.9.9')), '203.0.113.5', 'a chain of trusted proxies is walked');
  t.equal(behind(req('10.1.2.3', ['203.0.113.5', '10.2.2.2'])), '203.0.113.5', 'several headers, in order');
  t.equal(behind(req('fd00::5', '[2001:db8::7]:443')), '2001:db8::7', 'a bracketed IPv6 hop with its port');
  t.equal(behind(req('10.1.2.3', '203.0.113.5:5000')), '203.0.113.5', 'an IPv4 hop with its port');
  t.equal(behind(req('10.1.2.3', 'unknown, nonsense')), '10.1.2.3', 'a malformed hop stops at the last address known');
  t.equal(behind(req('10.1.2.3', '203.0.113.5, garbage')), '10.1.2.3');
  t.equal(behind(req('10.1.2.3', '10.4.4.4')), '10.4.4.4', 'only trusted hops: the farthest');
  t.equal(behind(req('198.51.100.1', '203.0.113.5')), '198.51.100.1', 'from an untrusted peer, the header is ignored');
  t.equal(behind(req('10.1.2.3')), '10.1.2.3', 'a trusted peer without the header');
});

t.test('trusted_proxies entries: an address or a CIDR range', async (t) => {
  for (const ok of ['10.0.0.0/8', '192.168.1.10', '::1', 'fd00::/8', '0.0.0.0/0', '2001:db8::/128']) t.ok(parseRange(ok), ok);
  for (const bad of ['10.0.0.0/33', 'fd00::/129', 'localhost', '10.0.0.0/8/1', '10.0.0/8', '10.0.0.0/x', '']) t.notOk(parseRange(bad), bad || '(empty)');
});
