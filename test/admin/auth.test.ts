// The admin API's guard: admin token only (Bearer), model keys refused with their own message, disabled without a token.
import t, { type Test } from 'tap';
import { withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { ADMIN, admin, adminConfig, issue } from './helpers.ts';

const gw = await withGateway(t, adminConfig());

const ROUTES: [string, string, unknown?][] = [
  ['POST', '/admin/keys', { group: 'main' }], ['GET', '/admin/keys'], ['GET', '/admin/keys/alice'],
  ['PATCH', '/admin/keys/alice', { name: 'x' }], ['DELETE', '/admin/keys/alice'], ['GET', '/admin/keys/alice/usage'], ['GET', '/admin/usage'],
];

/** The gateway format's envelope: exactly {error:{code,message,type}}. */
function expectError(t: Test, res: { status: number; body: any }, status: number, code: string, type: string) {
  t.equal(res.status, status, `${code}: status ${status}`);
  t.same(Object.keys(res.body), ['error']);
  t.same(Object.keys(res.body.error).sort(), ['code', 'message', 'type']);
  t.equal(res.body.error.code, code);
  t.equal(res.body.error.type, type);
  return res.body.error.message as string;
}

t.test('missing, malformed or wrong token: 401 on every admin route, nothing changes', async (t) => {
  for (const [method, path, body] of ROUTES) {
    expectError(t, await admin(gw, method, path, body, null), 401, 'ADMIN_TOKEN_REQUIRED', 'authentication_error');
    expectError(t, await admin(gw, method, path, body, ADMIN + 'x'), 401, 'INVALID_ADMIN_TOKEN', 'authentication_error');
  }
  const basic = await fetch(gw.url + '/admin/keys', { headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN}`).toString('base64')}` } });
  t.equal(basic.status, 401, 'only the Bearer scheme carries the token');
  const viaKeyHeader = await fetch(gw.url + '/admin/keys', { headers: { 'x-api-key': ADMIN } });
  t.equal(viaKeyHeader.status, 401, 'x-api-key is not read by the admin API');
  const list = await admin(gw, 'GET', '/admin/keys');
  t.equal(list.status, 200, 'the right token passes');
  t.same(list.body.keys.filter((k: any) => k.source === 'store'), [], 'no refused POST issued a key');
  t.equal(list.body.keys.find((k: any) => k.id === 'alice').name, null, 'no refused PATCH renamed alice');
});

t.test('a model key is refused here with a message saying so (config and issued keys)', async (t) => {
  const config = expectError(t, await admin(gw, 'GET', '/admin/keys', undefined, 'sk-alice-0001'), 401, 'MODEL_KEY_REFUSED', 'authentication_error');
  t.match(config, /model api keys are refused/i);
  const { key } = await issue(gw, { group: 'main' });
  const issued = expectError(t, await admin(gw, 'GET', '/admin/usage', undefined, key), 401, 'MODEL_KEY_REFUSED', 'authentication_error');
  t.match(issued, /admin token/);
});

t.test('the admin token is refused on model routes', async (t) => {
  const res = await post(gw.url + '/v1/chat/completions', chatBody(), bearer(ADMIN));
  t.equal(res.status, 401);
  const body = await res.json() as { error: { code: string; message: string } };
  t.equal(body.error.code, 'INVALID_API_KEY');
  t.match(body.error.message, /admin token cannot be used on model routes/);
  const usage = await fetch(gw.url + '/v1/usage', { headers: bearer(ADMIN) });
  t.equal(usage.status, 401, 'nor on /v1/usage');
  t.equal(gw.simulators.sim.requests.length, 0, 'nothing reached the upstream');
});

t.test('an empty admin.token disables every admin route (503 saying so), whatever is presented', async (t) => {
  const off = await withGateway(t, adminConfig({ token: '' }));
  for (const [method, path, body] of ROUTES) {
    for (const auth of [null, '', 'sk-alice-0001']) {
      const message = expectError(t, await admin(off, method, path, body, auth), 503, 'ADMIN_API_DISABLED', 'unavailable_error');
      t.match(message, /admin API is disabled/);
    }
  }
  const res = await post(off.url + '/v1/chat/completions', chatBody(), bearer('sk-alice-0001'));
  t.equal(res.status, 200, 'model routes are unaffected');
});
