// The OpenAI models list on the simulator.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { AUTH } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

t.test('GET /v1/models lists the fixed catalogue', async (t) => {
  const res = await fetch(sim.url + '/v1/models', { headers: AUTH });
  t.equal(res.status, 200);
  const body = await res.json();
  t.equal(body.object, 'list');
  const ids = body.data.map((m: { id: string }) => m.id);
  for (const id of ['gpt-4o-mini', 'gpt-4o', 'gpt-5', 'gpt-5-mini', 'gpt-image-1']) t.ok(ids.includes(id), id);
  for (const model of body.data) {
    t.same(Object.keys(model).sort(), ['created', 'id', 'object', 'owned_by']);
    t.equal(model.object, 'model');
    t.type(model.created, 'number');
    t.equal(model.owned_by, 'system');
  }
});

t.test('GET /v1/models/{id} returns one model or a 404', async (t) => {
  const found = await fetch(sim.url + '/v1/models/gpt-4o-mini', { headers: AUTH });
  t.equal(found.status, 200);
  t.same(await found.json(), { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' });

  const missing = await fetch(sim.url + '/v1/models/no-such-model', { headers: AUTH });
  t.equal(missing.status, 404);
  t.same(await missing.json(), {
    error: { message: "The model 'no-such-model' does not exist", type: 'invalid_request_error', param: 'model', code: 'model_not_found' },
  });
});

t.test('the models list needs a credential too', async (t) => {
  const res = await fetch(sim.url + '/v1/models');
  t.equal(res.status, 401);
});
