// deploy/kubernetes's Redis (StatefulSet, Service, NetworkPolicy) and its Ingress example, without a cluster: the
// gateway's REDIS_URL reaches the Service, the Service the pod, the password comes from the generated Secret, the data
// sits on a claimed volume, only the gateway's pods may connect; the Ingress reaches the gateway's Service and lets a
// stream stay idle 15 minutes, unbuffered, with the gateway's own body limit. kubectl kustomize builds the example with
// the rest (where kubectl is installed).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { parseBytes } from '../../core/config-sections.ts';
import { DIR, kustomization, kustomize, one, secretKeys, yamlDocs } from '../helpers/kubernetes.ts';

const deployment = one('Deployment');
const gateway = deployment.spec.template.spec.containers[0];
const statefulSet = one('StatefulSet', 'redis');
const redisPod = statefulSet.spec.template.spec;
const redis = redisPod.containers[0];
const service = one('Service', 'redis');
const EXAMPLE = 'examples/ingress-nginx.yaml';
const [ingress] = yamlDocs(join(DIR, EXAMPLE));

t.test('the gateway\'s REDIS_URL names the Redis Service and its port', async (t) => {
  const url = new URL(gateway.env.find((e: { name: string }) => e.name === 'REDIS_URL').value);
  t.equal(url.protocol, 'redis:');
  t.equal(url.hostname, service.metadata.name, 'the Service');
  t.equal(Number(url.port), service.spec.ports[0].port, 'its port');
  t.equal(url.password, '$(REDIS_PASSWORD)', 'the password the Secret gives');
  t.ok(secretKeys.includes('REDIS_PASSWORD'));
});

t.test('the Service selects the StatefulSet\'s pod on the container\'s port', async (t) => {
  t.equal(statefulSet.spec.serviceName, service.metadata.name, 'the StatefulSet\'s governing Service');
  t.equal(service.spec.clusterIP, 'None', 'headless: `redis` is the pod itself');
  t.match(statefulSet.spec.template.metadata.labels, service.spec.selector);
  t.strictSame(statefulSet.spec.selector.matchLabels, service.spec.selector);
  const port = redis.ports.find((p: { name: string }) => p.name === service.spec.ports[0].targetPort);
  t.equal(port?.containerPort, 6379, 'the target port is the container\'s');
  t.equal(statefulSet.spec.replicas, 1, 'one server');
});

t.test('Redis: the password from the generated Secret (refusing an empty one), an append-only file on a claimed volume, no eviction', async (t) => {
  const script = redis.command.join(' ');
  t.match(redis.command.slice(0, 2), ['sh', '-c']);
  t.match(script, /test -n "\$REDIS_PASSWORD" \|\| \{[^}]*exit 1; \}/, 'an empty password stops the start');
  t.match(script, /exec docker-entrypoint\.sh redis-server .*--requirepass "\$REDIS_PASSWORD"/, 'the password, by the image\'s entrypoint');
  t.match(script, /--appendonly yes/);
  t.match(script, /--maxmemory-policy noeviction/, 'the gateway\'s state is never evicted');
  const password = redis.env.find((e: { name: string }) => e.name === 'REDIS_PASSWORD');
  t.strictSame(password.valueFrom.secretKeyRef, { name: kustomization.secretGenerator![0].name, key: 'REDIS_PASSWORD' });
  t.equal(redis.env.find((e: { name: string }) => e.name === 'REDISCLI_AUTH')?.value, '$(REDIS_PASSWORD)', 'redis-cli in the probes authenticates');
  for (const probe of [redis.readinessProbe, redis.livenessProbe]) t.match(probe.exec.command.join(' '), /redis-cli ping \| grep -q PONG/);
  const claim = statefulSet.spec.volumeClaimTemplates[0];
  t.ok(redis.volumeMounts.some((m: { name: string; mountPath: string }) => m.name === claim.metadata.name && m.mountPath === '/data'), 'the claim holds /data');
  t.ok(claim.spec.resources.requests.storage, `storage ${claim.spec.resources.requests.storage}`);
  t.equal(redisPod.securityContext.runAsNonRoot, true);
  t.equal(redisPod.securityContext.fsGroup, redisPod.securityContext.runAsUser, 'the volume is writable by the user Redis runs as');
  t.equal(redis.securityContext.readOnlyRootFilesystem, true);
  t.ok(redis.resources.limits.memory, 'a memory limit');
});

