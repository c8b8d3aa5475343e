// deploy/kubernetes without a cluster: kustomize builds it (when kubectl is installed) with the Secret generated from the
// operator's secret.env, the objects refer to each other rightly (labels, ports, probes, config mount, Secret, HPA and
// PodDisruptionBudget targets, drain timing), and the ConfigMap's gateway.yaml is valid, serves the default entry points,
// names only variables the pod has, and serves on a Redis run as redis.yaml runs it, at the URL the Deployment makes.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { createLogger } from '../../core/log.ts';
import { startGateway } from '../../app/gateway.ts';
import { parts } from '../../app/registry.ts';
import { loadConfig } from '../../core/config.ts';
import { ADMIN, admin } from '../admin/helpers.ts';
import { writeConfig } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { kustomization, kustomize, manifestFiles, objects, one, secretKeys, yamlDocs } from '../helpers/kubernetes.ts';
import { redisProcess } from '../helpers/redis-process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const deployment = one('Deployment');
const pod = deployment.spec.template.spec;
const container = pod.containers[0];
const configMap = one('ConfigMap');
const GATEWAY_YAML = configMap.data['gateway.yaml'] as string;
const SECRET = kustomization.secretGenerator![0].name;
const envValue = (name: string) => container.env.find((e: { name: string }) => e.name === name)?.value as string | undefined;

