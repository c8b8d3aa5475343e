// The soak's live heap (bench/live-heap.ts): a process's inspector opened from outside, a full collection, the heap in
// use after it. One real node process that churns garbage all along, read before and after it takes hold of ~40 MB of
// arrays: the figures differ by what it holds, whatever garbage was waiting. (Two processes, one holding and one not,
// differed by up to 5 MB more or less than what was held when the machine was busy: each has a baseline of its own.)
import { spawn } from 'node:child_process';
import t from 'tap';
import { LiveHeap } from '../../bench/live-heap.ts';
import { freePort } from '../helpers/process.ts';

// On a line 'keep' from its stdin: 40 000 arrays of 125 small integers (8 bytes each, ~1 KB an array with its
// header) and the array holding them, then 'kept'.
const CHILD = `
let garbage;
setInterval(() => { garbage = []; for (let i = 0; i < 20000; i++) garbage.push({ i, s: 'y' + i }); }, 5);
process.stdin.on('data', () => {
  const keep = [];
  for (let i = 0; i < 40000; i++) keep.push(Array.from({ length: 125 }, (_, j) => i + j));
  globalThis.keep = keep;
  process.stdout.write('kept\\n');
});
process.stdout.write('ready\\n');
`;

t.test('the live heap grows by what a process takes hold of, and a process gone answers null', async (t) => {
  const port = await freePort();
  const child = spawn(process.execPath, [`--inspect-port=127.0.0.1:${port}`, '-e', CHILD], { stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGKILL'); await exited; } });
  const line = (text: string) => new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer) => { if (c.toString().includes(text)) { child.stdout.off('data', onData); resolve(); } };
    child.stdout.on('data', onData);
    child.once('exit', () => reject(new Error('child exited')));
  });
  await line('ready');
  const heap = await LiveHeap.open(child.pid!, port);
  const before = await heap.bytes();
  const kept = line('kept');
  child.stdin.write('keep\n');
  await kept;
  const after = await heap.bytes();
  t.ok(before !== null && after !== null, 'both readings answered');
  const mb = (n: number) => n / 2 ** 20;
  t.ok(mb(before!) < 16, `before: ${mb(before!).toFixed(1)} MB live, its garbage collected`);
  const diffMb = mb(after! - before!);
  t.ok(diffMb > 36 && diffMb < 46, `the difference is what is held: ${diffMb.toFixed(1)} MB`);
  child.kill('SIGKILL');
  await exited;
  t.equal(await heap.bytes(2000), null, 'a process gone: null');
  heap.close();
});
