// The console's usage records: filters (key, group, model, status, ending, time range), paging, and one record's detail.
import { el, int, shortTime, table, time, usd } from './dom.js';
import { api } from './console-api.js';

const $ = (id) => document.getElementById(id);
let cursor = null;
let records = [];

function query() {
  const q = new URLSearchParams({ limit: '50' });
  for (const [name, id] of [['key', 'f-key'], ['group', 'f-group'], ['model', 'f-model'], ['status', 'f-status'], ['ending', 'f-ending'], ['from', 'f-from'], ['to', 'f-to']]) {
    const v = $(id).value.trim();
    if (v) q.set(name, v);
  }
  return q;
}

const ms = (v) => (v === null || v === undefined ? '—' : `${int(v)} ms`);

function detail(r) {
  const rows = [
    ['Request id', r.request_id], ['Client request id', r.client_request_id ?? '—'], ['Time', time(r.time)], ['Key', r.key_id],
    ['Group', r.group], ['Platform', r.platform], ['Account', r.account || '—'], ['Route', r.route], ['Model', r.model],
    ['Upstream model', r.upstream_model], ['Stream', r.stream ? 'yes' : 'no'], ['Status', String(r.status)], ['Ending', r.ending],
    ['Duration', ms(r.duration_ms)], ['Time to first token', ms(r.ttft_ms)],
    ['Tokens', `${int(r.input_tokens)} in · ${int(r.output_tokens)} out${r.estimated ? ' (estimated)' : ''} · ${int(r.cache_read_tokens)} cache read · ${int(r.cache_write_tokens)} cache write · ${int(r.reasoning_tokens)} reasoning`],
    ['Cost', usd(r.cost)],
  ];
  const field = (label) => `detail.${label.toLowerCase().replaceAll(' ', '_')}`;
  const attempts = r.attempts?.length
    ? table(['#', 'Account', 'Status', 'Outcome'], r.attempts.map((a, i) => [String(i + 1), a.account, String(a.status || 'no answer'), a.reason]))
    : el('p', { class: 'muted' }, 'One attempt, answered by the account above.');
  $('record-detail').replaceChildren(
    el('div', { class: 'row' }, el('h3', {}, 'Record'), el('button', { type: 'button', class: 'secondary', onclick: () => { $('record-detail').hidden = true; } }, 'Close')),
    el('dl', { class: 'detail' }, rows.flatMap(([label, value]) => [el('dt', {}, label), el('dd', { dataset: { field: field(label) } }, value)])),
    el('h3', {}, 'Attempts'), attempts);
  $('record-detail').hidden = false;
  $('record-detail').scrollIntoView({ block: 'nearest' });
}

function render() {
  const N = (text) => ({ text, num: true });
  const rows = records.map((r) => [
    { text: shortTime(r.time), field: 'record.time' }, { text: r.key_id, field: 'record.key' }, { text: r.model, field: 'record.model' }, r.group,
    { ...N(int(r.input_tokens)), field: 'record.in' }, { ...N(int(r.output_tokens)), field: 'record.out' },
    { ...N(usd(r.cost)), field: 'record.cost' }, { text: String(r.status), field: 'record.status' }, r.ending,
    el('button', { type: 'button', class: 'secondary', dataset: { action: 'detail', record: r.request_id }, onclick: () => detail(r) }, 'Details'),
  ]);
  const headers = ['Time (UTC)', 'Key', 'Model', 'Group', N('Tokens in'), N('Tokens out'), N('Cost'), 'Status', 'Ending', ''];
  $('records').replaceChildren(table(headers, rows, 'No usage records match.', { stack: true }));
  $('more').hidden = !cursor;
}

export async function loadRecords(more = false) {
  const q = query();
  if (more && cursor) q.set('cursor', cursor);
  const page = await api('GET', `/admin/usage?${q}`);
  records = more ? [...records, ...page.records] : page.records;
  cursor = page.cursor;
  if (!more) $('record-detail').hidden = true;
  render();
}