t.test('the NetworkPolicy lets only the gateway\'s pods reach Redis', async (t) => {
  const policy = one('NetworkPolicy', 'redis');
  t.strictSame(policy.spec.podSelector.matchLabels, service.spec.selector, 'it covers the Redis pod');
  t.strictSame(policy.spec.policyTypes, ['Ingress']);
  t.equal(policy.spec.ingress.length, 1);
  const [rule] = policy.spec.ingress;
  t.strictSame(rule.from.map((f: any) => f.podSelector.matchLabels), [deployment.spec.selector.matchLabels], 'from the gateway\'s pods only');
  t.strictSame(rule.ports, [{ port: 6379, protocol: 'TCP' }]);
});

t.test('the Ingress example: to the gateway\'s Service, 900 s idle, no buffering, the gateway\'s body limit', async (t) => {
  t.equal(ingress.kind, 'Ingress');
  t.notOk(kustomization.resources.includes(EXAMPLE), 'an example: not applied by kubectl apply -k');
  const gatewayService = one('Service', 'model-gateway');
  const backends = ingress.spec.rules.flatMap((r: any) => r.http.paths.map((p: any) => p.backend.service));
  t.ok(backends.length > 0);
  for (const b of backends) {
    t.equal(b.name, gatewayService.metadata.name);
    t.ok(gatewayService.spec.ports.some((p: { name: string }) => p.name === b.port.name), `port ${b.port.name} is the Service's`);
  }
  const a = ingress.metadata.annotations!;
  const nginx = (name: string) => a[`nginx.ingress.kubernetes.io/${name}`];
  t.ok(Number(nginx('proxy-read-timeout')) >= 900, `read timeout ${nginx('proxy-read-timeout')} s`);
  t.ok(Number(nginx('proxy-send-timeout')) >= 900, `send timeout ${nginx('proxy-send-timeout')} s`);
  t.equal(nginx('proxy-buffering'), 'off', 'events pass as they come');
  t.equal(nginx('proxy-request-buffering'), 'off');
  const configMap = one('ConfigMap');
  const limit = (parse(configMap.data['gateway.yaml']) as { server: { body_limit: string } }).server.body_limit;
  const size = /^(\d+)m$/.exec(nginx('proxy-body-size'))!;
  t.equal(Number(size[1]) * 1024 ** 2, parseBytes(limit), `nginx passes what the gateway takes (${limit}), so the gateway answers in the client's format`);
  t.ok(ingress.spec.tls?.length, 'TLS');
});

t.test('kubectl kustomize builds the example with the rest (where kubectl is installed)', async (t) => {
  const text = readFileSync(join(DIR, 'kustomization.yaml'), 'utf8').replace(/^resources:\n/m, `resources:\n  - ${EXAMPLE}\n`);
  const built = kustomize(Object.fromEntries(secretKeys.map((k) => [k, 'x'])), { 'kustomization.yaml': text });
  if (built.error) return t.plan(0, `kubectl not found (${(built.error as NodeJS.ErrnoException).code}): kustomize build not run`);
  t.equal(built.status, 0, built.stderr);
  const out = built.objects();
  t.ok(out.some((o) => o.kind === 'Ingress' && o.metadata.name === ingress.metadata.name), 'the Ingress is among them');
  t.equal(out.length, kustomization.resources.flatMap((f) => yamlDocs(join(DIR, f))).length + 2, 'with everything else and the Secret');
});
