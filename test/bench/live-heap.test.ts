// The soak's live heap (bench/live-heap.ts): a process's inspector opened from outside, a full collection, the heap in
// use after it. Two real node processes that churn garbage alike, one also holding ~20 MB of arrays: the figures
// differ by what is held, whatever garbage was waiting.
import { spawn } from 'node:child_process';
import t, { type Test } from 'tap';
import { LiveHeap } from '../../bench/live-heap.ts';
import { freePort } from '../helpers/process.ts';

const CHILD = `
const keep = [];
for (let i = 0; i < Number(process.env.KEEP); i++) keep.push(Array.from({ length: 125 }, (_, j) => i + j));
globalThis.keep = keep;
let garbage;
setInterval(() => { garbage = []; for (let i = 0; i < 20000; i++) garbage.push({ i, s: 'y' + i }); }, 5);
process.stdout.write('ready\\n');
`;

async function started(t: Test, keep: number): Promise<{ pid: number; port: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, [`--inspect-port=127.0.0.1:${port}`, '-e', CHILD], { env: { ...process.env, KEEP: String(keep) }, stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGKILL'); await exited; } });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => { if (c.toString().includes('ready')) resolve(); });
    child.once('exit', () => reject(new Error('child exited')));
  });
  return { pid: child.pid!, port };
}

t.test('the live heap of two processes differs by what one holds, and a process gone answers null', async (t) => {
  const held = await started(t, 20_000);
  const none = await started(t, 0);
  const a = await LiveHeap.open(held.pid, held.port);
  const b = await LiveHeap.open(none.pid, none.port);
  const [heldBytes, noneBytes] = [await a.bytes(), await b.bytes()];
  t.ok(heldBytes !== null && noneBytes !== null, 'both answered');
  const diffMb = (heldBytes! - noneBytes!) / 2 ** 20;
  // 20 000 arrays of 125 small integers (8 bytes each, ~1 KB an array with its header), and the array holding them.
  t.ok(diffMb > 17 && diffMb < 26, `the difference is what is held: ${diffMb.toFixed(1)} MB`);
  t.ok(noneBytes! < 12 * 2 ** 20, `the process that holds nothing: ${(noneBytes! / 2 ** 20).toFixed(1)} MB live, its garbage collected`);
  process.kill(none.pid, 'SIGKILL');
  t.equal(await b.bytes(2000), null, 'a process gone: null');
  a.close();
  b.close();
});
