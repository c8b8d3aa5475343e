// The file stores' writer thread: owns their SQLite files (opened, locked and pruned when asked), writes each batch in
// one transaction, in order. A batch that fails (disk full) stays first in line and is tried again, so none is skipped.
import { parentPort } from 'node:worker_threads';
import { openDatabase, type OpenFile } from './db.ts';
import { FileTables } from './tables.ts';
import type { Batch, FromWriter, ToWriter, WriterOptions } from './rows.ts';
import { release } from '../memory/columns.ts';

const PRUNE_EVERY_MS = 60_000;
const RETRY_MS = 1000;

interface Opened { file: OpenFile; tables: FileTables; options: WriterOptions; queue: Batch[]; retry?: NodeJS.Timeout; prunedAt: number }

const port = parentPort!;
const send = (m: FromWriter) => port.postMessage(m);
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
const files = new Map<number, Opened>();

function open(id: number, options: WriterOptions): void {
  let file: OpenFile | undefined;
  try {
    file = openDatabase(options.path);
    const tables = new FileTables(file.db);
    tables.prune(options);
    files.set(id, { file, tables, options, queue: [], prunedAt: Date.now() });
    send({ id, type: 'ready' });
  } catch (err) {
    file?.close();
    files.delete(id);
    send({ id, type: 'open-failed', message: message(err) });
  }
}

function drain(id: number, f: Opened): void {
  f.retry = undefined;
  while (f.queue.length) {
    const batch = f.queue[0];
    const start = performance.now();
    try {
      f.tables.write(batch);
    } catch (err) {
      send({ id, type: 'write-failed', seq: batch.seq, message: message(err) });
      f.retry = setTimeout(() => drain(id, f), RETRY_MS);
      return;
    }
    f.queue.shift();
    release(batch.records);
    send({ id, type: 'written', seq: batch.seq, ms: performance.now() - start });
  }
  if (Date.now() - f.prunedAt < PRUNE_EVERY_MS) return;
  f.prunedAt = Date.now();
  try { f.tables.prune(f.options); } catch { /* tried again next time; nothing is lost meanwhile */ }
}

function close(id: number, f: Opened): void {
  clearTimeout(f.retry);
  drain(id, f);
  clearTimeout(f.retry);
  f.file.close();
  files.delete(id);
  send({ id, type: 'closed', unwritten: f.queue.length });
}

port.on('message', (m: ToWriter) => {
  if (m.type === 'open') return open(m.id, m.options);
  const f = files.get(m.id);
  if (!f) return;
  if (m.type === 'close') return close(m.id, f);
  f.queue.push(m.batch);
  if (!f.retry) drain(m.id, f);
});
