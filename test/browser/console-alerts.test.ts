// The console's Alerts tab in headless Chromium, at 1280 and 390 px: the webhooks by name and host (never the URL's
// path or token) and the latest deliveries, sent and failed, exactly as GET /admin/notifications lists them.
import t from 'tap';
import { withLoggedGateway, writeConfig } from '../helpers/gateway.ts';
import { receiver } from '../helpers/receiver.ts';
import { admin, eventually } from '../admin/helpers.ts';
import { chat, hookConfig, SECRET } from '../notify/helpers.ts';
import { cells, connect, tab } from './console-suite.ts';
import { field, launch, openPage, overflow, screenshot, traces, WIDTHS } from './chromium.ts';

const browser = await launch(t);
// Everything lives in one test: its receivers and gateway stay up until its subtests are done.
if (browser) t.test('the Alerts tab', async (t) => {
  const ok = await receiver(t);
  const refusing = await receiver(t, () => 403);
  const { gateway } = await withLoggedGateway(t, writeConfig(hookConfig({
    url: ok.url, hooks: [`{ name: pager, url: "${refusing.url}", secret: ${SECRET}, events: [group.exhausted] }`],
  })));
  t.equal(await chat(gateway.url, 'sk-pool-0001'), 429, 'an account refused, the group exhausted');
  const listed = (await eventually(() => admin(gateway, 'GET', '/admin/notifications'), (x) => x.body.deliveries.length === 3)).body;
  t.same(listed.deliveries.map((d: any) => [d.hook, d.event, d.result]).sort(), [['pager', 'group.exhausted', 'failed'], ['rx', 'account.attention', 'sent'], ['rx', 'group.exhausted', 'sent']]);
  const time = (v: string) => new Date(v).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');

  for (const w of WIDTHS) {
    t.test(`at ${w.width} px: the Alerts tab lists the webhooks and the deliveries the API lists`, async (t) => {
      const { page, errors } = await openPage(browser, gateway.url + '/console', { viewport: { width: w.width, height: w.height } });
      await connect(page);
      await tab(page, 'alerts', 'tbody tr');
      t.equal(await field(page, 'webhooks'), `rx (${new URL(ok.url).host}): key.quota, account.attention, group.exhausted, store.down, store.up · pager (${new URL(refusing.url).host}): group.exhausted`);
      const rows = await cells(page, '#deliveries');
      t.same(rows, listed.deliveries.map((d: any) => [time(d.time), d.event, d.subject, d.hook, d.result, String(d.attempts), d.error ?? String(d.status)]), 'one row per delivery, newest first');
      t.equal(await field(page, 'delivery.0.result'), listed.deliveries[0].result);
      t.ok(rows.some((r) => r[4] === 'failed' && r[6] === 'HTTP 403'), 'a refused delivery says why');
      t.same(await overflow(page), [], 'nothing cut off');
      await screenshot(page, `console-alerts-${w.name}`);
      const html = (await traces(page)).html;
      t.notOk(html.includes('receiver-own-token') || html.includes(SECRET), 'no URL token or secret on the page');
      t.same(errors, [], 'no console errors');
    });
  }

  t.test('Refresh shows a delivery made after the tab was opened', async (t) => {
    const { page } = await openPage(browser, gateway.url + '/console');
    await connect(page);
    await tab(page, 'alerts', 'tbody tr');
    t.equal((await cells(page, '#deliveries')).length, 3);
    t.equal(await chat(gateway.url), 200);
    t.equal(await chat(gateway.url), 200);
    t.equal(await chat(gateway.url), 200);
    t.equal(await chat(gateway.url), 200);
    await eventually(() => admin(gateway, 'GET', '/admin/notifications'), (x) => x.body.deliveries.length === 5);
    await page.click('#alerts-refresh');
    await page.waitForFunction(() => document.querySelectorAll('#deliveries tbody tr').length === 5);
    t.same((await cells(page, '#deliveries')).slice(0, 2).map((r) => [r[1], r[2]]), [['key.quota', 'q'], ['key.quota', 'q']], 'the key\'s 80 % and 100 % on top');
  });
});
