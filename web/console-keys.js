// The console's keys: status, spend against quota and windows, last use; issue with every limit, edit, disable, delete.
import { balance, el, shortTime, table, usd } from './dom.js';
import { api, listOf, numberOf, onActionStart, run } from './console-api.js';

const $ = (id) => document.getElementById(id);
/** Every limit the admin API takes, as the issue and edit forms ask for it. */
const LIMITS = [['rpm', 'Requests / min', '1'], ['tpm', 'Tokens / min', '1'], ['concurrency', 'Concurrency', '1'], ['quota_usd', 'Quota (USD)', 'any'],
  ['usd_5h', 'USD / 5 h', 'any'], ['usd_1d', 'USD / day', 'any'], ['usd_7d', 'USD / 7 days', 'any']];

for (const prefix of ['issue', 'edit']) {
  $(`${prefix}-limits`).replaceChildren(...LIMITS.map(([name, label, step]) =>
    el('label', {}, `${label} `, el('input', { id: `${prefix}-${name}`, type: 'number', min: '0', step }))));
}
const STATUS = { active: 'active', quota_exhausted: 'quota exhausted', expired: 'expired', disabled: 'disabled' };

let keys = [];
let groups = [];
let editing = null;

/** A group no key can be served by: every account is disabled (the Accounts tab says why). */
const dark = (name) => groups.some((g) => g.name === name && g.enabled_accounts === 0);
const darkWarning = (name) => `Group ${name} has no enabled account: a key issued to it is refused (503 NO_ACCOUNT_AVAILABLE) and lists no models until one is enabled; the Accounts tab says why each is disabled.`;

/** The issue form warns as soon as such a group is chosen. */
function warnGroup() {
  const name = $('issue-group').value;
  $('issue-warning').textContent = dark(name) ? darkWarning(name) : '';
  $('issue-warning').hidden = !dark(name);
}

// The plaintext of an issued key is shown once: the next action, whatever it is, takes it off the page.
onActionStart(() => {
  $('issued').replaceChildren();
  $('issued').hidden = true;
});

/** The gateway's groups: ordinary ones to issue a key to, dedicated ones as its pools; also the records' group filter. */
export async function loadGroups() {
  ({ groups } = await api('GET', '/admin/groups'));
  $('issue-group').replaceChildren(...groups.filter((g) => !g.dedicated).map((g) => el('option', { value: g.name }, `${g.name} (${g.platform})${g.enabled_accounts ? '' : ' · no enabled account'}`)));
  warnGroup();
  const pools = groups.filter((g) => g.dedicated);
  $('issue-pools').replaceChildren(el('legend', {}, 'Dedicated pools'),
    ...pools.map((g) => el('label', { class: 'check' }, el('input', { type: 'checkbox', value: g.name, dataset: { pool: g.name } }), g.name)));
  $('issue-pools').hidden = !pools.length;
  $('f-group').replaceChildren(el('option', { value: '' }, 'any'), ...groups.map((g) => el('option', { value: g.name }, g.name)));
}

function limitsOf(prefix) {
  const limits = {};
  for (const [name] of LIMITS) {
    const v = numberOf($(`${prefix}-${name}`));
    if (v !== undefined) limits[name] = v;
  }
  return limits;
}

function badge(k) {
  const [text, cls] = k.status === 'active' && !k.usable ? ['limit reached', 'limited'] : [STATUS[k.status] ?? k.status, k.status];
  return el('div', {}, el('span', { class: `badge ${cls}`, dataset: { field: `key.${k.id}.status` } }, text),
    k.expires_at ? el('span', { class: 'sub', dataset: { field: `key.${k.id}.expires` } }, `${Date.parse(k.expires_at) <= Date.now() ? 'expired' : 'expires'} ${shortTime(k.expires_at)}`) : null);
}

// What was spent is a sum of costs (to the micro-dollar); a limit is a balance (at most 4 decimals).
const spend = (k) => (k.quota ? `${usd(k.quota.used)} of ${balance(k.quota.limit)}` : usd(k.spent));
/** One line per spend window: "1d $0.20 of $1.00". */
const windows = (k) => (k.rate_limits.length ? k.rate_limits.map((w) => el('div', {}, `${w.window} ${usd(w.used)} of ${balance(w.limit)}`)) : '—');

/** The key's group and pools; a group that has no enabled account says so. */
const groupCell = (k) => el('div', {}, [k.group, ...k.pools].join(', '),
  dark(k.group) ? el('span', { class: 'sub bad', dataset: { field: `key.${k.id}.group_warning` } }, 'no enabled account') : null);

