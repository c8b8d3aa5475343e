// The Store contract on FileStore (the embedded store kept in a file), and createStore picking it and saying where it
// lives. What it keeps across a reopen or a kill -9: file-reopen.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { createStore } from '../../core/store/index.ts';
import { FileStore } from '../../core/store/file/store.ts';
import { contract } from './contract.ts';

const silent = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'gw-file-store-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = () => join(dir, `s${++n}`, 'gateway.db');

contract(t, async (options) => FileStore.open(freshPath(), options ?? {}, silent));

t.test('createStore: the file store at a path, memory only at ":memory:", and one log line saying which', async (t) => {
  const lines: { msg: string; store: string; path?: string }[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => { lines.push(JSON.parse(l)); } });
  const path = freshPath();
  const file = await createStore({ redis: '', path }, log);
  t.equal(file.kind, 'file');
  await file.close();
  const memory = await createStore({ redis: '', path: ':memory:' }, log);
  t.equal(memory.kind, 'memory');
  await memory.close();
  t.strictSame(lines.map((l) => [l.store, l.msg]), [['file', `store: file ${path}`], ['memory', 'store: memory only (keys, quotas and usage are lost when the process stops)']]);
  t.equal(lines[0].path, path);
});
