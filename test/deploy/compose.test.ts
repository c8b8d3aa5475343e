// deploy/compose.yaml without a Docker engine: two gateway replicas built from the repository's Dockerfile on their own
// ports and one Redis, Prometheus scraping both replicas with the alert rules, Grafana provisioned with the dashboard;
// each mount and reference points at a file that exists and says what the other side expects.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { havePromtool, promtool } from '../helpers/promtool.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');
const yaml = (file: string) => parse(readFileSync(file, 'utf8'), { merge: true }) as any;
const compose = yaml(join(DEPLOY, 'compose.yaml'));
const services: Record<string, any> = compose.services;
const gateways = Object.entries(services).filter(([, s]) => s.build);
const prometheus = yaml(join(DEPLOY, 'prometheus/prometheus.yml'));

/** The host path of a `./host:/container[:ro]` mount of a service whose container path is `at`. */
function mounted(service: string, at: string): string {
  const volume = (services[service].volumes as string[]).find((v) => v.split(':')[1] === at);
  if (!volume) throw new Error(`${service} mounts nothing at ${at}`);
  return resolve(DEPLOY, volume.split(':')[0]);
}

/** A published port, "HOST_IP:HOST_PORT:CONTAINER_PORT" (the address left out means every address). */
const published = (p: string) => {
  const parts = p.split(':');
  return { address: parts.length === 3 ? parts[0] : '0.0.0.0', host: parts.at(-2), container: parts.at(-1) };
};

t.test('two gateway replicas from the Dockerfile, on their own host ports, sharing Redis, with time to drain', async (t) => {
  t.equal(gateways.length, 2);
  const ports = gateways.map(([, s]) => published(s.ports[0]));
  t.equal(new Set(ports.map((p) => p.host)).size, 2, `distinct host ports: ${ports.map((p) => p.host).join(', ')}`);
  for (const [name, s] of gateways) {
    t.ok(existsSync(join(resolve(DEPLOY, s.build.context), s.build.dockerfile)), `${name}: builds the repository's Dockerfile`);
    t.equal(published(s.ports[0]).container, '8080', `${name}: to the shipped port`);
    const redis = new URL(s.environment.REDIS_URL);
    t.ok(services[redis.hostname]?.image?.startsWith('redis:'), `${name}: REDIS_URL names the redis service`);
    t.equal(s.depends_on.redis.condition, 'service_healthy');
    t.ok(parseInt(s.stop_grace_period, 10) > 10, `${name}: stop grace ${s.stop_grace_period} > the 10 s drain`);
    t.match(s.environment.GATEWAY_ADMIN_TOKEN, /^\$\{GATEWAY_ADMIN_TOKEN:\?/, `${name}: an admin token is required`);
  }
  t.ok(services.redis.healthcheck, 'redis has the health check the gateways wait on');
});

t.test('every port is published on 127.0.0.1 only; Grafana\'s admin password must be given (no admin/admin)', async (t) => {
  const all = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p: string) => [name, p]));
  t.ok(all.length >= 4, `${all.length} published ports`);
  for (const [name, p] of all) t.equal(published(p).address, '127.0.0.1', `${name}: ${p}`);
  const grafana = services.grafana.environment;
  t.match(grafana.GF_SECURITY_ADMIN_PASSWORD, /^\$\{GRAFANA_ADMIN_PASSWORD:\?[^}]+\}$/, 'compose refuses to start without GRAFANA_ADMIN_PASSWORD');
  t.notOk(Object.keys(grafana).some((k) => /ANONYMOUS_ENABLED/.test(k) && grafana[k] !== 'false'), 'no anonymous access');
  t.equal(grafana.GF_USERS_ALLOW_SIGN_UP, 'false', 'no sign-up');
});

t.test('Prometheus scrapes both replicas and loads the alert rules', async (t) => {
  const dir = mounted('prometheus', '/etc/prometheus');
  t.equal(dir, join(DEPLOY, 'prometheus'));
  const targets = prometheus.scrape_configs.flatMap((c: any) => c.static_configs.flatMap((s: any) => s.targets));
  t.strictSame(targets, gateways.map(([name]) => `${name}:8080`));
  t.strictSame(prometheus.rule_files.map((f: string) => existsSync(join(dir, f))), [true], 'the rule file is beside it');
});

t.test('Grafana: the Prometheus data source and the dashboard provisioned', async (t) => {
  const provisioning = mounted('grafana', '/etc/grafana/provisioning');
  const sources = yaml(join(provisioning, 'datasources/prometheus.yaml')).datasources;
  const url = new URL(sources[0].url);
  t.equal(sources[0].type, 'prometheus');
  t.ok(services[url.hostname], 'the data source is the compose Prometheus');
  t.ok(services.prometheus.ports.some((p: string) => p.endsWith(`:${url.port}`)), `on its port ${url.port}`);
  const provider = yaml(join(provisioning, 'dashboards/gateway.yaml')).providers[0];
  const dashboardFile = mounted('grafana', `${provider.options.path}/gateway.json`);
  t.equal(dashboardFile, join(DEPLOY, 'grafana/gateway.json'), 'the dashboard file is where the provider looks');
  t.equal(services.grafana.environment.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH, `${provider.options.path}/gateway.json`);
  const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8'));
  t.equal(dashboard.templating.list[0].query, 'prometheus', 'its data source variable picks a Prometheus');
});

t.test('promtool check config: the Prometheus config and its rules', async (t) => {
  if (!havePromtool(t)) return;
  const checked = promtool(['check', 'config', join(DEPLOY, 'prometheus/prometheus.yml')]);
  t.equal(checked.status, 0, checked.stdout + checked.stderr);
  t.match(checked.stdout, /SUCCESS: 1 rule files found/);
});
