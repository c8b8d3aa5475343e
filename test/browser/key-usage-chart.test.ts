// The /key-usage page at 1280 and 390 px in headless Chromium: a daily chart of every day of the period (zero on days
// without traffic) drawn from what /v1/usage reports, the same totals, and nothing cut off. Screenshots: .tap/screenshots/.
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { withGateway } from '../helpers/gateway.ts';
import { bearer } from '../helpers/http.ts';
import { adminConfig, chat, eventually, issue } from '../admin/helpers.ts';
import { field, launch, openPage, overflow, screenshot, usd, WIDTHS } from './chromium.ts';

const browser = await launch(t);
if (browser) {
  const gw = await withGateway(t, adminConfig());
  const ZONE = 'Asia/Kolkata';
  const open = (url: string, viewport: { width: number; height: number }) => openPage(browser, url, { timezoneId: ZONE, viewport });
  const capped = await issue(gw, { group: 'main', name: 'capped', limits: { quota_usd: 5, usd_1d: 2 }, expires_at: Date.now() + 10 * 86_400_000 });
  for (const model of ['gpt-4o-mini', 'gpt-4o-mini', 'gpt-5']) await chat(gw, capped.key, model);
  await eventually(async () => (await (await fetch(gw.url + '/v1/usage', { headers: bearer(capped.key) })).json() as any).usage.total.requests, (n) => n === 3);

  const show = async (page: Page, key: string) => {
    await page.fill('#key', key);
    await page.click('#show');
    await page.waitForSelector('#result:not([hidden]) [data-field="status"]');
  };

  /** The totals the page shows equal the API's. */
  async function expectTotals(t: Test, page: Page, api: any) {
    for (const period of ['today', 'total'] as const) {
      t.equal(await field(page, `${period}.requests`), String(api.usage[period].requests), `${period} requests`);
      t.equal(await field(page, `${period}.total_tokens`), String(api.usage[period].total_tokens), `${period} tokens`);
      t.equal(await field(page, `${period}.cost`), usd(api.usage[period].cost), `${period} cost`);
    }
    for (const d of api.daily_usage) t.equal(await field(page, `day.${d.date}.requests`), String(d.requests), `${d.date} requests`);
  }

  for (const w of WIDTHS) {
    t.test(`at ${w.width} px: a daily chart of every day of the period (zero without traffic), and the page fits`, async (t) => {
      const { page, errors } = await open(gw.url + '/key-usage', { width: w.width, height: w.height });
      await page.selectOption('#days', '7');
      await show(page, capped.key);
      await page.waitForFunction(() => (document.getElementById('daily-chart') as any)?.plot);
      const api = await (await fetch(gw.url + `/v1/usage?days=7&timezone=${encodeURIComponent(ZONE)}`, { headers: bearer(capped.key) })).json() as any;
      const [x, requests, cost] = await page.evaluate(() => (document.getElementById('daily-chart') as any).plot.data);
      t.equal(x.length, 7, 'seven days');
      const dates = x.map((s: number) => new Date(s * 1000).toISOString().slice(0, 10));
      t.equal(dates.at(-1), api.daily_usage.at(-1).date, 'ending today');
      for (let i = 1; i < 7; i++) t.equal(Date.parse(dates[i]) - Date.parse(dates[i - 1]), 86_400_000, `day ${i} follows day ${i - 1}`);
      const byDate = new Map(api.daily_usage.map((d: any) => [d.date, d]));
      t.same(requests, dates.map((d: string) => (byDate.get(d) as any)?.requests ?? 0), 'requests per day as the API counts them, zero on days without traffic');
      t.same(cost, dates.map((d: string) => (byDate.get(d) as any)?.cost ?? 0), 'cost per day');
      t.equal(requests.filter((n: number) => n === 0).length, 6, 'six days without traffic drawn as zero');
      await expectTotals(t, page, api);
      t.same(await overflow(page), [], 'nothing cut off');
      await screenshot(page, `key-usage-${w.name}`);
      t.same(errors, [], 'no console errors');
    });
  }
}
