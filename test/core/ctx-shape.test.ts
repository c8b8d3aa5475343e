// Every request's context keeps one shape (V8's map) through its life, streams included: the places that read contexts
// then see one map and stay fast. Checked with V8's own test functions (%HaveSameMap) in a child process, as the flag
// that allows them must be set before V8 starts.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const context = fileURLToPath(new URL('../../core/context.ts', import.meta.url));

const script = `
import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { createCtx, scratchCtx } from ${JSON.stringify(context)};
const log = pino({ level: 'silent' });
const make = () => {
  const req = Object.assign(new PassThrough(), { headers: {} });
  return createCtx({ id: 'r', clientRequestId: undefined, req, res: {}, route: {}, format: {}, path: '/', search: '', params: {}, log, bodyLimit: 1, start: 0 });
};
const plain = make();
const streamed = make();
// What a streamed request that failed over goes through: a scratch copy for its opening frames, then its ending.
const scratch = scratchCtx(streamed);
scratch.set({ name: 'position' }, 1);
streamed.model = 'm';
streamed.streamed = { chars: 3, outputFinal: true };
streamed.attempts = [{ account: 'a', status: 502, reason: 'status' }];
streamed.outcome = 'completed';
streamed.usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
streamed.cost = 0.1;
streamed.endedBy = 'upstream';
console.log(JSON.stringify({ sameMap: %HaveSameMap(plain, streamed), scratchSameMap: %HaveSameMap(plain, scratch), fast: %HasFastProperties(streamed) }));
`;

t.test('a context keeps its shape through a stream, its scratch copy and every field the gateway sets', async (t) => {
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as { sameMap: boolean; scratchSameMap: boolean; fast: boolean };
  t.ok(r.sameMap, 'the same map as a context nothing happened to');
  t.ok(r.scratchSameMap, 'its scratch copy too');
  t.ok(r.fast, 'fast properties (not a dictionary)');
});
