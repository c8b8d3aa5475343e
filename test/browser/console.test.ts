// The operator /console in headless Chromium: the token gates it, records and keys match the admin API, a key is issued once.
import t from 'tap';
import { withGateway } from '../helpers/gateway.ts';
import { ADMIN, admin, adminConfig, chat, eventually, issue } from '../admin/helpers.ts';
import { launch, openPage, traces, usd } from './chromium.ts';

const browser = await launch(t);
if (browser) {
  const gw = await withGateway(t, adminConfig());
  const made = await issue(gw, { group: 'other', name: 'console-seen' });
  for (const [key, model] of [['sk-alice-0001', 'gpt-4o-mini'], [made.key, 'gpt-5'], [made.key, 'gpt-4o-mini']]) await chat(gw, key, model);
  const records = (await eventually(() => admin(gw, 'GET', '/admin/usage'), (r) => r.body.records.length >= 3)).body.records;
  const cells = (page: import('playwright-core').Page, selector: string) =>
    page.$$eval(`${selector} tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent?.trim() ?? '')));

  t.test('a wrong token shows the API\'s message and nothing else', async (t) => {
    const { page } = await openPage(browser, gw.url + '/console');
    t.ok(await page.isHidden('#app'), 'nothing shown before a token is given');
    await page.fill('#token', 'not-the-admin-token');
    await page.click('#connect');
    await page.waitForSelector('#error:not([hidden])');
    t.equal((await page.textContent('#error'))?.trim(), 'Invalid admin token');
    t.ok(await page.isHidden('#app'));
  });

  t.test('with the token: the records table and the keys table match the admin API', async (t) => {
    const { page, errors } = await openPage(browser, gw.url + '/console');
    await page.fill('#token', ADMIN);
    await page.click('#connect');
    await page.waitForSelector('#app:not([hidden]) #records tbody tr');
    const rows = await cells(page, '#records');
    t.equal(rows.length, records.length, 'one row per record');
    t.equal(rows.length, 3);
    rows.forEach((row, i) => {
      const r = records[i];
      const time = new Date(r.time).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
      t.same(row, [time, r.key_id, r.model, r.group, String(r.input_tokens), String(r.output_tokens),
        String(r.cache_read_tokens + r.cache_write_tokens), usd(r.cost), '200', 'completed'], `row ${i}: ${r.key_id} ${r.model}`);
    });
    const keys = await cells(page, '#keys');
    t.same(keys.map((k) => k[0]), ['alice', 'capped', 'old', made.record.id], 'config keys, then issued');
    t.same(keys[3].slice(1, 5), ['console-seen', 'store', 'other', 'active']);
    t.equal(await page.inputValue('#token'), '', 'the token input is cleared once connected');
    t.notMatch((await traces(page)).html, ADMIN, 'the token is not in the document');
    t.same(errors, [], 'no console errors');
  });

  t.test('issue a key from the form: shown once, works at once; refresh shows its traffic; disable refuses it', async (t) => {
    const { page } = await openPage(browser, gw.url + '/console');
    await page.fill('#token', ADMIN);
    await page.click('#connect');
    await page.waitForSelector('#app:not([hidden])');
    await page.fill('#issue-group', 'main');
    await page.fill('#issue-name', 'from the console');
    await page.fill('#issue-quota', '2');
    await page.click('#issue-submit');
    await page.waitForSelector('#issued:not([hidden]) [data-field="issued.key"]');
    const key = (await page.textContent('[data-field="issued.key"]'))?.trim() ?? '';
    t.match(key, /^sk-[0-9a-f]{64}$/);
    t.equal(await chat(gw, key), 200, 'the key from the page works');
    const listed = (await admin(gw, 'GET', '/admin/keys')).body.keys.find((k: any) => k.name === 'from the console');
    t.match(listed, { group: 'main', limits: { quota_usd: 2 }, source: 'store' });

    await eventually(() => admin(gw, 'GET', `/admin/usage?key=${listed.id}`), (r) => r.body.records.length === 1);
    await page.click('#refresh');
    await page.waitForFunction((id) => [...document.querySelectorAll('#records [data-field="record.key"]')].some((c) => c.textContent === id), listed.id);
    t.equal((await cells(page, '#records')).length, 4, 'the new request is listed after refresh');

    await page.click(`[data-action="toggle"][data-key="${listed.id}"]`);
    await page.waitForSelector(`[data-action="toggle"][data-key="${listed.id}"]:text("Enable")`);
    t.equal(await chat(gw, key), 401, 'disabled from the console: refused at once');

    await page.fill('#issue-group', 'no-such-group');
    await page.click('#issue-submit');
    await page.waitForSelector('#error:not([hidden])');
    t.match(await page.textContent('#error'), /Unknown group "no-such-group"/);

    await page.reload();
    const after = await traces(page);
    for (const secret of [ADMIN, key.slice(3)]) {
      for (const [name, value] of Object.entries(after)) t.notMatch(String(value), secret, `${name} holds nothing secret after reload`);
    }
    t.equal(after.local + after.session + after.cookie, '[][]', 'no storage, no cookie');
    t.ok(await page.isHidden('#app'), 'a reload asks for the token again');
  });
}
