// deploy/kubernetes without a cluster: kustomize builds it (when kubectl is here), the objects refer to each other
// rightly (labels, ports, probes, config mount, Secret, HPA target, drain timing), and the ConfigMap's gateway.yaml is
// valid, keeps the shipped entry points, names only variables the pod has, and serves on Redis.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { createLogger } from '../../core/log.ts';
import { startGateway } from '../../app/gateway.ts';
import { ADMIN, admin } from '../admin/helpers.ts';
import { writeConfig } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { redisForTest } from '../store/redis-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIR = join(ROOT, 'deploy/kubernetes');
type Obj = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [k: string]: any };

const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();
const objects: Obj[] = files.filter((f) => f !== 'kustomization.yaml')
  .flatMap((f) => parseAllDocuments(readFileSync(join(DIR, f), 'utf8')).map((d) => d.toJS() as Obj));
const one = (kind: string): Obj => {
  const found = objects.filter((o) => o.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0];
};
const deployment = one('Deployment');
const pod = deployment.spec.template.spec;
const container = pod.containers[0];
const configMap = one('ConfigMap');
const secret = one('Secret');
const GATEWAY_YAML = configMap.data['gateway.yaml'] as string;

t.test('the kustomization lists every manifest', async (t) => {
  const kustomization = parse(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  t.strictSame([...kustomization.resources].sort(), files.filter((f) => f !== 'kustomization.yaml'));
  t.strictSame(objects.map((o) => o.kind).sort(), ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Secret', 'Service']);
});

t.test('kubectl kustomize builds them (where kubectl is installed)', async (t) => {
  const kubectl = spawnSync('kubectl', ['kustomize', DIR], { encoding: 'utf8', timeout: 30_000 });
  if (kubectl.error) return t.plan(0, `kubectl not found (${(kubectl.error as NodeJS.ErrnoException).code}): kustomize build not run`);
  t.equal(kubectl.status, 0, kubectl.stderr);
  const built = parseAllDocuments(kubectl.stdout).map((d) => d.toJS() as Obj);
  t.strictSame(built.map((o) => `${o.kind}/${o.metadata.name}`).sort(), objects.map((o) => `${o.kind}/${o.metadata.name}`).sort());
  t.ok(built.every((o) => o.metadata.labels?.['app.kubernetes.io/part-of'] === 'model-gateway'), 'common label added');
});

t.test('the Deployment: probes, preStop and drain timing, resources, non-root, its config and Secret', async (t) => {
  const labels = deployment.spec.template.metadata.labels;
  t.match(labels, deployment.spec.selector.matchLabels, 'the selector picks the pods');
  const http = container.ports.find((p: { name: string }) => p.name === 'http');
  t.equal(http.containerPort, 8080);
  t.match(container.readinessProbe.httpGet, { path: '/readyz', port: 'http' }, 'ready: /readyz (503 while draining)');
  t.match(container.livenessProbe.httpGet, { path: '/healthz', port: 'http' }, 'alive: /healthz');
  const [sleep, seconds] = container.lifecycle.preStop.exec.command;
  t.equal(sleep, 'sleep');
  t.ok(pod.terminationGracePeriodSeconds > Number(seconds) + 10, 'the grace period covers preStop and the 10 s drain');
  t.ok(container.resources.requests.cpu && container.resources.requests.memory, 'CPU and memory requested');
  t.equal(pod.securityContext.runAsNonRoot, true);
  t.equal(pod.securityContext.runAsUser, 1000, 'the image\'s node user');
  t.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0);

  const [flag, path] = container.args;
  t.equal(flag, '--config');
  const mount = container.volumeMounts.find((m: { mountPath: string }) => path === `${m.mountPath}/gateway.yaml`);
  t.ok(mount, `${path} is a mounted file`);
  const volume = pod.volumes.find((v: { name: string }) => v.name === mount.name);
  t.equal(volume.configMap.name, configMap.metadata.name, 'from the ConfigMap');
  t.ok(container.volumeMounts.some((m: { mountPath: string }) => m.mountPath === '/app/data'), 'the data folder is writable');
  t.equal(container.envFrom[0].secretRef.name, secret.metadata.name, 'credentials from the Secret');
});

t.test('the Service and the HPA point at the Deployment', async (t) => {
  const service = one('Service');
  t.match(deployment.spec.template.metadata.labels, service.spec.selector);
  t.equal(service.spec.ports[0].targetPort, 'http');
  const hpa = one('HorizontalPodAutoscaler');
  t.match(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
  t.ok(hpa.spec.minReplicas >= 2 && hpa.spec.maxReplicas > hpa.spec.minReplicas);
});

t.test('the ConfigMap\'s gateway.yaml: every variable without a default is given to the pod', async (t) => {
  const given = new Set([...Object.keys(secret.stringData), ...container.env.map((e: { name: string }) => e.name)]);
  const required = [...GATEWAY_YAML.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]);
  t.strictSame(required, ['REDIS_URL'], 'only REDIS_URL is required');
  t.strictSame(required.filter((v) => !given.has(v)), []);
  for (const [, name] of GATEWAY_YAML.matchAll(/\$\{(\w+):-/g)) t.ok(given.has(name) || name === 'REDIS_PREFIX', `${name} is in the Secret or env`);
  t.notMatch(GATEWAY_YAML, /simulator|sk-demo/, 'no demo platform or key');
});

t.test('the ConfigMap\'s routes are the shipped ones, less the demo pool', async (t) => {
  type Route = { method: string; path: string; format: string; upstream_path?: string; pool?: string };
  const key = (r: Route) => `${r.method} ${r.path} ${r.format} ${r.upstream_path ?? ''}`;
  const mine = (parse(GATEWAY_YAML) as { routes: Route[] }).routes.map(key);
  const shipped = (parse(readFileSync(join(ROOT, 'gateway.yaml'), 'utf8')) as { routes: Route[] }).routes;
  t.strictSame(mine, shipped.filter((r) => !r.pool && !r.path.startsWith('/antigravity/')).map(key));
});

t.test('the ConfigMap\'s gateway.yaml serves on Redis: pages, the admin API, an issued key, the relay chain', async (t) => {
  const redis = await redisForTest(t, 'k8s-config');
  const gw = await startGateway({
    configFile: writeConfig(GATEWAY_YAML), host: '127.0.0.1', port: 0, log: createLogger('silent'),
    env: { REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix, GATEWAY_ADMIN_TOKEN: ADMIN },
  });
  t.teardown(() => gw.close());
  t.equal(gw.config().store.redis, redis.url);
  for (const path of ['/', '/console', '/key-usage', '/docs']) t.equal((await fetch(gw.url + path)).status, 200, path);
  const made = await admin(gw, 'POST', '/admin/keys', { group: 'openai' });
  t.equal(made.status, 201);
  const models = await (await fetch(gw.url + '/v1/models', { headers: bearer(made.body.key) })).json() as { data: { id: string }[] };
  t.strictSame(models.data.map((m) => m.id).sort(), ['gpt-4o', 'gpt-4o-mini', 'gpt-image-1']);
  // No vendor credential here: the account is disabled, so the chain ends in the pool without calling out.
  const chat = await post(gw.url + '/v1/chat/completions', chatBody(), bearer(made.body.key));
  t.equal(chat.status, 503);
  t.equal((await chat.json() as { error: { code: string } }).error.code, 'NO_ACCOUNT_AVAILABLE');
});
