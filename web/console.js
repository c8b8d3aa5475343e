// The console: keys and usage records from /admin/*, and issuing a key. The admin token is held in one variable, nowhere else.
import { el, errorMessage, int, table, time, usd } from './dom.js';

const $ = (id) => document.getElementById(id);
const errorBox = $('error');
const app = $('app');
let token = '';
let cursor = null;
let records = [];

async function api(method, path, body) {
  const res = await fetch(path, {
    method, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer',
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(await errorMessage(res));
  return res.json();
}

function showError(message) {
  errorBox.textContent = message;
  errorBox.hidden = !message;
}

function limitsText(l) {
  const parts = [['rpm', l.rpm], ['tpm', l.tpm], ['concurrency', l.concurrency]].filter(([, v]) => v).map(([n, v]) => `${n} ${v}`);
  for (const [n, v] of [['quota', l.quota_usd], ['5h', l.usd_5h], ['1d', l.usd_1d], ['7d', l.usd_7d]]) if (v) parts.push(`${n} ${usd(v)}`);
  return parts.join(' · ') || 'none';
}

function toggle(key) {
  return el('button', {
    type: 'button', class: 'secondary', dataset: { action: 'toggle', key: key.id },
    onclick: () => run(async () => { await api('PATCH', `/admin/keys/${encodeURIComponent(key.id)}`, { disabled: !key.disabled }); await loadKeys(); }),
  }, key.disabled ? 'Enable' : 'Disable');
}

async function loadKeys() {
  const { keys } = await api('GET', '/admin/keys');
  const rows = keys.map((k) => [
    { text: k.id, field: 'key.id' }, k.name ?? '', k.source, k.group, el('span', { class: `badge ${k.status}` }, k.status),
    limitsText(k.limits), time(k.expires_at), time(k.created_at), k.source === 'store' ? toggle(k) : el('span', { class: 'muted' }, 'gateway.yaml'),
  ]);
  $('keys').replaceChildren(table(['ID', 'Name', 'Source', 'Group', 'Status', 'Limits', 'Expires', 'Created', ''], rows, 'No keys.'));
}

const N = (text) => ({ text, num: true });

function renderRecords() {
  const rows = records.map((r) => [
    time(r.time), { text: r.key_id, field: 'record.key' }, { text: r.model, field: 'record.model' }, r.group,
    { ...N(int(r.input_tokens)), field: 'record.in' }, { ...N(int(r.output_tokens)), field: 'record.out' },
    N(int(r.cache_read_tokens + r.cache_write_tokens)), { ...N(usd(r.cost)), field: 'record.cost' },
    { text: String(r.status), field: 'record.status' }, r.ending,
  ]);
  const headers = ['Time (UTC)', 'Key', 'Model', 'Group', N('Tokens in'), N('Tokens out'), N('Cache'), N('Cost'), 'Status', 'Ending'];
  $('records').replaceChildren(table(headers, rows, 'No usage recorded yet.'));
  $('more').hidden = !cursor;
}

async function loadRecords(more = false) {
  const page = await api('GET', `/admin/usage?limit=100${more && cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  records = more ? [...records, ...page.records] : page.records;
  cursor = page.cursor;
  renderRecords();
}

async function refresh() {
  await Promise.all([loadKeys(), loadRecords()]);
  $('updated').textContent = `updated ${time(new Date().toISOString())}`;
}

/** Run an action, showing its error (the API's message) instead of failing silently. */
async function run(action) {
  try { await action(); showError(''); } catch (err) { showError(err.message); }
}

$('login').addEventListener('submit', (event) => {
  event.preventDefault();
  token = $('token').value.trim();
  run(async () => {
    try {
      await refresh();
    } catch (err) {
      token = '';
      app.hidden = true;
      throw err;
    }
    $('token').value = '';
    app.hidden = false;
  });
});

$('refresh').addEventListener('click', () => run(refresh));
$('more').addEventListener('click', () => run(() => loadRecords(true)));

$('issue').addEventListener('submit', (event) => {
  event.preventDefault();
  const limits = {};
  if ($('issue-quota').value) limits.quota_usd = Number($('issue-quota').value);
  if ($('issue-rpm').value) limits.rpm = Number($('issue-rpm').value);
  const body = { group: $('issue-group').value.trim(), limits };
  if ($('issue-name').value.trim()) body.name = $('issue-name').value.trim();
  if ($('issue-expires').value.trim()) body.expires_at = $('issue-expires').value.trim();
  run(async () => {
    const issued = await api('POST', '/admin/keys', body);
    const notice = $('issued');
    notice.replaceChildren(`Key ${issued.record.id} issued. Copy it now, it is shown only once: `, el('code', { dataset: { field: 'issued.key' } }, issued.key));
    notice.hidden = false;
    $('issue').reset();
    await loadKeys();
  });
});

// Leaving the page forgets the token and anything shown with it, the issued plaintext included.
window.addEventListener('pagehide', () => {
  token = '';
  $('token').value = '';
  $('issued').replaceChildren();
  $('issued').hidden = true;
  app.hidden = true;
});
