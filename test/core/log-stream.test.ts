// The logger's stdout (core/log-stream.ts): the lines of one turn in one write, from the event loop's own thread; a
// full pipe never stalls the event loop (what it refuses waits, in order); what waits at exit is written.
import t from 'tap';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { TurnWriter } from '../../core/log-stream.ts';

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A writeSync that records each write's text, refusing (EAGAIN) while `refuse` says so and taking at most `max` bytes. */
function fakeFd(opts: { refuse?: () => boolean; max?: number; error?: string } = {}) {
  const writes: Buffer[] = [];
  let refused = 0;
  const writeSync = (_fd: number, data: Buffer): number => {
    if (opts.error) throw Object.assign(new Error(opts.error), { code: opts.error });
    if (opts.refuse?.()) { refused++; throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' }); }
    const n = Math.min(data.length, opts.max ?? Infinity);
    writes.push(Buffer.from(data.subarray(0, n)));
    return n;
  };
  return { writeSync, writes, refused: () => refused, text: () => Buffer.concat(writes).toString('utf8') };
}

t.test('the lines of one turn go out in one write at its end; the next turn\'s in another', async (t) => {
  const fd = fakeFd();
  const w = new TurnWriter(9, { writeSync: fd.writeSync, exit: false, atomic: false });
  w.write('a\n');
  w.write('b\n');
  w.write('c\n');
  t.equal(fd.writes.length, 0, 'nothing written within the turn');
  await turn();
  t.strictSame(fd.writes.map(String), ['a\nb\nc\n']);
  w.write('d\n');
  await turn();
  t.strictSame(fd.writes.map(String), ['a\nb\nc\n', 'd\n']);
});

t.test('a full pipe: what it refuses waits and is tried again, in order, later lines behind it', async (t) => {
  let refusing = true;
  const fd = fakeFd({ refuse: () => refusing });
  const w = new TurnWriter(9, { writeSync: fd.writeSync, exit: false, atomic: false });
  w.write('one\n');
  await turn();
  t.equal(fd.refused(), 1);
  w.write('two\n');
  await turn();
  t.equal(fd.refused(), 1, 'no write tried before the retry');
  refusing = false;
  await sleep(30);
  w.write('three\n');
  await turn();
  t.equal(fd.text(), 'one\ntwo\nthree\n');
});

t.test('partial writes: every byte once, in order, characters cut between writes made whole by the reader', async (t) => {
  const fd = fakeFd({ max: 5 });
  const w = new TurnWriter(9, { writeSync: fd.writeSync, exit: false, atomic: false });
  const lines = ['{"msg":"héllo wörld"}\n', '{"msg":"日本語のログ"}\n', '{"msg":"🎉"}\n'];
  for (const l of lines) w.write(l);
  await turn();
  t.ok(fd.writes.length > 10, `${fd.writes.length} writes of at most 5 bytes`);
  t.equal(fd.text(), lines.join(''));
});

t.test('a pipe: writes of whole lines, at most 4 096 bytes each (a longer line alone), so processes sharing it never cut into each other\'s lines', async (t) => {
  const fd = fakeFd();
  const w = new TurnWriter(9, { writeSync: fd.writeSync, exit: false, atomic: true });
  const lines = Array.from({ length: 300 }, (_, i) => `{"i":${i},"pad":"${'é'.repeat(i % 97)}"}\n`);
  lines.splice(150, 0, `{"long":"${'x'.repeat(9000)}"}\n`);
  for (const l of lines) w.write(l);
  await turn();
  t.equal(fd.text(), lines.join(''), 'every byte, in order');
  t.ok(fd.writes.length >= 8, `${fd.writes.length} writes for ~41 KB`);
  for (const b of fd.writes) {
    const text = b.toString('utf8');
    if (!text.endsWith('\n') || (b.length > 4096 && text.split('\n').length !== 2)) t.fail(`a write of ${b.length} bytes: ${text.slice(0, 60)}`);
  }
  t.equal(fd.writes.filter((b) => b.length > 4096).length, 1, 'only the long line went alone past 4 096 bytes');
});

t.test('a stdout that is gone (EPIPE): nothing more is tried, nothing thrown', async (t) => {
  const fd = fakeFd({ error: 'EPIPE' });
  let tries = 0;
  const w = new TurnWriter(9, { writeSync: (f, d) => { tries++; return fd.writeSync(f, d); }, exit: false });
  w.write('x\n');
  await turn();
  w.write('y\n');
  await turn();
  w.flushSync();
  t.equal(tries, 1);
});

t.test('a stdout that takes nothing for long: lines past 16 MB waiting are dropped, and the count said once it takes again', async (t) => {
  let refusing = true;
  const fd = fakeFd({ refuse: () => refusing });
  const w = new TurnWriter(9, { writeSync: fd.writeSync, exit: false, atomic: false });
  const line = 'x'.repeat(1023) + '\n';
  for (let i = 0; i < 17 * 1024; i++) w.write(line);
  t.ok(w.waiting <= 16 * 1024 * 1024, `${w.waiting} bytes waiting`);
  refusing = false;
  await sleep(30);
  const text = fd.text();
  t.equal(text.split('\n').filter((l) => l === line.slice(0, -1)).length, 16 * 1024, 'the first 16 MB of lines');
  t.match(text, /"msg":"1024 log lines dropped: stdout did not take them"}\n$/, 'then how many were dropped');
});

/** Runs a child that logs through createLogger's stdout; `read` gets its stdout stream once `delayMs` have passed. */
function child(script: string, delayMs: number): Promise<{ out: string; err: string; code: number | null }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('../..', import.meta.url), stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    p.stdout.pause();
    setTimeout(() => { p.stdout.on('data', (c: Buffer) => out.push(c)); p.stdout.resume(); }, delayMs);
    p.stderr.on('data', (c: Buffer) => { err += c; });
    p.on('close', (code) => resolve({ out: Buffer.concat(out).toString('utf8'), err, code }));
  });
}

const LOGGER = `import { createLogger } from ${JSON.stringify(new URL('../../core/log.ts', import.meta.url).href)};`;

t.test('a real pipe its reader leaves unread: the event loop runs on, every line arrives in order', async (t) => {
  // 20 000 lines (~2.6 MB, far beyond a pipe's 64 KB) in one turn; the reader starts after 600 ms. A timer due in
  // 50 ms must fire on time: the writes never wait for the reader.
  const script = `${LOGGER}
    const log = createLogger('info');
    for (let i = 0; i < 20000; i++) log.info({ i, pad: 'p'.repeat(80) }, 'line');
    const at = performance.now();
    setTimeout(() => { process.stderr.write('late ' + Math.round(performance.now() - at - 50) + '\\n'); }, 50);`;
  const { out, err, code } = await child(script, 600);
  t.equal(code, 0, err);
  const late = Number(/late (-?\d+)/.exec(err)?.[1]);
  t.ok(late < 150, `the timer fired ${late} ms late while the pipe was full`);
  const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { i: number; msg: string });
  t.equal(lines.length, 20000);
  t.ok(lines.every((l, i) => l.i === i && l.msg === 'line'), 'all of them, in order');
});

t.test('lines logged just before the process exits are written', async (t) => {
  const script = `${LOGGER}
    const log = createLogger('info');
    for (let i = 0; i < 1000; i++) log.info({ i }, 'bye');
    process.exit(3);`;
  const { out, code } = await child(script, 0);
  t.equal(code, 3);
  t.equal(out.trim().split('\n').length, 1000);
});
