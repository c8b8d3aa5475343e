// The Grafana dashboard and the Prometheus alert rules name only what the gateway reports: a gateway serves a few
// requests (a stream, a failover, a credential refused, a queue wait, settlements) and every metric a panel or an alert
// names is in its /metrics, with every label the expression filters or groups on. promtool (Debian package prometheus)
// checks the rules' syntax, each panel's query, and that each alert fires on the situation it describes.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, metricsText, post } from '../helpers/http.ts';
import { havePromtool, promtool } from '../helpers/promtool.ts';
import { receiver } from '../helpers/receiver.ts';
import { eventually } from '../admin/helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/gateway.json'), 'utf8'));
const ALERTS = join(ROOT, 'deploy/prometheus/alerts.yaml');
interface Rule { alert: string; expr: string; for?: string; annotations: { summary: string; description: string } }
const rules = (parse(readFileSync(ALERTS, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

interface Panel { id: number; type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; datasource?: { uid: string }; targets?: { expr: string }[] }
const panels: Panel[] = dashboard.panels;
const queries: { where: string; expr: string }[] = [
  ...panels.flatMap((p) => (p.targets ?? []).map((q) => ({ where: `panel "${p.title}"`, expr: q.expr }))),
  ...dashboard.templating.list.filter((v: { type: string }) => v.type === 'query').map((v: { name: string; definition: string }) => ({ where: `variable $${v.name}`, expr: v.definition.replace(/^label_values\((.*),\s*\w+\)$/, '$1') })),
  ...rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
];

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset']);
/** Labels Prometheus adds to every scraped series: not in /metrics, but always there to group on. */
const TARGET_LABELS = new Set(['instance', 'job']);

/** What a PromQL expression reads: each metric with the labels its matchers name, and the labels it groups by. */
function reads(expr: string): { metrics: Map<string, Set<string>>; groupBy: Set<string> } {
  const metrics = new Map<string, Set<string>>();
  const groupBy = new Set<string>();
  let rest = expr.replace(/\[[^\]]*\]/g, ''); // range selectors, $__rate_interval included
  rest = rest.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_m, _kw, labels: string) => {
    for (const l of labels.split(',').map((s) => s.trim()).filter(Boolean)) groupBy.add(l);
    return ' ';
  });
  for (const m of rest.matchAll(/([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?(\s*\()?/g)) {
    const [, name, matchers, call] = m;
    if (call || KEYWORDS.has(name)) continue;
    const labels = metrics.get(name) ?? new Set<string>();
    for (const [, label] of (matchers ?? '').matchAll(/(\w+)\s*(?:=~|!~|!=|=)\s*"/g)) labels.add(label);
    metrics.set(name, labels);
  }
  return { metrics, groupBy };
}

t.test('the dashboard: Grafana panels on the chosen data source, laid out without overlap', async (t) => {
  t.equal(dashboard.uid, 'model-gateway');
  const ids = panels.map((p) => p.id);
  t.equal(new Set(ids).size, ids.length, 'panel ids are unique');
  const cells = new Map<string, string>();
  const overlaps: string[] = [];
  for (const p of panels) {
    const { x, y, w, h } = p.gridPos;
    t.ok(x >= 0 && w > 0 && x + w <= 24, `${p.title}: within the 24 columns`);
    for (let i = x; i < x + w; i++) for (let j = y; j < y + h; j++) {
      const other = cells.get(`${i},${j}`);
      if (other) overlaps.push(`${p.title} over ${other} at ${i},${j}`);
      cells.set(`${i},${j}`, p.title);
    }
    if (p.type !== 'row') {
      t.equal(p.datasource?.uid, '${datasource}', `${p.title}: uses the data source variable`);
      t.ok(p.targets?.length, `${p.title}: has queries`);
    }
  }
  t.strictSame(overlaps, [], 'no panel covers another');
  const titles = panels.map((p) => p.title).join(' | ');
  for (const want of [/Requests/, /Errors/, /duration/, /overhead/i, /first token/, /Tokens/, /Cost/, /state/, /Failovers/, /cooling/i, /Queue/, /pending/i, /Store/]) {
    t.match(titles, want, `a panel for ${want}`);
  }
});

t.test('every metric and label the dashboard and the alerts read is in the gateway\'s /metrics', async (t) => {
  const hooks = await receiver(t);
  const gw = await withGateway(t, `
server: { host: 127.0.0.1, port: 0 }
notifications: { webhooks: [{ name: ops, url: "${hooks.url}", secret: monitoring-secret-0123456789 }] }
platforms:
  sim: { simulator: true }
groups:
  main:
    platform: sim
    models: [gpt-4o-mini]
    accounts:
      - { id: flaky, credential: "sim-fault:status=429;retry-after-ms=60000;times=1", priority: 1 }
      - { id: steady, credential: steady-credential, priority: 2 }
  attention:
    platform: sim
    models: [gpt-4o-mini]
    accounts:
      - { id: revoked, credential: "sim-fault:status=401", priority: 1 }
      - { id: spare, credential: spare-credential, priority: 2 }
  narrow:
    platform: sim
    models: [gpt-4o-mini]
    accounts:
      - { id: single, credential: single-credential, concurrency: 1 }
keys:
  - { id: main, key: sk-mon-main, group: main }
  - { id: attention, key: sk-mon-attention, group: attention }
  - { id: narrow, key: sk-mon-narrow, group: narrow }
pricing:
  gpt-4o-mini: { input: 0.15, output: 0.60 }
`);
  const chat = (key: string, stream = false, headers: Record<string, string> = {}) =>
    post(gw.url + '/v1/chat/completions', chatBody('gpt-4o-mini', 'Hello there, world!', stream ? { stream: true } : {}), { ...bearer(key), ...headers })
      .then(async (r) => { await r.text(); return r.status; });
  t.equal(await chat('sk-mon-main'), 200, 'a failover: flaky answers 429, steady serves');
  t.equal(await chat('sk-mon-main', true), 200, 'a stream');
  t.equal(await chat('sk-mon-attention'), 200, 'a credential refused (401), the spare serves');
  const slow = { 'x-simulator-chunk-delay-ms': '100' };
  t.same(await Promise.all([chat('sk-mon-narrow', true, slow), chat('sk-mon-narrow', true, slow)]), [200, 200], 'one waited for the single slot');
  t.equal(await chat('sk-nobody'), 401, 'a refusal');

  // The refused credential's account.attention reaches the webhook: its delivery is counted.
  const scrape = await eventually(() => metricsText(gw.url), (text) => text.includes('gateway_webhook_deliveries_total{'));
  const series = new Map<string, Set<string>>();
  for (const line of scrape.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? /.exec(line);
    if (!m) continue;
    const labels = series.get(m[1]) ?? new Set<string>();
    for (const [, label] of (m[2] ?? '').matchAll(/(\w+)="/g)) labels.add(label);
    series.set(m[1], labels);
  }
  let named = 0;
  for (const { where, expr } of queries) {
    const { metrics, groupBy } = reads(expr);
    t.ok(metrics.size > 0, `${where}: reads a metric`);
    const available = new Set([...TARGET_LABELS]);
    for (const [name, labels] of metrics) {
      named++;
      t.ok(series.has(name), `${where}: ${name} is in /metrics`);
      for (const l of series.get(name) ?? []) available.add(l);
      for (const l of labels) t.ok(series.get(name)?.has(l), `${where}: ${name} has the label ${l}`);
    }
    for (const l of groupBy) t.ok(available.has(l), `${where}: grouped by ${l}, a label of what it reads`);
  }
  t.ok(named >= 30, `${named} metric reads checked`);
  t.match(scrape, /^gateway_queue_wait_seconds_count\{group="narrow"\} 1$/m, 'the queue wait was observed');
  t.match(scrape, /^gateway_failovers_total\{group="main",reason="rate_limited"\} 1$/m);
  t.match(scrape, /^gateway_ttft_seconds_count\{route="\/v1\/chat\/completions",group="main",model="gpt-4o-mini"\} 1$/m, 'the stream\'s time to first token');
});

t.test('promtool: the alert rules and every panel query are valid', async (t) => {
  if (!havePromtool(t)) return;
  const checked = promtool(['check', 'rules', ALERTS]);
  t.equal(checked.status, 0, checked.stdout + checked.stderr);
  t.match(checked.stdout, `SUCCESS: ${rules.length} rules found`);
  // Panel queries, with Grafana's variables filled in as Grafana would, checked as recording rules.
  const panelRules = queries.filter((q) => q.where.startsWith('panel')).map((q, i) => ({
    record: `panel:${i}`, expr: q.expr.replaceAll('$__rate_interval', '5m').replaceAll('$group', '.*'),
  }));
  const file = join(mkdtempSync(join(tmpdir(), 'gw-promql-')), 'panels.yaml');
  writeFileSync(file, stringify({ groups: [{ name: 'panels', rules: panelRules }] }));
  const panelsChecked = promtool(['check', 'rules', file]);
  t.equal(panelsChecked.status, 0, panelsChecked.stdout + panelsChecked.stderr);
  t.match(panelsChecked.stdout, `SUCCESS: ${panelRules.length} rules found`);
});

t.test('promtool test rules: each alert fires on its situation and stays quiet on a healthy gateway', async (t) => {
  if (!havePromtool(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'gw-alerts-'));
  const g = 'instance="gw-1:8080",job="gateway"';
  const state = (account: string, s: string, series: string) => ({ series: `gateway_account_state{${g},group="main",account="${account}",state="${s}"}`, values: series });
  // 30 minutes at 1 m steps: healthy for 10 m, then each situation for the rest.
  const healthyThen = (healthy: number, bad: number) => `${healthy}x10 ${bad}x20`;
  const tests = [{
    interval: '1m',
    input_series: [
      // 1 request/s, of which 10% fail with 5xx after minute 10 (the counters grow per minute by 60 and by 0, then 6).
      { series: `gateway_requests_total{${g},route="/v1/chat/completions",status_class="2xx"}`, values: '0+60x30' },
      { series: `gateway_requests_total{${g},route="/v1/chat/completions",status_class="5xx"}`, values: '0x10 0+6x20' },
      // Overhead: 100 requests a minute, all under 5 ms, then all between 100 ms and 250 ms.
      { series: `gateway_overhead_seconds_bucket{${g},le="0.005"}`, values: '0+100x10 1000x20' },
      { series: `gateway_overhead_seconds_bucket{${g},le="0.1"}`, values: '0+100x10 1000x20' },
      { series: `gateway_overhead_seconds_bucket{${g},le="0.25"}`, values: '0+100x30' },
      { series: `gateway_overhead_seconds_bucket{${g},le="+Inf"}`, values: '0+100x30' },
      // Account a needs attention from minute 10; both accounts cool down from minute 10 (no account available).
      state('a', 'available', healthyThen(1, 0)), state('a', 'cooling', '0x30'), state('a', 'needs_attention', healthyThen(0, 1)),
      state('b', 'available', healthyThen(1, 0)), state('b', 'cooling', healthyThen(0, 1)), state('b', 'needs_attention', '0x30'),
      { series: `gateway_settlements_pending{${g}}`, values: healthyThen(0, 42) },
      { series: `gateway_store_available{${g}}`, values: healthyThen(1, 0) },
      // A webhook delivers, then fails once a minute from minute 10.
      { series: `gateway_webhook_deliveries_total{${g},hook="ops",event="key.quota",result="sent"}`, values: '0+1x10 10x20' },
      { series: `gateway_webhook_deliveries_total{${g},hook="ops",event="key.quota",result="failed"}`, values: '0x10 0+1x20' },
    ],
    alert_rule_test: [
      ...rules.map((r) => ({ eval_time: '9m', alertname: r.alert, exp_alerts: [] })),
      ...rules.map((r) => ({ eval_time: '29m', alertname: r.alert, exp_alerts: expected[r.alert] })),
    ],
  }];
  writeFileSync(join(dir, 'alerts.test.yaml'), stringify({ rule_files: [ALERTS], evaluation_interval: '1m', tests }));
  const tested = promtool(['test', 'rules', 'alerts.test.yaml'], dir);
  t.equal(tested.status, 0, tested.stdout + tested.stderr);
  t.match(tested.stdout, 'SUCCESS');
});

/** The alerts the situation of the rule test above must raise: labels, and the summary as rendered (descriptions are the file's). */
const target = { instance: 'gw-1:8080' };
const raised: Record<string, [Record<string, string>, string]> = {
  GatewayHighErrorRatio: [{ severity: 'critical', route: '/v1/chat/completions' }, '/v1/chat/completions: 9.091% of answers are 5xx'],
  GatewayOverheadHigh: [{ severity: 'warning' }, 'Gateway overhead p99 is 248.5ms'],
  GatewayAccountNeedsAttention: [{ severity: 'warning', group: 'main', account: 'a' }, 'Account a of group main was refused (401/403)'],
  GatewayGroupUnavailable: [{ severity: 'critical', group: 'main' }, 'No account of group main is available'],
  GatewaySettlementsPending: [{ severity: 'warning', ...target }, 'gw-1:8080 holds 42 settlements the store has not taken'],
  GatewayStoreUnavailable: [{ severity: 'critical', ...target }, 'gw-1:8080 cannot reach its store'],
  GatewayWebhookFailing: [{ severity: 'warning', hook: 'ops' }, 'Webhook ops is not delivering'],
};
const expected = Object.fromEntries(rules.map((r) => {
  const [labels, summary] = raised[r.alert];
  return [r.alert, [{ exp_labels: labels, exp_annotations: { summary, description: r.annotations.description } }]];
}));
