// Invented model names through a real gateway (hardening II, item 1): a glob allow-list admits any name, and 2 000 of them
// must leave /metrics, the store's per-model rollups, /v1/usage's model_stats, the gateway-wide rollups and the log
// bounded, while the model the configuration names keeps its own label and rows. Run on the file store and on Redis.
import type { Test } from 'tap';
import { MODEL_ROWS, OTHER_MODEL } from '../../core/store/rollup.ts';
import { withLoggedGateway, writeConfig } from '../helpers/gateway.ts';
import { bearer, chatBody, metricsText, metricValue, post } from '../helpers/http.ts';
import { ADMIN, eventually } from '../admin/helpers.ts';

const KEY = 'sk-inventor-0001';
export const INVENTED = 2000;
const REFUSED = 100;
const KNOWN = 'gpt-4o-mini';

const config = (store: string) => `
server: { host: 127.0.0.1, port: 0 }
${store}
admin: { token: "${ADMIN}" }
platforms:
  sim: { simulator: true }
groups:
  main:
    platform: sim
    models: [${KNOWN}, "gpt-*"]
    accounts:
      - { id: sim-1, credential: upstream-credential-1, concurrency: 64 }
keys:
  - { id: inventor, key: ${KEY}, group: main }
pricing:
  ${KNOWN}: { input: 0.15, output: 0.60 }
`;

/** Sends one request per model, `width` at a time; returns how many got each status. */
async function send(url: string, models: string[], headers: Record<string, string> = {}, width = 16): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < models.length) {
      const res = await post(`${url}/v1/chat/completions`, chatBody(models[next++], 'hi'), { ...bearer(KEY), ...headers });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  }));
  return statuses;
}

interface Row { model: string; requests: number }

/**
 * `store` is the config's store line; `rollupModels` reads the distinct model names of the key's per-model rollups of
 * today (UTC) from the store itself.
 */
export async function inventedModelsSuite(tap: Test, store: string, rollupModels: () => Promise<string[]>): Promise<void> {
  await tap.test(`${INVENTED} invented model names leave every per-model table bounded`, async (t) => {
    const { gateway, lines } = await withLoggedGateway(t, writeConfig(config(store)));
    const url = gateway.url;
    const tag = Math.random().toString(36).slice(2, 8);
    const invented = Array.from({ length: INVENTED }, (_, i) => `gpt-inv-${tag}-${i}`);
    const refused = Array.from({ length: REFUSED }, (_, i) => `gpt-refused-${tag}-${i}`);

    t.same(await send(url, Array(10).fill(KNOWN)), { 200: 10 }, 'the known model, before');
    const metricsBefore = (await metricsText(url)).length;
    t.same(await send(url, invented), { 200: INVENTED }, `${INVENTED} invented names, each admitted by the glob and answered`);
    t.same(await send(url, refused, { 'x-simulator-fault': 'status=400' }), { 400: REFUSED }, `${REFUSED} more, refused by the upstream`);
    t.same(await send(url, Array(10).fill(KNOWN)), { 200: 10 }, 'the known model, after');
    const total = 20 + INVENTED + REFUSED;

    await t.test('/metrics: one `other` series for every invented name', async (t) => {
      const series = (text: string, model: string, cls: string) => metricValue(text,
        `gateway_requests_total{route="/v1/chat/completions",format="openai-chat",platform="sim",group="main",model="${model}",status_class="${cls}"}`);
      // A request is counted once its answer has gone out, which may be just after the client read it.
      const text = await eventually(() => metricsText(url), (s) => series(s, KNOWN, '2xx') === 20, 5000);
      t.ok(text.length - metricsBefore < 32_768, `/metrics grew ${text.length - metricsBefore} bytes (under 32 KB)`);
      t.notOk(text.includes(`-${tag}-`), 'no series names an invented model');
      t.equal(series(text, OTHER_MODEL, '2xx'), INVENTED, 'the answered ones under other');
      t.equal(series(text, OTHER_MODEL, '4xx'), REFUSED, 'the refused ones too');
      t.equal(series(text, KNOWN, '2xx'), 20, 'the known model keeps its own label');
      t.equal(metricValue(text, `gateway_unpriced_requests_total{model="${OTHER_MODEL}"}`), INVENTED, 'every unpriced request is counted');
    });

    await t.test('the log: the unpriced warning is rate-limited', async (t) => {
      const warnings = lines.filter((l) => l.msg.startsWith('model has no price'));
      t.ok(warnings.length >= 1 && warnings.length <= 2, `${warnings.length} warning lines for ${INVENTED} unpriced names (one a minute)`);
      t.match(warnings[0], { unknown_model: true, unsaid: 0 });
      t.equal(lines.filter((l) => l.msg !== 'request' && String(l.model ?? '').includes(tag)).length, warnings.length, 'no other line names an invented model');
    });

    await t.test('/v1/usage: the top models and one other row, known ones kept', async (t) => {
      const res = await fetch(`${url}/v1/usage`, { headers: bearer(KEY) });
      const text = await res.text();
      const rows = (JSON.parse(text) as { model_stats: Row[] }).model_stats;
      t.ok(text.length < 40_000, `${text.length} bytes (under 40 KB)`);
      t.equal(rows.length, MODEL_ROWS + 1, `${MODEL_ROWS} models and other`);
      t.match(rows[0], { model: KNOWN, requests: 20 }, 'the known model first, with all its requests');
      t.equal(rows.at(-1)!.model, OTHER_MODEL, 'other last');
      t.equal(rows.reduce((n, r) => n + r.requests, 0), total, 'every request counted once');
      t.notOk(rows.some((r) => r.model.startsWith('gpt-refused-')), 'no row for a name the upstream refused');
    });

    await t.test('the store: the key\'s per-model rollups and the gateway-wide ones are bounded', async (t) => {
      const names = await eventually(rollupModels, (n) => n.length >= MODEL_ROWS + 2, 3000);
      t.equal(names.length, MODEL_ROWS + 2, `${names.length} rollup rows: ${MODEL_ROWS} invented names, the known one and other`);
      t.ok(names.includes(KNOWN) && names.includes(OTHER_MODEL));
      t.notOk(names.some((n) => n.startsWith('gpt-refused-')), 'a refused name has no rollup of its own');

      const summary = await fetch(`${url}/admin/usage/summary?window=1h&by=model&top=50`, { headers: bearer(ADMIN) });
      const series = (await summary.json() as { series: { name: string; other?: true }[] }).series;
      const more = Number(/^(\d+) more$/.exec(series.find((s) => s.other)?.name ?? '0 more')![1]);
      t.equal(series.filter((s) => !s.other).length + more, MODEL_ROWS + 2, 'the gateway-wide rollups hold as many models');
    });

    await t.test('the records keep each name', async (t) => {
      const res = await fetch(`${url}/admin/usage?key=inventor&model=${refused[7]}`, { headers: bearer(ADMIN) });
      const { records } = await res.json() as { records: { model: string; status: number; rollup_model?: string }[] };
      t.match(records, [{ model: refused[7], status: 400, rollup_model: OTHER_MODEL }], 'a refused request is recorded under its name, rolled up as other');
    });
  });
}
