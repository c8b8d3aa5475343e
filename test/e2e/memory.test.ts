// A leak check: thousands of requests (whole answers and streams, a limited key, metering, two accounts, sessions)
// through a gateway on the embedded store with small record caps; after a full GC the heap must stop growing once the
// first round has warmed everything up. Runs the probe in a child with --expose-gc (test/helpers/leak-probe.ts).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const ROUNDS = 8;
const PER_ROUND = 800;
/** Rounds 2..8 hold 5 600 requests: 2.5 MB is under 0.5 KB each, including the 60 s rpm window and settle markers. */
const LIMIT_BYTES = 2.5 * 2 ** 20;

t.test(`heap after ${ROUNDS} rounds of ${PER_ROUND} requests stays flat`, async (t) => {
  const probe = fileURLToPath(new URL('../helpers/leak-probe.ts', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', probe, String(ROUNDS), String(PER_ROUND)], { timeout: 60_000 });
  const { heap } = JSON.parse(stdout.trim().split('\n').pop()!) as { heap: number[] };
  const growth = heap[heap.length - 1] - heap[0];
  t.comment(`heap after each round (MB): ${heap.map((h) => (h / 2 ** 20).toFixed(1)).join(' ')}`);
  t.ok(growth < LIMIT_BYTES, `grew ${(growth / 2 ** 20).toFixed(2)} MB over ${(ROUNDS - 1) * PER_ROUND} requests (limit ${LIMIT_BYTES / 2 ** 20} MB)`);
});
