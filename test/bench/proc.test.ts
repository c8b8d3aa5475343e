// The bench's process-tree figures: /proc stat lines parsed, a cluster's tree found by parent pid, CPU over a window.
import t from 'tap';
import { cpuDelta, descendants, parseStat, threadDelta, threadKind, treeCpu, treeMemory, treeThreadCpu } from '../../bench/proc.ts';

const stat = (pid: number, name: string, ppid: number, utime: number, stime: number) =>
  `${pid} (${name}) S ${ppid} ${pid} ${pid} 0 -1 4194560 6688 0 1 0 ${utime} ${stime} 0 0 20 0 11 0 27423 5259264 926\n`;

t.test('parseStat reads pid, parent and utime + stime, whatever the command name holds', async (t) => {
  t.strictSame(parseStat(stat(41, 'node', 7, 120, 30)), { pid: 41, ppid: 7, cpuTicks: 150 });
  t.strictSame(parseStat(stat(42, 'a) b (c', 41, 5, 1)), { pid: 42, ppid: 41, cpuTicks: 6 });
});

t.test('descendants: the root first, then its workers and theirs; nothing for a root that is gone', async (t) => {
  const stats = [stat(1, 'init', 0, 0, 0), stat(10, 'primary', 1, 1, 0), stat(11, 'w', 10, 2, 0), stat(12, 'w', 10, 3, 0), stat(13, 'x', 11, 4, 0), stat(20, 'other', 1, 5, 0)].map(parseStat);
  t.strictSame(descendants(stats, 10).map((s) => s.pid), [10, 11, 12, 13]);
  t.strictSame(descendants(stats, 20).map((s) => s.pid), [20]);
  t.strictSame(descendants(stats, 99), []);
});

t.test('cpuDelta: each process its own difference; one started in the window all of its time', async (t) => {
  const before = new Map([[10, 1000], [11, 5000], [12, 7000]]);
  const after = new Map([[10, 1500], [11, 9000], [14, 300]]); // 12 ended (its time is lost), 14 replaced it
  t.equal(cpuDelta(before, after), 500 + 4000 + 300);
});

t.test('on Linux, this process: its CPU time and peak RSS, a single process named as such', { skip: process.platform !== 'linux' }, async (t) => {
  const cpu = treeCpu(process.pid);
  t.ok(cpu && (cpu.get(process.pid) ?? 0) > 0);
  const peak = treeMemory(process.pid, 'VmHWM');
  t.ok(peak.bytes !== null && peak.bytes > 1e6);
  t.equal(peak.source, 'VmHWM');
});

t.test('threadKind: the thread whose id is the process\'s runs JavaScript; V8Worker and V8 DefaultWorke are V8\'s; the rest other', async (t) => {
  t.equal(threadKind(40, 40, 'MainThread'), 'main');
  t.equal(threadKind(40, 40, 'node'), 'main');
  t.equal(threadKind(40, 41, 'V8Worker'), 'v8');
  t.equal(threadKind(40, 42, 'V8 DefaultWorke'), 'v8');
  t.equal(threadKind(40, 43, 'libuv-worker'), 'other');
  t.equal(threadKind(40, 44, 'WorkerThread'), 'other');
  t.equal(threadKind(40, 45, 'MainThread'), 'other'); // a worker_threads thread of another name is not the process's own
});

t.test('threadDelta: each thread its own difference, summed by kind; a thread new in the window all of its time', async (t) => {
  const before = new Map([[40, { kind: 'main' as const, us: 1000 }], [41, { kind: 'v8' as const, us: 200 }], [42, { kind: 'v8' as const, us: 300 }]]);
  const after = new Map([[40, { kind: 'main' as const, us: 1600 }], [41, { kind: 'v8' as const, us: 260 }], [42, { kind: 'v8' as const, us: 390 }], [50, { kind: 'other' as const, us: 70 }]]);
  t.strictSame(threadDelta(before, after), { main: 600, v8: 150, other: 70 });
});

t.test('on Linux, this process by thread: its JavaScript thread used CPU, and the kinds add up to the process\'s own figure', { skip: process.platform !== 'linux' }, async (t) => {
  const before = treeThreadCpu(process.pid);
  const cpu0 = treeCpu(process.pid);
  const end = Date.now() + 200;
  let x = 0;
  while (Date.now() < end) x += Math.sqrt(x + 1); // busy on the main thread
  const after = treeThreadCpu(process.pid);
  const cpu1 = treeCpu(process.pid);
  t.ok(before && after && x > 0);
  t.equal(after!.get(process.pid)?.kind, 'main');
  const d = threadDelta(before!, after!);
  t.ok(d.main >= 100_000, `main thread busy ~200 ms, read ${d.main} µs`);
  const total = cpuDelta(cpu0!, cpu1!);
  // Read a moment apart (threads keep running in between): equal within a few clock ticks.
  t.ok(Math.abs(d.main + d.v8 + d.other - total) <= 50_000, `threads ${d.main + d.v8 + d.other} µs, process ${total} µs`);
});
