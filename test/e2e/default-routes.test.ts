// An operator's gateway.yaml of only platforms, groups, keys and prices serves every route of the defaults file: each
// default route's method and path gets an answer of its own stages (an answer, a refusal, a 503 of the admin API left
// off), never the router's 404 or 405.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { defaults } from '../../app/registry.ts';
import { withGateway } from '../helpers/gateway.ts';

const KEY = 'sk-operator-0001';
const gw = await withGateway(t, `
platforms:
  sim: { simulator: true }
groups:
  main: { platform: sim, models: ["*"], accounts: [{ id: operator-1, credential: operator-credential-1 }] }
keys:
  - { id: operator, key: ${KEY}, group: main }
pricing:
  gpt-4o-mini: { input: 0.15, output: 0.60 }
`);

interface Route { method: string; path: string; params?: Record<string, string> }
const routes = (parse(readFileSync(defaults, 'utf8')) as { routes: Route[] }).routes;

/** A concrete path for a route's pattern: a model name where a model goes, an id-like value elsewhere. */
function concrete(route: Route): string {
  return route.path.replace(/\{(\w+)\*?\}|\*(\w+)/g, (_m, one?: string, rest?: string) => {
    const name = (one ?? rest)!;
    const value = name === 'model' ? 'gpt-4o-mini' : 'resp_0123';
    const rule = route.params?.[name];
    // A value the route's own rule refuses would be a 404 of its making, not the router's miss this test looks for.
    if (rule && !new RegExp(`^(?:${rule})$`).test(value)) throw new Error(`${route.path}: no sample value for {${name}} matching ${rule}`);
    return value;
  });
}

t.test('the file declares no route, and the gateway serves every default route', async (t) => {
  t.equal(gw.config().routes.length, routes.length, `${routes.length} routes`);
  t.ok(routes.length > 50);
});

t.test('each default route answers from its own stages, not the router\'s 404 or 405', async (t) => {
  const miss = await fetch(gw.url + '/v1/not-a-route', { method: 'POST', headers: { authorization: `Bearer ${KEY}` } });
  t.equal(miss.status, 404);
  t.match(await miss.text(), /No route for/, 'a path no route declares: the router\'s miss, as the checks below tell it');
  for (const route of routes) {
    const path = concrete(route);
    const res = await fetch(gw.url + path, {
      method: route.method,
      headers: { authorization: `Bearer ${KEY}`, 'x-goog-api-key': KEY, 'x-api-key': KEY, 'content-type': 'application/json' },
      body: route.method === 'GET' || route.method === 'DELETE' ? undefined : JSON.stringify({ model: 'gpt-4o-mini' }),
    });
    const body = await res.text();
    t.not(res.status, 405, `${route.method} ${path}: not 405`);
    t.notMatch(body, /No route for/, `${route.method} ${path}: ${res.status}, not the router's miss`);
  }
});
