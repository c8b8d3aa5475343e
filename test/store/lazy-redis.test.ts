// A gateway on the embedded store never loads ioredis or the Redis store's modules (core/store/redis/connect.ts is
// imported only when store.redis is set): measured, ~7 MB less resident at idle. A fresh node process opens a file store
// and a memory-only one, then a Redis one, and says which of them loaded ioredis.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { redisForTest } from './redis-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// A file of its own (not --eval: the store's writer thread would inherit --input-type), importing by absolute URL.
const SCRIPT = `
import { createRequire } from 'node:module';
import { pino } from '${import.meta.resolve('pino')}';
import { createStore } from '${pathToFileURL(join(ROOT, 'core/store/index.ts'))}';
const loaded = () => Object.keys(createRequire('${pathToFileURL(join(ROOT, 'package.json'))}').cache).some((k) => k.includes('/node_modules/ioredis/'));
const log = pino({ level: 'silent' });
const [path, redis, prefix] = process.argv.slice(2);
const file = await createStore({ redis: '', path }, log);
const memory = await createStore({ redis: '' }, log);
const embedded = loaded();
await file.close();
await memory.close();
const shared = await createStore({ redis, prefix }, log);
await shared.keyUsage('lazy-none', { now: Date.now(), days: 1 });
const withRedis = loaded();
await shared.close();
console.log(JSON.stringify({ embedded, withRedis }));
`;

t.test('the embedded stores do not load ioredis; the Redis store does', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-lazy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { url, prefix } = await redisForTest(t, 'lazy-redis');
  const script = join(dir, 'open-stores.mjs');
  writeFileSync(script, SCRIPT);
  const run = spawnSync(process.execPath, [script, join(dir, 'g.db'), url, prefix], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  t.equal(run.status, 0, run.stderr);
  t.strictSame(JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}'), { embedded: false, withRedis: true });
});
