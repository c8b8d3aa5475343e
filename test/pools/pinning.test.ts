// Response pinning in a pool of three: the simulator keeps each Responses object on the credential that created it and
// rejects a foreign previous_response_id (400) or id (404), as the real service does per account. A chain of turns,
// streamed and whole, with unrelated traffic in between, always reaches the account that created its first response;
// GET /v1/responses/{id} too. When that account cools down, needs attention or is gone, the client gets a clear
// CONVERSATION_ACCOUNT_UNAVAILABLE instead of the upstream's confusing 400/404.
import { writeFileSync } from 'node:fs';
import t from 'tap';
import { credentialOf, faultProxy, poolConfig, poolGateway, postJson } from './helpers.ts';

const THREE = [1, 2, 3].map((i) => ({ id: `acct-${i}`, credential: `credential-${i}` }));

/** One turn; streamed turns read the id from response.created and check the stream completed. */
async function turn(gateway: Parameters<typeof postJson>[0], input: string, previous: string | undefined, stream: boolean): Promise<{ status: number; id?: string; text: string }> {
  const res = await postJson(gateway, '/v1/responses', { model: 'gpt-5', input, stream, ...(previous ? { previous_response_id: previous } : {}) });
  const text = await res.text();
  if (res.status !== 200) return { status: res.status, text };
  if (!stream) return { status: 200, id: (JSON.parse(text) as { id: string }).id, text };
  const created = /event: response\.created\ndata: (.*)\n/.exec(text)?.[1];
  return { status: /event: response\.completed/.test(text) ? 200 : 599, id: created ? JSON.parse(created).response.id : undefined, text };
}

t.test('a previous_response_id chain across a pool of three always reaches the account that created it', async (t) => {
  const { gateway } = await poolGateway(t, poolConfig(THREE));
  const sim = gateway.simulators.sim;
  const from = sim.requests.length;
  const first = await turn(gateway, 'Remember the number 7', undefined, false);
  t.equal(first.status, 200);
  const home = credentialOf(sim.requests.at(-1)!);
  let previous = first.id!;
  const ids = [previous];
  for (let i = 1; i <= 8; i++) {
    // New conversations in between move least-recently-used on, so an unpinned turn would land elsewhere.
    t.equal((await turn(gateway, `unrelated ${i}`, undefined, i % 2 === 0)).status, 200);
    const next = await turn(gateway, `turn ${i}`, previous, i % 2 === 1);
    t.equal(next.status, 200, `turn ${i} (${i % 2 === 1 ? 'stream' : 'whole'}): accepted by the account that holds ${previous}`);
    t.match(next.id, /^resp_/);
    previous = next.id!;
    ids.push(previous);
  }
  const chain = sim.requests.slice(from).filter((r) => (r.json as { previous_response_id?: string } | undefined)?.previous_response_id !== undefined || r.json && /Remember/.test(r.body));
  t.equal(chain.length, 9);
  t.ok(chain.every((r) => credentialOf(r) === home), `all 9 turns went to ${home}`);
  const others = sim.requests.slice(from).filter((r) => !chain.includes(r)).map(credentialOf);
  // Least recently used never picks the account a chain turn just used: unpinned, every turn would have moved.
  t.equal(new Set(others).size, 2, 'the unrelated requests rotated over the two other accounts');
  t.notOk(others.includes(home), 'never onto the chain\'s account');

  for (const id of [ids[0], ids[3], ids[8]]) {
    const res = await fetch(`${gateway.url}/v1/responses/${id}`, { headers: { authorization: 'Bearer sk-pool-0001' } });
    t.equal(res.status, 200, `GET ${id} reaches its account`);
    t.equal((await res.json() as { id: string }).id, id);
    t.equal(credentialOf(sim.requests.at(-1)!), home);
  }
  const asked = sim.requests.length;
  const unknown = await fetch(`${gateway.url}/v1/responses/resp_never_made`, { headers: { authorization: 'Bearer sk-pool-0001' } });
  t.equal(unknown.status, 404, 'an id the gateway never returned to this key is not pinned: a 404');
  t.equal(sim.requests.length, asked, 'before anything went upstream');
});