t.test('the kustomization lists every manifest; the credentials are generated from secret.env, which git ignores', async (t) => {
  t.strictSame([...kustomization.resources].sort(), manifestFiles);
  t.strictSame(objects.map((o) => o.kind).sort(),
    ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'NetworkPolicy', 'PodDisruptionBudget', 'Service', 'Service', 'StatefulSet']);
  const committed = spawnSync('git', ['-C', ROOT, 'ls-files', 'deploy'], { encoding: 'utf8' }).stdout.split('\n').filter((f) => /\.ya?ml$/.test(f));
  t.ok(committed.length > 5, `${committed.length} YAML files under deploy/`);
  t.strictSame(committed.filter((f) => yamlDocs(join(ROOT, f)).some((o) => o?.kind === 'Secret')), [], 'no Secret is committed');
  t.strictSame(kustomization.secretGenerator, [{ name: SECRET, envs: ['secret.env'] }], 'the Secret is made from secret.env');
  const ignored = spawnSync('git', ['-C', ROOT, 'check-ignore', '-q', 'deploy/kubernetes/secret.env']);
  t.equal(ignored.status, 0, 'git ignores deploy/kubernetes/secret.env');
  t.strictSame(secretKeys, ['GATEWAY_ADMIN_TOKEN', 'REDIS_PASSWORD', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY'], 'secret.env.example lists the keys');
});

t.test('kubectl kustomize builds them (where kubectl is installed), the generated Secret named wherever it is used', async (t) => {
  const values = Object.fromEntries(secretKeys.map((k) => [k, `value-of-${k.toLowerCase()}`]));
  const built = kustomize(values);
  if (built.error) return t.plan(0, `kubectl not found (${(built.error as NodeJS.ErrnoException).code}): kustomize build not run`);
  t.equal(built.status, 0, built.stderr);
  const out = built.objects();
  const secret = out.find((o) => o.kind === 'Secret')!;
  t.match(secret.metadata.name, new RegExp(`^${SECRET}-[a-z0-9]{10}$`), 'a Secret whose name carries its content\'s hash');
  t.strictSame(Object.keys(secret.data).sort(), [...secretKeys].sort());
  t.equal(Buffer.from(secret.data.REDIS_PASSWORD, 'base64').toString(), values.REDIS_PASSWORD);
  t.strictSame(out.filter((o) => o.kind !== 'Secret').map((o) => `${o.kind}/${o.metadata.name}`).sort(), objects.map((o) => `${o.kind}/${o.metadata.name}`).sort());
  t.ok(out.every((o) => o.metadata.labels?.['app.kubernetes.io/part-of'] === 'model-gateway'), 'common label added');
  const builtPod = (kind: string) => out.find((o) => o.kind === kind)!.spec.template.spec.containers[0];
  t.equal(builtPod('Deployment').envFrom[0].secretRef.name, secret.metadata.name, 'the gateway\'s envFrom names the generated Secret');
  const password = builtPod('StatefulSet').env.find((e: { name: string }) => e.name === 'REDIS_PASSWORD');
  t.equal(password.valueFrom.secretKeyRef.name, secret.metadata.name, 'so does Redis\'s password');
  t.notMatch(JSON.stringify(out.filter((o) => o.kind !== 'Secret')), /value-of-/, 'no secret value outside the Secret');
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
  t.equal(container.envFrom[0].secretRef.name, SECRET, 'credentials from the generated Secret');
  t.match(envValue('REDIS_URL'), /\$\(REDIS_PASSWORD\)/, 'REDIS_URL made with the Secret\'s REDIS_PASSWORD (envFrom, expanded by the kubelet)');
  const secretMount = container.volumeMounts.find((m: { name: string }) => pod.volumes.find((v: { name: string; secret?: { secretName: string } }) => v.name === m.name)?.secret?.secretName === SECRET);
  t.equal(secretMount?.readOnly, true, 'and as files, read-only, for credential_file');
  const example = /credential_file: (\S+)\/OPENAI_API_KEY_2/.exec(GATEWAY_YAML)?.[1];
  t.equal(example, secretMount?.mountPath, 'the ConfigMap\'s credential_file example names the mounted folder');
});

t.test('the Service, the HPA and the PodDisruptionBudget point at the Deployment', async (t) => {
  const service = one('Service', 'model-gateway');
  t.match(deployment.spec.template.metadata.labels, service.spec.selector);
  t.equal(service.spec.ports[0].targetPort, 'http');
  const hpa = one('HorizontalPodAutoscaler');
  t.match(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
  t.ok(hpa.spec.minReplicas >= 2 && hpa.spec.maxReplicas > hpa.spec.minReplicas);
  const pdb = one('PodDisruptionBudget');
  t.strictSame(pdb.spec.selector.matchLabels, deployment.spec.selector.matchLabels, 'the budget covers the gateway\'s pods');
  t.equal(pdb.spec.maxUnavailable, 1, 'a drain takes one replica at a time');
  t.ok(hpa.spec.minReplicas > pdb.spec.maxUnavailable, 'and one always serves');
});

t.test('the ConfigMap\'s gateway.yaml: every variable without a default is given to the pod', async (t) => {
  const given = new Set([...secretKeys, ...container.env.map((e: { name: string }) => e.name)]);
  const required = [...GATEWAY_YAML.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]);
  t.strictSame(required, ['REDIS_URL'], 'only REDIS_URL is required');
  t.strictSame(required.filter((v) => !given.has(v)), []);
  for (const [, name] of GATEWAY_YAML.matchAll(/\$\{(\w+):-/g)) t.ok(given.has(name) || name === 'REDIS_PREFIX', `${name} is in the Secret or env`);
  t.notMatch(GATEWAY_YAML, /simulator|sk-demo/, 'no demo platform or key');
});

t.test('the ConfigMap\'s gateway.yaml holds no routes or pipelines: it serves the defaults the image ships', async (t) => {
  const mine = parse(GATEWAY_YAML) as Record<string, unknown>;
  t.strictSame(Object.keys(mine).filter((k) => k === 'routes' || k === 'pipelines'), [], 'none declared');
  const { config } = loadConfig(writeConfig(GATEWAY_YAML), { ...parts, env: { REDIS_URL: 'redis://127.0.0.1:1' } });
  const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
  const defaults = (parse(readFileSync(parts.defaults!, 'utf8')) as { routes: { method: string; path: string }[] }).routes;
  t.strictSame(config.routes.map(key), defaults.map(key));
});

t.test('the ConfigMap\'s gateway.yaml serves on a Redis run as redis.yaml runs it: probes, pages, the admin API, an issued key, the relay chain', async (t) => {
  const redisContainer = one('StatefulSet', 'redis').spec.template.spec.containers[0];
  // The server's options as its command starts it, the password the Secret would give.
  const line = (redisContainer.command.at(-1) as string).split('\n').find((l) => l.startsWith('exec '))!;
  const password = 'k8s-test-redis-password-0123456789';
  const args = line.split(/\s+/).slice(line.split(/\s+/).indexOf('redis-server') + 1).map((a) => (a === '"$REDIS_PASSWORD"' ? password : a));
  t.ok(args.includes('--requirepass') && args.includes('--appendonly'), `redis-server ${args.join(' ').replace(password, '***')}`);
  const redis = await redisProcess(t, { persist: true, args, password });
  // REDIS_URL as the Deployment makes it, its host and port those of this server.
  const url = envValue('REDIS_URL')!.replace('$(REDIS_PASSWORD)', password).replace('@redis:6379', `@127.0.0.1:${redis.port}`);
  t.not(url, envValue('REDIS_URL'));
  const gw = await startGateway({
    configFile: writeConfig(GATEWAY_YAML), host: '127.0.0.1', port: 0, log: createLogger('silent'),
    env: { REDIS_URL: url, GATEWAY_ADMIN_TOKEN: ADMIN, REDIS_PASSWORD: password },
  });
  t.teardown(() => gw.close());
  t.equal(gw.config().store.redis, url);
  for (const probe of [container.readinessProbe, container.livenessProbe]) t.equal((await fetch(gw.url + probe.httpGet.path)).status, 200, `probe ${probe.httpGet.path}`);
  for (const path of ['/', '/console', '/key-usage', '/docs', '/assets/uplot.js']) t.equal((await fetch(gw.url + path)).status, 200, path);
  const made = await admin(gw, 'POST', '/admin/keys', { group: 'openai' });
  t.equal(made.status, 201);
  // No vendor credential here: the group has no enabled account, so its list is empty and says why.
  const list = await fetch(gw.url + '/v1/models', { headers: bearer(made.body.key) });
  t.equal(list.headers.get('x-gateway-warning'), 'no_enabled_account');
  t.strictSame((await list.json() as { data: unknown[] }).data, []);
  // The account is disabled, so the chain ends in the pool without calling out.
  const chat = await post(gw.url + '/v1/chat/completions', chatBody(), bearer(made.body.key));
  t.equal(chat.status, 503);
  t.equal((await chat.json() as { error: { code: string } }).error.code, 'NO_ACCOUNT_AVAILABLE');
  t.ok(await redis.query(async (r) => (await r.keys('gw:*')).length > 0), 'the issued key is in that Redis (prefix gw:)');
});
