// The request line written by infoLine (core/log.ts) is the line pino itself writes for the same record: same fields in
// the same order, same escaping, bindings of a child logger included; a logger above info writes nothing.
import t from 'tap';
import { pino } from 'pino';
import { createLogger, infoLine } from '../../core/log.ts';

function sink() {
  const lines: string[] = [];
  return { lines, stream: { write(line: string) { lines.push(line); } } };
}

const records: Record<string, unknown>[] = [
  {
    req_id: 'a1b2', client_request_id: undefined, method: 'POST', route: '/v1/chat/completions', key_id: 'k', group: 'main',
    attempts: [{ account: 'acct-1', status: 200, reason: 'ok' }], model: 'gpt-4o-mini', stream: false, status: 200,
    usage: { input: 9, cacheRead: 0, cacheWrite: 0, output: 3, reasoning: 0 }, cost: 0.0000123, duration_ms: 12,
    client: '127.0.0.1', user_agent: 'agent "quoted" \\ back\nslash é 😀 \u2028',
  },
  { req_id: 'only' },
  {},
];

for (const [i, record] of records.entries()) {
  t.test(`record ${i}: the same line as pino's`, async (t) => {
    const ours = sink();
    const theirs = sink();
    infoLine(createLogger('info', ours.stream), record, 'request');
    createLogger('info', theirs.stream).info(record, 'request');
    t.equal(ours.lines.length, 1);
    const strip = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"T"');
    t.equal(strip(ours.lines[0]), strip(theirs.lines[0]));
    t.ok(ours.lines[0].endsWith('}\n'));
    t.same(JSON.parse(ours.lines[0]).msg, 'request');
  });
}

t.test('a child logger\'s bindings are in the line, as pino puts them', async (t) => {
  const ours = sink();
  const theirs = sink();
  infoLine(createLogger('info', ours.stream).child({ worker: 2 }), { req_id: 'x' }, 'request');
  createLogger('info', theirs.stream).child({ worker: 2 }).info({ req_id: 'x' }, 'request');
  const strip = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"T"');
  t.equal(strip(ours.lines[0]), strip(theirs.lines[0]));
  t.match(ours.lines[0], /"worker":2,"req_id":"x"/);
});

t.test('a multistream destination gets the line through pino (it needs the level metadata)', async (t) => {
  const a = sink();
  const log = pino({ base: undefined }, pino.multistream([{ level: 'info', stream: a.stream }]));
  infoLine(log, { req_id: 'm' }, 'request');
  t.equal(a.lines.length, 1);
  t.equal(JSON.parse(a.lines[0]).req_id, 'm');
});

t.test('a logger above info writes nothing', async (t) => {
  const a = sink();
  infoLine(createLogger('warn', a.stream), { req_id: 'w' }, 'request');
  t.equal(a.lines.length, 0);
});

t.test('isoTime writes what toISOString writes, across seconds, minutes and years', async (t) => {
  const { isoTime } = await import('../../core/log.ts');
  const starts = [Date.UTC(2026, 10, 27, 11, 9, 59, 990), Date.UTC(2026, 11, 31, 23, 59, 59, 995), 0, Date.UTC(1999, 0, 1)];
  let wrong = 0;
  for (const start of starts) {
    for (let now = start; now < start + 2100; now += 7) {
      if (isoTime(now) !== `,"time":"${new Date(now).toISOString()}"`) wrong++;
    }
  }
  // Back in time too (a clock set back): the second is formatted again.
  for (const now of [Date.UTC(2030, 0, 1, 0, 0, 0, 5), Date.UTC(2020, 5, 1, 12, 0, 0, 50), Date.UTC(2030, 0, 1, 0, 0, 0, 500)]) {
    if (isoTime(now) !== `,"time":"${new Date(now).toISOString()}"`) wrong++;
  }
  t.equal(wrong, 0, 'every millisecond checked formats the same');
  t.match(isoTime(), /^,"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$/);
});
