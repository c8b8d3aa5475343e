// The operator /console in headless Chromium: the token gates it, and a key is issued with every limit, shown once (the
// next action clears it), edited, disabled and deleted; nothing secret is kept. The tabs at both widths: console-1280 and
// console-390 tests.
import t from 'tap';
import { ADMIN, admin, chat } from '../admin/helpers.ts';
import { field, launch, openPage, overflow, screenshot, traces } from './chromium.ts';
import { connect, consoleGateway, tab } from './console-suite.ts';

const browser = await launch(t);
if (browser) {
  const { gw } = await consoleGateway(t);

  t.test('a wrong token shows the API\'s message and nothing else', async (t) => {
    const { page } = await openPage(browser, gw.url + '/console');
    t.ok(await page.isHidden('#app'), 'nothing shown before a token is given');
    await page.fill('#token', 'not-the-admin-token');
    await page.click('#connect');
    await page.waitForSelector('#error:not([hidden])');
    t.equal((await page.textContent('#error'))?.trim(), 'Invalid admin token');
    t.ok(await page.isHidden('#app'));
  });

  t.test('issue a key with every limit: shown once, cleared by the next action; edit, disable, delete', async (t) => {
    const { page } = await openPage(browser, gw.url + '/console', { viewport: { width: 1280, height: 900 } });
    page.on('dialog', (d) => d.accept());
    await connect(page);
    await tab(page, 'keys', 'tbody tr');
    t.same(await page.$$eval('#issue-group option', (o) => o.map((x) => (x as HTMLOptionElement).value)), ['main', 'flaky', 'claude'], 'the gateway\'s groups');
    await page.selectOption('#issue-group', 'flaky');
    await page.fill('#issue-name', 'from the console');
    await page.fill('#issue-models', 'gpt-4o-mini, gpt-5*');
    for (const [name, value] of [['rpm', '60'], ['tpm', '10000'], ['concurrency', '3'], ['quota_usd', '2'], ['usd_5h', '0.5'], ['usd_1d', '1'], ['usd_7d', '1.5']]) {
      await page.fill(`#issue-${name}`, value);
    }
    await page.fill('#issue-expires', '2031-02-03T04:05:06Z');
    await page.click('#issue-submit');
    await page.waitForSelector('#issued:not([hidden]) [data-field="issued.key"]');
    const key = (await page.textContent('[data-field="issued.key"]'))?.trim() ?? '';
    t.match(key, /^sk-[0-9a-f]{64}$/);
    t.same(await overflow(page), [], 'a key with every limit still fits: nothing cut off');
    await screenshot(page, 'console-issued-desktop');
    const listed = (await admin(gw, 'GET', '/admin/keys')).body.keys.find((k: any) => k.name === 'from the console');
    t.match(listed, {
      group: 'flaky', models: ['gpt-4o-mini', 'gpt-5*'], expires_at: '2031-02-03T04:05:06.000Z', source: 'store',
      limits: { rpm: 60, tpm: 10000, concurrency: 3, quota_usd: 2, usd_5h: 0.5, usd_1d: 1, usd_7d: 1.5 },
    });
    t.equal(await chat(gw, key), 200, 'the key from the page works');

    await page.click('#keys-refresh');
    await page.waitForSelector('#issued[hidden]', { state: 'attached' });
    t.equal(await page.textContent('#issued'), '', 'the next action took the plaintext off the page');

    await page.click(`[data-action="edit"][data-key="${listed.id}"]`);
    await page.waitForSelector('#edit:not([hidden])');
    t.equal(await page.inputValue('#edit-rpm'), '60', 'the form holds the key\'s limits');
    await page.fill('#edit-rpm', '5');
    await page.fill('#edit-usd_7d', '');
    await page.fill('#edit-expires', '');
    await page.click('#edit-save');
    await page.waitForSelector('#edit[hidden]', { state: 'attached' });
    const edited = (await admin(gw, 'GET', `/admin/keys/${listed.id}`)).body;
    t.same(edited.limits, { rpm: 5, tpm: 10000, concurrency: 3, quota_usd: 2, usd_5h: 0.5, usd_1d: 1 }, 'limits replaced as edited');
    t.equal(edited.expires_at, null, 'no expiry');

    await page.click(`[data-action="toggle"][data-key="${listed.id}"]`);
    await page.waitForSelector(`[data-action="toggle"][data-key="${listed.id}"]:text("Enable")`);
    t.equal(await field(page, `key.${listed.id}.status`), 'disabled');
    t.equal(await chat(gw, key), 401, 'disabled from the console: refused at once');

    await page.click(`[data-action="delete"][data-key="${listed.id}"]`);
    await page.waitForFunction((id) => !document.querySelector(`[data-action="delete"][data-key="${id}"]`), listed.id);
    t.equal((await admin(gw, 'GET', `/admin/keys/${listed.id}`)).status, 404, 'deleted');

    await page.fill('#issue-expires', 'not a time');
    await page.click('#issue-submit');
    await page.waitForSelector('#error:not([hidden])');
    t.match(await page.textContent('#error'), /expires_at must be an ISO 8601 time/);

    await page.reload();
    const after = await traces(page);
    for (const secret of [ADMIN, key.slice(3)]) {
      for (const [name, value] of Object.entries(after)) t.notMatch(String(value), secret, `${name} holds nothing secret after reload`);
    }
    t.equal(after.local + after.session + after.cookie, '[][]', 'no storage, no cookie');
    t.ok(await page.isHidden('#app'), 'a reload asks for the token again');
  });
}
