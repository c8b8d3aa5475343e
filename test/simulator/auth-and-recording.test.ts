// Credential checks and request recording on the simulator.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { postJson } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

async function chatWith(headers: Record<string, string>): Promise<Response> {
  return fetch(sim.url + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

t.test('401 without a credential, and with the bad one', async (t) => {
  const refused: Array<Record<string, string>> = [{}, { authorization: 'Bearer ' }, { authorization: 'Bearer sim-bad-credential' }, { 'x-api-key': 'sim-bad-credential' }];
  for (const headers of refused) {
    const res = await chatWith(headers);
    t.equal(res.status, 401, JSON.stringify(headers));
    const { error } = await res.json();
    t.equal(error.type, 'invalid_request_error');
    t.equal(error.code, 'invalid_api_key');
    t.equal(error.param, null);
    t.type(error.message, 'string');
  }
  const missing = await (await chatWith({})).json();
  t.match(missing.error.message, /^Missing credentials/);
});

t.test('any non-empty credential in any of the three headers is accepted', async (t) => {
  const accepted: Array<Record<string, string>> = [{ authorization: 'Bearer anything' }, { 'x-api-key': 'anything' }, { 'x-goog-api-key': 'anything' }];
  for (const headers of accepted) {
    t.equal((await chatWith(headers)).status, 200, JSON.stringify(headers));
  }
});

t.test('requests records method, path with query, headers and body', async (t) => {
  sim.clear();
  t.equal(sim.requests.length, 0);
  const raw = JSON.stringify(body);
  await postJson(sim, '/v1/chat/completions?trace=1', raw, { 'x-custom': 'yes', authorization: 'Bearer sk-upstream' });
  await fetch(sim.url + '/v1/chat/completions', { method: 'POST', headers: { authorization: 'Bearer x' }, body: 'not json' });
  t.equal(sim.requests.length, 2);
  const [first, second] = sim.requests;
  t.equal(first.method, 'POST');
  t.equal(first.path, '/v1/chat/completions?trace=1');
  t.equal(first.headers['x-custom'], 'yes');
  t.equal(first.headers.authorization, 'Bearer sk-upstream');
  t.equal(first.headers['content-type'], 'application/json');
  t.equal(first.body, raw);
  t.same(first.json, body);
  t.type(first.at, 'number');
  t.equal(second.body, 'not json');
  t.notOk('json' in second, 'no json for a body that does not parse');
});

t.test('GET /_simulator/requests returns the recording without adding to it', async (t) => {
  const res = await fetch(sim.url + '/_simulator/requests');
  t.equal(res.status, 200);
  const recorded = await res.json();
  t.equal(recorded.length, 2);
  t.equal(recorded[0].path, '/v1/chat/completions?trace=1');
  t.equal(sim.requests.length, 2);
  await fetch(sim.url + '/_simulator/requests', { method: 'DELETE' });
  t.equal(sim.requests.length, 0);
});

t.test('unauthorised and unknown requests are recorded too', async (t) => {
  sim.clear();
  await chatWith({});
  await fetch(sim.url + '/nowhere');
  t.same(sim.requests.map((r) => r.path), ['/v1/chat/completions', '/nowhere']);
});

t.test('maxRecorded keeps only the newest requests; 0 records none', async (t) => {
  const small = await startSimulator({ maxRecorded: 2 });
  const none = await startSimulator({ maxRecorded: 0 });
  t.teardown(() => Promise.all([small.close(), none.close()]));
  for (const path of ['/a', '/b', '/c']) {
    await fetch(small.url + path);
    await fetch(none.url + path);
  }
  t.same(small.requests.map((r) => r.path), ['/b', '/c']);
  t.equal(none.requests.length, 0);
});
