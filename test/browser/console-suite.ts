// The console's tabs at one width (console-1280 and console-390 tests): every tab shows what the admin API answers
// (overview totals and chart data, keys, filtered records and a record's detail, accounts and a test) and nothing is cut
// off. Also the gateway with its traffic, and the helpers the console tests share. Screenshots go to .tap/screenshots/.
import type { Test } from 'tap';
import type { Browser, Page } from 'playwright-core';
import type { Gateway } from '../../app/gateway.ts';
import { withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { ADMIN, admin, chat, eventually, issue } from '../admin/helpers.ts';
import { overviewConfig } from '../admin/overview-suite.ts';
import { balance, field, openPage, overflow, screenshot, seriesInk, traces, usd, WIDTHS } from './chromium.ts';

/** A gateway with a few requests: two keys of one group, one of a group whose first account fails over, one 500. */
export async function consoleGateway(t: Test) {
  const gw = await withGateway(t, overviewConfig(''));
  const made = await issue(gw, { group: 'main', name: 'console-seen', limits: { quota_usd: 5, usd_1d: 1 } });
  for (const [key, model] of [['sk-alice-0001', 'gpt-4o-mini'], [made.key, 'gpt-5'], [made.key, 'gpt-4o-mini'], ['sk-bob-0002', 'gpt-4o-mini']]) await chat(gw, key, model);
  await (await post(gw.url + '/v1/chat/completions', chatBody(), { ...bearer('sk-alice-0001'), 'x-simulator-fault': 'status=500' })).arrayBuffer();
  const records: any[] = (await eventually(() => admin(gw, 'GET', '/admin/usage'), (r) => r.body.records.length >= 5)).body.records;
  return { gw, made, records };
}

export const cells = (page: Page, selector: string) =>
  page.$$eval(`${selector} tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent?.trim() ?? '')));
const int = (n: number) => String(Math.round(n));
const percent = (v: number) => `${(v * 100).toFixed(1)}%`;
const minute = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
/** The data a chart was drawn with: [x in seconds, ...series]. */
const chartData = (page: Page, id: string) => page.evaluate((id) => (document.getElementById(id) as any).plot?.data ?? null, id);
/** A chart's legend as the page shows it: each series' label. */
const legend = (page: Page, id: string) => page.$$eval(`#${id} .u-legend .u-series:not(:first-child) .u-label`, (cells) => cells.map((c) => c.textContent));
/** The labels of a chart's left axis as drawn. */
const yTicks = (page: Page, id: string) => page.evaluate((id) => (document.getElementById(id) as any).plot.axes[1]._values as string[], id);

export async function connect(page: Page): Promise<void> {
  await page.fill('#token', ADMIN);
  await page.click('#connect');
  await page.waitForSelector('#app:not([hidden]) [data-field="total.requests"]');
}

export async function tab(page: Page, name: string, ready: string): Promise<void> {
  await page.click(`[data-tab="${name}"]`);
  await page.waitForSelector(`#tab-${name}:not([hidden]) ${ready}`);
}

export function tabsAtWidth(t: Test, browser: Browser, gw: Gateway, made: { record: any }, records: any[], w: (typeof WIDTHS)[number]): void {
  t.test(`at ${w.width} px: every tab shows the admin API's numbers and fits the screen`, async (t) => {
    const { page, errors } = await openPage(browser, gw.url + '/console', { viewport: { width: w.width, height: w.height } });
    await connect(page);
    t.equal(await page.inputValue('#token'), '', 'the token input is cleared once connected');

    // Overview: totals, the split table and the charts' data are the summary's.
    const day = (await admin(gw, 'GET', '/admin/usage/summary?window=1d&by=model')).body;
    t.equal(day.totals.requests, 5);
    t.equal(await field(page, 'total.requests'), int(day.totals.requests));
    t.equal(await field(page, 'total.tokens'), int(day.totals.tokens));
    t.equal(await field(page, 'total.cost'), usd(day.totals.cost));
    t.equal(await field(page, 'total.error_rate'), percent(day.totals.error_rate));
    t.equal(await field(page, 'total.error_rate'), '20.0%', 'one request in five failed');
    for (const s of day.series) {
      t.equal(await field(page, `split.${s.name}.requests`), int(s.totals.requests), `${s.name} requests`);
      t.equal(await field(page, `split.${s.name}.cost`), usd(s.totals.cost), `${s.name} cost`);
      t.equal(await field(page, `split.${s.name}.error_rate`), percent(s.totals.error_rate), `${s.name} error rate`);
    }
    const drawn = await chartData(page, 'chart-requests');
    t.same(drawn, [day.buckets.map((b: number) => b / 1000), ...day.series.map((s: any) => s.requests)], 'the requests chart is drawn from the summary');
    t.same((await chartData(page, 'chart-cost')).slice(1), day.series.map((s: any) => s.cost), 'the cost chart too');
    await screenshot(page, `console-overview-day-${w.name}`);

    await page.selectOption('#window', '1h');
    await page.selectOption('#by', 'key');
    await page.waitForSelector('[data-field="split.bob.requests"]');
    const hour = (await admin(gw, 'GET', '/admin/usage/summary?window=1h&by=key')).body;
    t.equal((await chartData(page, 'chart-tokens'))[0].length, 60, 'an hour in minutes');
    t.same(await page.$$eval('[data-field$=".name"]', (c) => c.map((x) => x.textContent)), hour.series.map((s: any) => s.name), 'one row per key');
    for (const s of hour.series) t.equal(await field(page, `split.${s.name}.tokens`), int(s.totals.tokens), `${s.name} tokens`);
    // A named key is shown by its name: in every chart's legend, and under its id in the table.
    const labels = hour.series.map((s: any) => s.label ?? s.name);
    t.ok(labels.includes('console-seen') && !labels.includes(made.record.id), 'the API labels the issued key with its name');
    for (const id of ['chart-requests', 'chart-tokens', 'chart-cost', 'chart-errors']) t.same(await legend(page, id), labels, `${id}: series named by key name`);
    t.equal(await field(page, `split.${made.record.id}.label`), 'console-seen');
    // alice's one failed request of two is a lone minute at 50 %: the error-rate chart draws it (a point), as the table says.
    t.equal(await field(page, 'split.alice.error_rate'), '50.0%');
    t.ok(await seriesInk(page, 'chart-errors', 'alice') > 0, 'the error-rate chart draws alice\'s lone error minute');
    const ticks = await yTicks(page, 'chart-requests');
    t.same(ticks, [...new Set(ticks)], `the requests axis has no repeated label (${ticks.join(', ')})`);
    t.ok(ticks.every((v) => /^\d+$/.test(v)), 'whole numbers of requests');
    const costTicks = await yTicks(page, 'chart-cost');
    t.ok(costTicks.length > 1 && costTicks.every((v) => /^\$\d+\.\d{2,6}$/.test(v)), `the cost axis in dollars with at least two decimals (${costTicks.join(', ')})`);
    t.same(await overflow(page), [], 'nothing cut off');
    await screenshot(page, `console-overview-hour-by-key-${w.name}`);

    // Keys: status, spend and windows as the API computes them.
    await tab(page, 'keys', 'tbody tr');
    const { keys } = (await admin(gw, 'GET', '/admin/keys')).body;
    t.same(await page.$$eval('[data-field="key.id"]', (c) => c.map((x) => x.textContent)), keys.map((k: any) => k.id), 'config keys, then issued');
    const seen = keys.find((k: any) => k.id === made.record.id);
    t.equal(await field(page, `key.${seen.id}.status`), 'active');
    t.equal(await field(page, `key.${seen.id}.spend`), `${usd(seen.quota.used)} of ${balance(seen.quota.limit)}`);
    t.equal(await field(page, `key.${seen.id}.windows`), `1d ${usd(seen.rate_limits[0].used)} of ${balance(1)}`);
    t.equal(await field(page, `key.${seen.id}.last_used`), minute(Date.parse(seen.last_used)));
    t.ok(await page.isVisible(`[data-action="toggle"][data-key="${seen.id}"]`), 'the Disable button is on screen');
    t.same(await overflow(page), [], 'nothing cut off');
    await screenshot(page, `console-keys-${w.name}`);

    // Usage records: the rows, a filter, a record's detail.
    await tab(page, 'records', 'tbody tr');
    const rows = await cells(page, '#records');
    t.equal(rows.length, records.length, 'one row per record');
    rows.forEach((row, i) => {
      const r = records[i];
      t.same(row.slice(0, 9), [minute(r.time), r.key_id, r.model, r.group, String(r.input_tokens), String(r.output_tokens), usd(r.cost), String(r.status), r.ending], `row ${i}`);
    });
    await page.selectOption('#f-status', '5xx');
    await page.click('#filter');
    await page.waitForFunction(() => document.querySelectorAll('#records tbody tr').length === 1);
    const failed = (await admin(gw, 'GET', '/admin/usage?status=5xx')).body.records;
    t.same((await cells(page, '#records')).map((r) => r[7]), failed.map((r: any) => String(r.status)), 'filtered by status as the API filters');
    await page.selectOption('#f-status', '');
    await page.selectOption('#f-key', 'bob');
    await page.click('#filter');
    await page.waitForFunction(() => document.querySelectorAll('#records tbody tr').length === 1 && document.querySelector('[data-field="record.key"]')?.textContent === 'bob');
    const bob = records.find((r: any) => r.key_id === 'bob');
    await page.click(`[data-action="detail"][data-record="${bob.request_id}"]`);
    await page.waitForSelector('#record-detail:not([hidden])');
    t.equal(await field(page, 'detail.request_id'), bob.request_id);
    t.equal(await field(page, 'detail.client_request_id'), bob.client_request_id ?? '—');
    t.equal(await field(page, 'detail.account'), 'flaky-2');
    t.equal(await field(page, 'detail.upstream_model'), bob.upstream_model);
    t.equal(await field(page, 'detail.duration'), `${bob.duration_ms} ms`);
    t.same(await cells(page, '#record-detail'), [['1', 'flaky-1', '429', 'rate_limited'], ['2', 'flaky-2', '200', 'ok']], 'its attempts');
    t.same(await overflow(page), [], 'nothing cut off');
    await screenshot(page, `console-records-${w.name}`);

    // Accounts: state, slots, failures; the test button.
    await tab(page, 'accounts', 'tbody tr');
    const { groups } = (await admin(gw, 'GET', '/admin/accounts')).body;
    for (const g of groups) {
      for (const a of g.accounts) {
        t.equal(await field(page, `account.${g.name}.${a.id}.state`), { needs_attention: 'needs attention' }[a.state as string] ?? a.state, `${g.name}/${a.id} state`);
        t.equal(await field(page, `account.${g.name}.${a.id}.slots`), `${a.in_flight} / ${a.concurrency ?? 'no cap'}`);
        t.equal(await field(page, `account.${g.name}.${a.id}.failovers`), String(a.failovers));
      }
    }
    t.equal(await field(page, 'account.main.sim-off.state'), 'disabled');
    t.equal(await field(page, 'account.main.sim-off.state_why'), 'no credential: the configuration gives an empty one', 'a disabled account says why');
    t.equal(await field(page, 'account.flaky.flaky-1.state'), 'cooling');
    t.match(await field(page, 'account.flaky.flaky-1.state_until'), /^until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · rate_limited$/);
    t.equal(await field(page, 'account.flaky.flaky-1.failures'), 'rate_limited 1');
    t.equal(await field(page, 'account.main.sim-1.failures'), 'upstream_error 1');
    await page.click('[data-action="test"][data-group="flaky"][data-account="flaky-2"]');
    await page.waitForSelector('[data-field="test.flaky.flaky-2"].ok');
    t.match(await field(page, 'test.flaky.flaky-2'), /^OK 200 in \d+ ms \(gpt-4o-mini\)$/);
    await page.click('[data-action="test"][data-group="flaky"][data-account="refused"]');
    await page.waitForSelector('[data-field="test.flaky.refused"].bad');
    t.match(await field(page, 'test.flaky.refused'), /^401: .+ \(\d+ ms\)$/);
    await page.click('[data-action="test"][data-group="claude"][data-account="sim-1"]');
    await page.waitForSelector('#error:not([hidden])');
    t.match(await page.textContent('#error'), /lists only model patterns/, 'a group of patterns asks for a model');
    await page.fill('[data-model="claude/sim-1"]', 'claude-haiku-4-5');
    await page.click('[data-action="test"][data-group="claude"][data-account="sim-1"]');
    await page.waitForSelector('[data-field="test.claude.sim-1"].ok');
    t.ok(await page.isHidden('#error'), 'the next action clears the error');
    t.same(await overflow(page), [], 'nothing cut off');
    await screenshot(page, `console-accounts-${w.name}`);

    t.equal((await admin(gw, 'GET', '/admin/usage')).body.records.length, records.length, 'tests are billed to no key');
    t.notMatch((await traces(page)).html, ADMIN, 'the token is not in the document');
    t.same(errors.filter((e) => !/status of 400/.test(e)), [], 'no console errors (no CSP violation) but the 400 of the test without a model');
  });
}
