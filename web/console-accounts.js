// The console's accounts: every group's upstream accounts with state, slots, failures and failovers, and a test request.
import { el, int, shortTime, table, time } from './dom.js';
import { api, run } from './console-api.js';

const $ = (id) => document.getElementById(id);

const STATE = { needs_attention: 'needs attention' };

/** The state's badge; under it, until when (and why) a cool-down lasts, or why a disabled account is off. */
function state(a, field) {
  const text = a.state === 'ready' && a.probing ? 'ready (probing)' : STATE[a.state] ?? a.state;
  const until = a.cooling_until ? el('span', { class: 'sub', dataset: { field: `${field}_until` } }, `until ${time(a.cooling_until)}${a.cooldown_reason ? ` · ${a.cooldown_reason}` : ''}`) : null;
  const why = a.disabled ? el('span', { class: 'sub', dataset: { field: `${field}_why` } }, a.disabled.message) : null;
  return el('div', {}, el('span', { class: `badge ${a.state}`, dataset: { field } }, text), until, why);
}

const failures = (f) => Object.entries(f).map(([reason, n]) => `${reason} ${n}`).join(' · ') || '—';

function tester(group, a) {
  const model = el('input', { placeholder: a.test_model ?? 'model', 'aria-label': `Model to test ${a.id} with`, dataset: { model: `${group}/${a.id}` } });
  const out = el('span', { class: 'sub', dataset: { field: `test.${group}.${a.id}` } });
  const button = el('button', {
    type: 'button', class: 'secondary', dataset: { action: 'test', group, account: a.id },
    onclick: () => run(async () => {
      button.disabled = true;
      out.textContent = 'testing…';
      out.className = 'sub';
      try {
        const body = { group, ...(model.value.trim() ? { model: model.value.trim() } : {}) };
        const r = await api('POST', `/admin/accounts/${encodeURIComponent(a.id)}/test`, body);
        out.textContent = r.ok ? `OK ${r.status} in ${int(r.duration_ms)} ms (${r.model})` : `${r.status || 'no answer'}: ${r.message ?? 'failed'} (${int(r.duration_ms)} ms)`;
        out.className = `sub ${r.ok ? 'ok' : 'bad'}`;
      } catch (err) {
        out.textContent = '';
        throw err;
      } finally {
        button.disabled = false;
      }
    }),
  }, 'Test');
  return el('div', {}, el('div', { class: 'actions' }, model, button), out);
}

export async function loadAccounts() {
  const { groups } = await api('GET', `/admin/accounts?window=${encodeURIComponent($('accounts-window').value)}`);
  $('accounts').replaceChildren(...groups.map((g) => {
    const rows = g.accounts.map((a) => {
      const f = (name) => `account.${g.name}.${a.id}.${name}`;
      return [
        { text: a.id, field: f('id') }, { node: state(a, f('state')), class: 'wrap' },
        { text: `${a.in_flight} / ${a.concurrency ?? 'no cap'}`, num: true, field: f('slots') }, `${a.priority} / ${a.weight}`,
        { text: failures(a.failures), class: 'wrap', field: f('failures') }, { text: int(a.failovers), num: true, field: f('failovers') },
        shortTime(a.last_used), a.state === 'disabled' ? el('span', { class: 'muted' }, '—') : tester(g.name, a),
      ];
    });
    const headers = ['Account', 'State', { text: 'Slots in use', num: true }, 'Priority / weight', 'Failures', { text: 'Failovers', num: true }, 'Last used (UTC)', 'Test'];
    return el('div', { class: 'panel' },
      el('h3', {}, `${g.name} `, el('span', { class: 'muted' }, `${g.platform}${g.dedicated ? ' · dedicated' : ''}`),
        g.accounts.some((a) => !a.disabled) ? null : el('span', { class: 'bad', dataset: { field: `group.${g.name}.warning` } }, ' · no enabled account')),
      table(headers, rows, 'No accounts.', { stack: true }));
  }));
}
