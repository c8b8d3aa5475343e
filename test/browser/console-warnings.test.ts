// The console tells the truth at a glance (issue 40 §5), at 1280 and 390 px in headless Chromium: a group with no enabled
// account is flagged in the key form, the issued notice and the keys table (and its key's /v1/models is empty, with a
// warning header); a disabled account says why (the unset variable its credential names, or `disabled: true`); a key
// with a long name, every limit and costs at six decimals keeps its buttons on screen; the time filters' examples fit.
import t from 'tap';
import { adminConfig, admin, chat, eventually, issue } from '../admin/helpers.ts';
import { withGateway } from '../helpers/gateway.ts';
import { bearer } from '../helpers/http.ts';
import { balance, cutPlaceholders, field, launch, openPage, overflow, screenshot, usd, WIDTHS } from './chromium.ts';
import { connect, tab } from './console-suite.ts';

const UNSET = 'CONSOLE_TEST_DARK_CREDENTIAL';
const config = adminConfig()
  .replace('keys:\n', `  dark:
    platform: sim
    models: [gpt-4o-mini]
    accounts:
      - { id: dark-env, credential: "\${${UNSET}:-}" }
      - { id: dark-off, credential: dark-credential, disabled: true }
keys:
`)
  // Prices with decimals, as real ones have: what a key spent runs to six decimals.
  .replace('gpt-4o-mini: { input: 1000, output: 2000 }', 'gpt-4o-mini: { input: 1000.3, output: 2000.7 }');

