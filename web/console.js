// The console: the admin token form, the tabs (overview, keys, usage records, accounts, alerts) and loading what a tab shows.
import { time } from './dom.js';
import { onActionStart, run, setToken, showError } from './console-api.js';
import { loadAccounts } from './console-accounts.js';
import { loadGroups, loadKeys } from './console-keys.js';
import { loadOverview } from './console-overview.js';
import { loadRecords } from './console-records.js';
import { loadNotifications } from './console-notifications.js';

const $ = (id) => document.getElementById(id);
const app = $('app');
const LOAD = { overview: loadOverview, keys: loadKeys, records: () => loadRecords(), accounts: loadAccounts, alerts: loadNotifications };
let tab = 'overview';

async function show(name) {
  tab = name;
  for (const b of document.querySelectorAll('[data-tab]')) b.setAttribute('aria-selected', String(b.dataset.tab === name));
  for (const id of Object.keys(LOAD)) $(`tab-${id}`).hidden = id !== name;
  await LOAD[name]();
  $('updated').textContent = `updated ${time(new Date().toISOString())}`;
}

for (const b of document.querySelectorAll('[data-tab]')) b.addEventListener('click', () => run(() => show(b.dataset.tab)));

$('login').addEventListener('submit', (event) => {
  event.preventDefault();
  setToken($('token').value.trim());
  run(async () => {
    try {
      // The groups fill the issue form and the record filters; the key list fills the key filter.
      await Promise.all([loadGroups(), loadKeys()]);
      app.hidden = false;
      $('login').hidden = true;
      await show(tab);
    } catch (err) {
      setToken('');
      app.hidden = true;
      throw err;
    }
    $('token').value = '';
  });
});

const submit = (id, action) => $(id).addEventListener('submit', (event) => { event.preventDefault(); run(action); });
submit('overview-form', loadOverview);
for (const id of ['window', 'by']) $(id).addEventListener('change', () => run(loadOverview));
submit('filters', () => loadRecords());
$('more').addEventListener('click', () => run(() => loadRecords(true)));
submit('accounts-form', loadAccounts);
$('accounts-window').addEventListener('change', () => run(loadAccounts));
$('alerts-refresh').addEventListener('click', () => run(loadNotifications));

// Leaving the page forgets the token and anything shown with it, the issued plaintext included.
onActionStart(() => showError(''));
window.addEventListener('pagehide', () => {
  setToken('');
  $('token').value = '';
  $('issued').replaceChildren();
  $('issued').hidden = true;
  app.hidden = true;
  $('login').hidden = false;
});