t.test('a streamed answer flows only once its id is pinned: a turn sent the moment the id arrives reaches its account', async (t) => {
  const { gateway } = await poolGateway(t, poolConfig(THREE));
  const sim = gateway.simulators.sim;
  // Slow chunks: the stream is still going (its slot held) when the next turn is sent.
  const res = await postJson(gateway, '/v1/responses', { model: 'gpt-5', input: 'one two three four five six', stream: true }, { 'x-simulator-chunk-delay-ms': '100' });
  t.equal(res.status, 200);
  const home = credentialOf(sim.requests.at(-1)!);
  const reader = res.body!.getReader();
  let text = '';
  let id: string | undefined;
  while (id === undefined) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    const created = /event: response\.created\ndata: (.*)\n/.exec(text)?.[1];
    if (created) id = JSON.parse(created).response.id as string;
  }
  t.match(id, /^resp_/, 'the id, from the opening frames');
  const asked = sim.requests.length;
  // Unpinned, the gateway would refuse an id it never gave this key, or send it to an account that does not hold it.
  const next = await postJson(gateway, '/v1/responses', { model: 'gpt-5', input: 'And then?', previous_response_id: id });
  t.equal(next.status, 200, 'accepted by the account that holds it');
  t.equal(sim.requests.length, asked + 1);
  t.equal(credentialOf(sim.requests[asked]), home, 'sent to the account that created it');
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  t.match(text, /event: response\.completed/, 'the first stream still completed');
});

t.test('the pinned account cooling down, needing attention, or gone: CONVERSATION_ACCOUNT_UNAVAILABLE', async (t) => {
  let simUrl = '';
  const proxy = await faultProxy(t, () => simUrl);
  const accounts = THREE.map((a) => ({ ...a, base_url: proxy.url }));
  const { gateway, file } = await poolGateway(t, poolConfig(accounts));
  simUrl = gateway.simulators.sim.url;

  const first = await turn(gateway, 'Remember the number 7', undefined, true);
  t.equal(first.status, 200);
  const home = proxy.seen.at(-1)!;
  const homeId = accounts.find((a) => a.credential === home)!.id;

  proxy.failing.set(home, { status: 429, retryAfter: 30 });
  let before = proxy.seen.length;
  let res = await postJson(gateway, '/v1/responses', { model: 'gpt-5', input: 'And now?', previous_response_id: first.id });
  t.equal(res.status, 503);
  t.equal(res.headers.get('retry-after'), '30');
  let body = await res.json() as { error: { message: string; code: string; type: string } };
  t.equal(body.error.code, 'CONVERSATION_ACCOUNT_UNAVAILABLE');
  t.match(body.error.message, new RegExp(`^The upstream account that holds this conversation \\(${first.id}\\) is rate limited; it may return in 30 s \\(at \\d{4}-\\d\\d-\\d\\dT`));
  t.same(proxy.seen.slice(before), [home], 'only the pinned account was asked; the conversation was not sent elsewhere');

  before = proxy.seen.length;
  res = await postJson(gateway, '/v1/responses', { model: 'gpt-5', input: 'And now?', previous_response_id: first.id, stream: true });
  t.equal(res.status, 503, 'while it cools down: at once');
  t.ok(Number(res.headers.get('retry-after')) <= 30);
  t.equal(proxy.seen.length, before, 'without asking any upstream');
  const get = await fetch(`${gateway.url}/v1/responses/${first.id}`, { headers: { authorization: 'Bearer sk-pool-0001' } });
  t.equal(get.status, 503, 'reading it back is refused the same way');
  t.equal((await get.json() as { error: { code: string } }).error.code, 'CONVERSATION_ACCOUNT_UNAVAILABLE');

  // A new conversation is not affected: it goes to an account that is up.
  t.equal((await turn(gateway, 'A fresh start', undefined, false)).status, 200);
  t.not(proxy.seen.at(-1), home);

  // Another conversation's account starts refusing its credential: needs attention.
  const second = await turn(gateway, 'Remember the number 8', undefined, false);
  const home2 = proxy.seen.at(-1)!;
  proxy.failing.set(home2, { status: 401 });
  res = await postJson(gateway, '/v1/responses', { model: 'gpt-5', input: 'And now?', previous_response_id: second.id });
  t.equal(res.status, 503);
  body = await res.json() as { error: { message: string; code: string; type: string } };
  t.match(body.error.message, /needs attention from an operator \(its credential was refused\); it may return in 600 s/);

  // The account is removed from the group (reload): the conversation cannot continue here.
  writeFileSync(file, poolConfig(accounts.filter((a) => a.id !== homeId)));
  t.same(await gateway.reload(), []);
  before = proxy.seen.length;
  res = await postJson(gateway, '/v1/responses', { model: 'gpt-5', input: 'And now?', previous_response_id: first.id });
  t.equal(res.status, 409);
  body = await res.json() as { error: { message: string; code: string; type: string } };
  t.same(body.error, {
    message: `The upstream account that holds this conversation (${first.id}) is no longer available; start a new conversation without previous_response_id`,
    type: 'invalid_request_error', param: null, code: 'CONVERSATION_ACCOUNT_UNAVAILABLE',
  });
  t.equal(proxy.seen.length, before, 'nothing was sent upstream');
});
