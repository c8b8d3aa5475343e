// What `npm run record-clients` keeps of a request: no credential, no path of the recording machine, long texts as their
// length, long lists of objects cut with a marker that the tests' reader takes out; and the recordings in the repository
// are the ones the tests read, one per client.
import t from 'tap';
import { isRecordingOf, neutral, recording, reduce } from '../../scripts/record-clients.ts';
import { clientFixture, fixtureFile, rawClientFixture } from '../helpers/client-fixtures.ts';

t.test('credentials in headers and query are replaced, the home folder made neutral', async (t) => {
  const r = recording('cli-1.0', {
    method: 'POST', path: '/v1beta/models/m:streamGenerateContent?alt=sse&key=AIzaSECRET',
    headers: { authorization: 'Bearer sk-real-1', 'x-api-key': 'sk-ant-real', 'x-goog-api-key': 'AIzaREAL', host: '127.0.0.1:4010', 'x-meta': '{"cwd":"/tmp/gw-record-1/cli-a"}' },
    body: JSON.stringify({ text: 'cwd is /tmp/gw-record-1/cli-a' }), at: 0,
  }, '/tmp/gw-record-1/cli-a');
  t.equal(r.url, '/v1beta/models/m:streamGenerateContent?alt=sse&key=sk-example');
  t.strictSame(r.headers, { authorization: 'Bearer sk-example', 'x-api-key': 'sk-example', 'x-goog-api-key': 'sk-example', 'x-meta': '{"cwd":"/home/user"}' });
  t.strictSame(r.body, { text: 'cwd is /home/user' });
  t.notMatch(JSON.stringify(r), /sk-real|sk-ant-real|SECRET|AIzaREAL|gw-record/);
});

t.test('the user\'s own home is made neutral too, only as a whole folder name', async (t) => {
  t.equal(neutral('{"agent_name":"/root","cwd":"/tmp/h/x","f":"/root/.codex","g":"/rootless","h":"/root.d"}', '/tmp/h/x', '/root'),
    '{"agent_name":"/home/user","cwd":"/home/user","f":"/home/user/.codex","g":"/rootless","h":"/root.d"}');
});

t.test('long texts become their length; lists of more than three objects keep two and a marker', async (t) => {
  const long = 'x'.repeat(121);
  t.strictSame(reduce({ a: long, b: 'x'.repeat(120) }, ''), { a: '<text, 121 chars>', b: 'x'.repeat(120) });
  t.strictSame(reduce([{ i: 1 }, { i: 2 }, { i: 3 }], ''), [{ i: 1 }, { i: 2 }, { i: 3 }], 'three kept whole');
  t.strictSame(reduce([{ i: 1 }, { i: 2 }, { i: 3 }, { i: 4 }, { i: 5 }], ''), [{ i: 1 }, { i: 2 }, '<3 more items of the same kind>']);
  t.strictSame(reduce(['a', 'b', 'c', 'd', 'e'], ''), ['a', 'b', 'c', 'd', 'e'], 'lists of strings (enums) are kept');
});

t.test('the repository holds one recording per client, without credentials, read with its markers taken out', async (t) => {
  for (const client of ['claude-code', 'claude-code-default', 'codex-cli', 'gemini-cli'] as const) {
    t.match(fixtureFile(client), new RegExp(`^${client}-\\d+\\.\\d+\\.\\d+\\.json$`));
    const raw = rawClientFixture(client);
    const credentials = Object.entries(raw.headers as Record<string, string>).filter(([k]) => /^(authorization|x-api-key|x-goog-api-key)$/.test(k));
    t.ok(credentials.length === 1 && credentials.every(([, v]) => v.endsWith('sk-example')), `${client}: its one credential replaced`);
    t.match(JSON.stringify(raw.body), /more items of the same kind/, `${client}: cut lists are marked`);
    t.notMatch(JSON.stringify(clientFixture(client).body), /more items of the same kind/, `${client}: the reader takes the marks out`);
  }
});

t.test('claude-code and claude-code-default are two clients: neither reads nor replaces the other\'s recording', async (t) => {
  t.ok(isRecordingOf('claude-code', 'claude-code-2.1.330.json'));
  t.notOk(isRecordingOf('claude-code', 'claude-code-default-2.1.330.json'), 'a re-recording of claude-code leaves the default-model one');
  t.ok(isRecordingOf('claude-code-default', 'claude-code-default-2.1.330.json'));
  t.notOk(isRecordingOf('claude-code-default', 'claude-code-2.1.330.json'));
  t.equal(fixtureFile('claude-code'), 'claude-code-2.1.330.json');
  t.equal(fixtureFile('claude-code-default'), 'claude-code-default-2.1.330.json');
  t.equal(rawClientFixture('claude-code-default').body.messages[1].role, 'system', 'the default model\'s request holds a system message');
});
