// Preloaded (`node --import`) into a gateway under test, in its main thread and in every worker thread (node preloads
// each): a moment after the thread starts, it writes to stderr whether that thread has loaded node's TypeScript
// stripper (amaro) and the compile cache folder its environment names. Plain JavaScript, so it strips nothing itself.
import { threadId } from 'node:worker_threads';

setTimeout(() => {
  const amaro = process.moduleLoadList.some((m) => m.includes('internal/deps/amaro'));
  process.stderr.write(`amaro-probe pid=${process.pid} thread=${threadId} amaro=${amaro} cache=${process.env.NODE_COMPILE_CACHE ?? ''}\n`);
}, Number(process.env.AMARO_PROBE_MS ?? 2000)).unref();