const browser = await launch(t);
if (browser) {
  // The variable is unset whatever the machine's environment holds: the gateway interpolates only what it is given.
  const gw = await withGateway(t, config);
  const long = await issue(gw, {
    group: 'main', name: 'nightly batch of the reporting team, EU region, weekdays only',
    limits: { rpm: 600, tpm: 1_000_000, concurrency: 16, quota_usd: 12.5, usd_5h: 3.25, usd_1d: 5.5, usd_7d: 9.75 }, expires_at: '2031-02-03T04:05:06Z',
  });
  const statuses = [await chat(gw, long.key), await chat(gw, long.key), await chat(gw, long.key)];
  const spent = await eventually(() => admin(gw, 'GET', `/admin/keys/${long.record.id}`), (r) => r.body.quota.used > 0);

  t.test('the setup', async (t) => {
    t.ok(config.includes('dark-env') && config.includes('1000.3'), 'the test config has its parts');
    t.same(statuses, [200, 200, 200]);
    t.match(String(spent.body.quota.used), /\.\d{5,}$/, 'what the long key spent has more than four decimals');
  });

  for (const w of WIDTHS) {
    t.test(`at ${w.width} px`, async (t) => {
      const { page, errors } = await openPage(browser, gw.url + '/console', { viewport: { width: w.width, height: w.height } });
      await connect(page);
      await tab(page, 'keys', 'tbody tr');

      // The form: choosing the dark group warns at once; the group list says it too.
      t.ok(await page.isHidden('#issue-warning'), 'no warning for the first group (main has an account)');
      t.equal(await page.textContent('#issue-group option[value="dark"]'), 'dark (sim) · no enabled account');
      await page.selectOption('#issue-group', 'dark');
      t.ok(await page.isVisible('#issue-warning'), 'the dark group warns');
      t.match(await page.textContent('#issue-warning'), /^Group dark has no enabled account: a key issued to it is refused \(503 NO_ACCOUNT_AVAILABLE\) and lists no models/);
      await page.selectOption('#issue-group', 'other');
      t.ok(await page.isHidden('#issue-warning'), 'and the warning goes with another group');

      await page.selectOption('#issue-group', 'dark');
      await page.fill('#issue-name', `dark at ${w.width}`);
      await page.click('#issue-submit');
      await page.waitForSelector('#issued:not([hidden]) [data-field="issued.key"]');
      const key = (await page.textContent('[data-field="issued.key"]'))?.trim() ?? '';
      t.match(await field(page, 'issued.warning'), /^Group dark has no enabled account/, 'the issued notice repeats the warning');
      const dark = (await admin(gw, 'GET', '/admin/keys')).body.keys.find((k: any) => k.name === `dark at ${w.width}`);
      await page.waitForSelector(`[data-field="key.${dark.id}.group_warning"]`);
      t.equal(await field(page, `key.${dark.id}.group_warning`), 'no enabled account', 'the keys table flags the key');
      t.equal(await field(page, `key.${long.record.id}.group_warning`), null, 'and not a key of a served group');

      // What the warning promises: the key's model list is empty and says why.
      const models = await fetch(gw.url + '/v1/models', { headers: bearer(key) });
      t.equal(models.status, 200);
      t.equal(models.headers.get('x-gateway-warning'), 'no_enabled_account');
      t.same(await models.json(), { object: 'list', data: [] });

      // The long key: its buttons are on screen, in the table's visible box; amounts spent keep six decimals, limits four.
      const used = (await admin(gw, 'GET', `/admin/keys/${long.record.id}`)).body.quota.used;
      t.match(await field(page, `key.${long.record.id}.spend`), /^\$\d+\.\d{5,6} of \$12\.50$/);
      t.equal(await field(page, `key.${long.record.id}.spend`), `${usd(used)} of ${balance(12.5)}`);
      for (const action of ['edit', 'toggle', 'delete']) {
        const inside = await page.$eval(`[data-action="${action}"][data-key="${long.record.id}"]`, (b) => {
          const r = b.getBoundingClientRect();
          const box = b.closest('.scroll')!.getBoundingClientRect();
          return r.width > 0 && r.left >= box.left && r.right <= box.right && r.right <= document.documentElement.clientWidth;
        });
        t.ok(inside, `the ${action} button of the long-named key is whole on screen`);
      }
      t.equal(await field(page, `key.${long.record.id}.expires`), 'expires 2031-02-03 04:05');
      t.equal(await field(page, 'key.old.expires'), 'expired 2020-01-01 00:00', 'a past expiry is in the past tense');
      t.same(await overflow(page), [], 'nothing cut off');
      await screenshot(page, `console-warnings-keys-${w.name}`);

      // Accounts: why each disabled account is off.
      await tab(page, 'accounts', 'tbody tr');
      t.equal(await field(page, 'account.dark.dark-env.state'), 'disabled');
      t.equal(await field(page, 'account.dark.dark-env.state_why'), `no credential: set ${UNSET}`, 'the variable to set');
      t.equal(await field(page, 'account.dark.dark-off.state_why'), 'disabled: true in the configuration');
      t.equal(await field(page, 'account.main.sim-1.state_why'), null, 'an enabled account has no such line');
      t.equal(await field(page, 'group.dark.warning'), '· no enabled account', 'the group\'s heading says it serves nothing');
      t.equal(await field(page, 'group.main.warning'), null);
      t.same(await overflow(page), [], 'nothing cut off');
      await screenshot(page, `console-warnings-accounts-${w.name}`);

      // The records filter: the date examples fit their fields.
      await tab(page, 'records', 'tbody tr');
      t.same(await cutPlaceholders(page), [], 'every placeholder of the records filter is whole');
      t.equal(await page.getAttribute('#f-from', 'placeholder'), '2026-01-01T00:00:00Z');
      t.same(await overflow(page), [], 'nothing cut off');
      await screenshot(page, `console-warnings-records-${w.name}`);
      t.same(errors, [], 'no console errors');
    });
  }

  t.test('the admin API says why an account is disabled', async (t) => {
    const { groups } = (await admin(gw, 'GET', '/admin/accounts')).body;
    const accounts = groups.find((g: any) => g.name === 'dark').accounts;
    t.same(accounts.map((a: any) => a.disabled), [
      { reason: 'no_credential', variables: [UNSET], message: `no credential: set ${UNSET}` },
      { reason: 'disabled', variables: [], message: 'disabled: true in the configuration' },
    ]);
    t.equal(groups.find((g: any) => g.name === 'main').accounts[0].disabled, null, 'an enabled account: null');
    t.equal((await admin(gw, 'GET', '/admin/groups')).body.groups.find((g: any) => g.name === 'dark').enabled_accounts, 0);
  });

  t.test('two keys of one name are told apart in the overview\'s labels', async (t) => {
    const twins = [await issue(gw, { group: 'main', name: 'twin' }), await issue(gw, { group: 'main', name: 'twin' })];
    for (const k of twins) t.equal(await chat(gw, k.key), 200);
    const summary = await eventually(() => admin(gw, 'GET', '/admin/usage/summary?window=1h&by=key'), (r) => r.body.series.length >= 3);
    const labels = Object.fromEntries(summary.body.series.map((x: any) => [x.name, x.label]));
    for (const k of twins) t.equal(labels[k.record.id], `twin (${k.record.id})`);
    t.equal(labels[long.record.id], 'nightly batch of the reporting team, EU region, weekdays only', 'a name of its own stands alone');
  });
}
