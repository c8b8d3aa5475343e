// The bench's Redis figures: INFO text parsed, and a window's cost per request (the INFO calls themselves left out).
import t from 'tap';
import { parseInfo, perRequest } from '../../bench/redis-info.ts';

const stats = (evalsha: number, hincrby: number, info: number) =>
  `# Commandstats\r\ncmdstat_evalsha:calls=${evalsha},usec=10,usec_per_call=1.00\r\ncmdstat_hincrby:calls=${hincrby},usec=5\r\ncmdstat_info:calls=${info},usec=1\r\n`;
const cpu = (sys: number, user: number) => `# CPU\r\nused_cpu_sys:${sys}\r\nused_cpu_user:${user}\r\nused_cpu_sys_children:0.5\r\n`;

t.test('parseInfo reads calls by command and the server\'s own CPU seconds', async (t) => {
  const s = parseInfo(stats(10, 3, 7), cpu(1.25, 2.5));
  t.strictSame([...s.calls], [['evalsha', 10], ['hincrby', 3], ['info', 7]]);
  t.equal(s.cpuS, 3.75);
});

t.test('perRequest divides the window\'s deltas by the requests answered', async (t) => {
  const before = parseInfo(stats(100, 50, 1), cpu(1, 1));
  const after = parseInfo(stats(540, 52, 3), cpu(1.01, 1.006));
  t.strictSame(perRequest(before, after, 100), { calls: 4.42, byCommand: { evalsha: 4.4 }, cpuUs: 160 });
});
