// Run with `node --expose-gc`: starts a gateway (the embedded store, kept in a file of a temp folder, with small record
// caps; the simulator upstream), sends requests in rounds (whole answers and streams, limited key, metering), and
// prints the heap in use after a full GC at the end of each round, as one JSON line.
import { request } from 'node:http';
import { pino } from 'pino';
import { startGateway } from '../../app/gateway.ts';
import { chatConfig, writeConfig } from './gateway.ts';

const ROUNDS = Number(process.argv[2] ?? 4);
const PER_ROUND = Number(process.argv[3] ?? 800);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const gateway = await startGateway({
  configFile: writeConfig(chatConfig({
    keyId: 'leak', key: 'sk-leak-0001', accounts: 2, limits: 'concurrency: 50, rpm: 1000000, tpm: 100000000',
    store: 'records_per_key: 100, records_total: 200',
  })),
  host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }),
});

const one = (i: number) => new Promise<void>((resolve, reject) => {
  const body = JSON.stringify({ model: 'gpt-4o-mini', stream: i % 2 === 0, messages: [{ role: 'user', content: `Hello there ${i % 7}` }] });
  const req = request(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-leak-0001', 'x-claude-code-session-id': `s-${i % 50}`, 'content-length': Buffer.byteLength(body) },
  }, (res) => { res.resume(); res.once('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)))); });
  req.once('error', reject);
  req.end(body);
});

const heap: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < PER_ROUND; i += 20) await Promise.all(Array.from({ length: 20 }, (_, k) => one(round * PER_ROUND + i + k)));
  await new Promise((r) => setTimeout(r, 100));
  gc(); gc();
  heap.push(process.memoryUsage().heapUsed);
}
await gateway.close();
process.stdout.write(JSON.stringify({ rounds: ROUNDS, perRound: PER_ROUND, heap }) + '\n');
process.exit(0);
