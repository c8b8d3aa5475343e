// A process holding a file store (for file.test.ts): settles the records it is told to, waits past one flush, says
// "settled" and stays up until it is killed.
import { pino } from 'pino';
import { FileStore, FLUSH_MS } from '../../core/store/file/store.ts';
import { record } from './fixtures.ts';

const [path, count] = process.argv.slice(2);
const store = await FileStore.open(path, {}, pino({ level: 'silent' }));
for (let i = 0; i < Number(count); i++) await store.settle(record({ key_id: 'held', request_id: `held-${i}`, cost: 0.5 }), undefined, {});
setTimeout(() => process.stdout.write('settled\n'), FLUSH_MS + 200);
setInterval(() => {}, 60_000);