function limitsText(l) {
  const parts = [['rpm', l.rpm], ['tpm', l.tpm], ['concurrency', l.concurrency]].filter(([, v]) => v).map(([n, v]) => `${n} ${v}`);
  return parts.join(' · ') || '—';
}

function actions(k) {
  if (k.source !== 'store') return el('span', { class: 'muted' }, 'gateway.yaml');
  const path = `/admin/keys/${encodeURIComponent(k.id)}`;
  const button = (action, text, onclick, cls = 'secondary') => el('button', { type: 'button', class: cls, dataset: { action, key: k.id }, onclick }, text);
  return el('div', { class: 'actions' },
    button('edit', 'Edit', () => run(async () => startEdit(k))),
    button('toggle', k.disabled ? 'Enable' : 'Disable', () => run(async () => { await api('PATCH', path, { disabled: !k.disabled }); await loadKeys(); })),
    button('delete', 'Delete', () => {
      if (!window.confirm(`Delete key ${k.id}? Requests with it are refused at once.`)) return;
      run(async () => { await api('DELETE', path); await loadKeys(); });
    }, 'danger'));
}

export async function loadKeys() {
  ({ keys } = await api('GET', '/admin/keys'));
  const rows = keys.map((k) => [
    { node: el('div', {}, el('div', { dataset: { field: 'key.id' } }, k.id), k.name ? el('div', { class: 'muted' }, k.name) : null), class: 'name' },
    badge(k), groupCell(k),
    { text: spend(k), num: true, field: `key.${k.id}.spend` }, { node: el('div', {}, windows(k)), field: `key.${k.id}.windows` },
    { text: limitsText(k.limits), class: 'wrap' }, { text: shortTime(k.last_used), field: `key.${k.id}.last_used` }, actions(k),
  ]);
  $('keys').replaceChildren(table(['Key', 'Status', 'Group', { text: 'Spent', num: true }, 'Spend windows', 'Limits', 'Last used (UTC)', ''],
    rows, 'No keys.', { stack: true }));
  $('f-key').replaceChildren(el('option', { value: '' }, 'any'), ...keys.map((k) => el('option', { value: k.id }, k.name ? `${k.id} (${k.name})` : k.id)));
}

function startEdit(k) {
  editing = k;
  $('edit-title').textContent = `Edit ${k.id}`;
  $('edit-name').value = k.name ?? '';
  $('edit-models').value = (k.models ?? []).join(', ');
  for (const [name] of LIMITS) $(`edit-${name}`).value = k.limits[name] ?? '';
  $('edit-expires').value = k.expires_at ?? '';
  $('edit').hidden = false;
  $('edit-name').focus();
}

function stopEdit() {
  editing = null;
  $('edit').hidden = true;
  $('edit').reset();
}

$('edit').addEventListener('submit', (event) => {
  event.preventDefault();
  const k = editing;
  if (!k) return;
  const body = {
    name: $('edit-name').value.trim() || null, models: listOf($('edit-models')) ?? null,
    limits: limitsOf('edit'), expires_at: $('edit-expires').value.trim() || null,
  };
  run(async () => { await api('PATCH', `/admin/keys/${encodeURIComponent(k.id)}`, body); stopEdit(); await loadKeys(); });
});
$('edit-cancel').addEventListener('click', stopEdit);
$('keys-refresh').addEventListener('click', () => run(loadKeys));
$('issue-group').addEventListener('change', warnGroup);

$('issue').addEventListener('submit', (event) => {
  event.preventDefault();
  const body = { group: $('issue-group').value, limits: limitsOf('issue') };
  const name = $('issue-name').value.trim();
  if (name) body.name = name;
  const models = listOf($('issue-models'));
  if (models) body.models = models;
  const pools = [...document.querySelectorAll('[data-pool]')].filter((c) => c.checked).map((c) => c.value);
  if (pools.length) body.pools = pools;
  if ($('issue-expires').value.trim()) body.expires_at = $('issue-expires').value.trim();
  run(async () => {
    const issued = await api('POST', '/admin/keys', body);
    $('issued').replaceChildren(`Key ${issued.record.id} issued. Copy it now, it is shown only once: `, el('code', { dataset: { field: 'issued.key' } }, issued.key),
      dark(body.group) ? el('span', { class: 'line bad', dataset: { field: 'issued.warning' } }, darkWarning(body.group)) : null);
    $('issued').hidden = false;
    $('issue').reset();
    warnGroup();
    await loadKeys();
  });
});

