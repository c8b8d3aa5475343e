// The public /key-usage page in headless Chromium: it shows exactly what /v1/usage reports, and keeps nothing of the key.
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { withGateway } from '../helpers/gateway.ts';
import { bearer } from '../helpers/http.ts';
import { adminConfig, chat, eventually, issue } from '../admin/helpers.ts';
import { balance, field, launch, openPage, traces, usd } from './chromium.ts';

const browser = await launch(t);
if (browser) {
  // Prices with decimals, as real ones have: costs and what remains of a quota run to more than four decimals.
  const config = adminConfig().replace('gpt-4o-mini: { input: 1000, output: 2000 }', 'gpt-4o-mini: { input: 1000.3, output: 2000.7 }');
  const gw = await withGateway(t, config);
  // The page asks for the browser's time zone; the browser runs in one offset by :30 from UTC.
  const ZONE = 'Asia/Kolkata';
  const usageOf = async (key: string) => (await fetch(gw.url + `/v1/usage?days=30&timezone=${encodeURIComponent(ZONE)}`, { headers: bearer(key) })).json() as Promise<any>;
  const open = (url: string) => openPage(browser, url, { timezoneId: ZONE });
  // The name the browser reports and sends (ICU's canonical one: Asia/Calcutta).
  const ZONE_NAME = new Intl.DateTimeFormat('en', { timeZone: ZONE }).resolvedOptions().timeZone;

  const capped = await issue(gw, { group: 'main', name: 'capped', limits: { quota_usd: 5, usd_5h: 1, usd_1d: 2, usd_7d: 3 }, expires_at: Date.now() + 10 * 86_400_000 });
  const tiny = await issue(gw, { group: 'main', limits: { quota_usd: 0.001 } });
  for (const [key, model] of [[capped.key, 'gpt-4o-mini'], [capped.key, 'gpt-4o-mini'], [capped.key, 'gpt-5'], ['sk-alice-0001', 'gpt-4o-mini'], [tiny.key, 'gpt-4o-mini']]) {
    await chat(gw, key, model);
  }
  await eventually(() => usageOf(capped.key), (u) => u.usage.total.requests === 3);
  await eventually(() => usageOf('sk-alice-0001'), (u) => u.usage.total.requests === 1);
  await eventually(() => usageOf(tiny.key), (u) => u.status === 'quota_exhausted');

  const show = async (page: Page, key: string) => {
    await page.fill('#key', key);
    await page.click('#show');
    await page.waitForSelector('#result:not([hidden]) [data-field="status"], #error:not([hidden])');
  };

  /** Every total the page shows equals the API's number, formatted as the page formats it. */
  async function expectTotals(t: Test, page: Page, api: any) {
    for (const period of ['today', 'total'] as const) {
      for (const name of ['requests', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_creation_tokens', 'total_tokens']) {
        t.equal(await field(page, `${period}.${name}`), String(api.usage[period][name]), `${period} ${name}`);
      }
      t.equal(await field(page, `${period}.cost`), usd(api.usage[period].cost), `${period} cost`);
    }
    for (const m of api.model_stats) {
      t.equal(await field(page, `model.${m.model}.requests`), String(m.requests), `${m.model} requests`);
      t.equal(await field(page, `model.${m.model}.total_tokens`), String(m.total_tokens), `${m.model} tokens`);
      t.equal(await field(page, `model.${m.model}.cost`), usd(m.cost), `${m.model} cost`);
    }
    for (const d of api.daily_usage) t.equal(await field(page, `day.${d.date}.requests`), String(d.requests), `${d.date} requests`);
    t.equal(await field(page, 'rate.rpm'), String(api.usage.rpm), 'requests per minute');
    t.equal(await field(page, 'rate.tpm'), String(api.usage.tpm), 'tokens per minute');
    t.equal(await field(page, 'average_duration_ms'), `${Math.round(api.usage.average_duration_ms)} ms`, 'average duration');
  }

  t.test('a quota-limited key: status, quota, each window with its reset, totals, models and days', async (t) => {
    const { page, errors } = await open(gw.url + '/key-usage');
    await show(page, capped.key);
    const api = await usageOf(capped.key);
    t.equal(api.mode, 'quota_limited');
    t.equal(api.usage.total.requests, 3, 'the traffic was metered');
    t.ok(api.usage.total.cost > 0, 'and priced');
    t.equal(await field(page, 'status'), 'active');
    t.equal(await field(page, 'mode'), 'Quota limited');
    t.equal(api.days_until_expiry, 10);
    t.equal(await field(page, 'expires_at'), `Expires ${api.expires_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')} (10 days left)`);
    // A balance shows at most four decimals (the costs above, six).
    t.not(config, adminConfig(), 'the price with decimals was put in');
    t.ok(/\.\d{5,}$/.test(String(api.quota.remaining)), `the remaining quota has more than four decimals (${api.quota.remaining})`);
    t.equal(await field(page, 'quota'), `${usd(api.quota.used)} of ${balance(api.quota.limit)}`);
    t.equal(await field(page, 'quota.remaining'), balance(api.quota.remaining));
    t.match(await field(page, 'quota.remaining'), /^\$\d+\.\d{2,4}$/, 'quota remaining: at most 4 decimals');
    t.same(api.rate_limits.map((w: any) => w.window), ['5h', '1d', '7d']);
    for (const w of api.rate_limits) {
      t.equal(await field(page, `window.${w.window}.used`), usd(w.used), `${w.window} used`);
      t.equal(await field(page, `window.${w.window}.limit`), balance(w.limit), `${w.window} limit`);
      t.equal(await field(page, `window.${w.window}.remaining`), balance(w.remaining), `${w.window} remaining`);
      t.match(await field(page, `window.${w.window}.remaining`), /^\$\d+\.\d{2,4}$/, `${w.window} remaining: at most 4 decimals`);
      t.equal(await field(page, `window.${w.window}.reset`), w.reset_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'), `${w.window} reset time`);
    }
    await expectTotals(t, page, api);
    t.equal(api.model_stats.length, 2, 'two models used');
    t.equal(await page.locator('th', { hasText: 'Date (' }).textContent(), `Date (${ZONE_NAME})`, 'days are in the browser\'s time zone');
    t.equal(api.daily_usage.at(-1).date, new Intl.DateTimeFormat('en-CA', { timeZone: ZONE }).format(Date.now() + 3_600_000 - (Date.now() % 3_600_000) - 1),
      'today is the local date at the end of this UTC hour (Kolkata is +5:30)');
    t.same(errors, [], 'no console errors (no CSP violation)');
  });

  t.test('an unrestricted key, an exhausted key, an expired key, an unknown key', async (t) => {
    const { page, errors } = await open(gw.url + '/key-usage');
    await show(page, 'sk-alice-0001');
    const alice = await usageOf('sk-alice-0001');
    t.equal(alice.mode, 'unrestricted');
    t.equal(await field(page, 'status'), 'active');
    t.equal(await field(page, 'mode'), 'Unrestricted · main');
    t.equal(await field(page, 'quota'), null, 'no quota card');
    t.equal(await field(page, 'expires_at'), 'No expiry');
    t.equal(await field(page, 'window.5h.used'), null, 'no windows');
    await expectTotals(t, page, alice);

    await show(page, tiny.key);
    t.equal(await field(page, 'status'), 'quota exhausted');
    t.equal(await field(page, 'quota.remaining'), '$0.00');
    await expectTotals(t, page, await usageOf(tiny.key));

    await show(page, 'sk-old-0004');
    t.equal(await field(page, 'status'), 'expired');
    t.equal(await field(page, 'expires_at'), 'Expired 2020-01-01 00:00:00 UTC');

    await page.fill('#key', 'sk-not-a-key');
    await page.click('#show');
    await page.waitForSelector('#error:not([hidden])');
    t.equal((await page.textContent('#error'))?.trim(), 'Invalid API key', 'the API\'s own message');
    t.ok(await page.isHidden('#result'), 'the previous key\'s numbers are gone');
    t.equal(errors.filter((e) => !/401/.test(e)).length, 0, 'only the expected 401 in the console');
  });

  t.test('nothing of the key is kept: storage, cookies, IndexedDB, URL, HTML; the input is empty after reload', async (t) => {
    const { page, requests } = await open(gw.url + '/key-usage');
    await show(page, capped.key);
    t.equal(await field(page, 'status'), 'active');
    const secret = capped.key.slice(3);
    const before = await traces(page);
    t.equal(before.url, gw.url + '/key-usage', 'the form never navigated');
    t.notMatch(before.html, secret, 'the key is not in the document');
    const call = requests.find((r) => r.url.includes('/v1/usage'));
    t.equal(call?.headers.authorization, `Bearer ${capped.key}`, 'the key travels only in the Authorization header');
    t.equal(new URL(call!.url).searchParams.get('timezone'), ZONE_NAME, 'the page asks for the browser\'s time zone');
    t.notOk(requests.some((r) => r.url.includes(secret)), 'and never in a URL');

    await page.reload();
    const after = await traces(page);
    for (const [name, value] of Object.entries({ ...before, html: '' }).concat(Object.entries(after))) {
      t.notMatch(String(value), secret, `${name} holds nothing of the key`);
    }
    t.equal(after.local, '[]', 'localStorage empty');
    t.equal(after.session, '[]', 'sessionStorage empty');
    t.equal(after.cookie, '', 'no cookie');
    t.equal(after.indexedDB, '[]', 'no IndexedDB database');
    t.equal(after.url, gw.url + '/key-usage');
    t.equal(await page.inputValue('#key'), '', 'the input is empty after reload');
    t.ok(await page.isHidden('#result'), 'no usage shown after reload');
  });
}
