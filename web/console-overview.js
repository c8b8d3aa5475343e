// The console's overview: requests, tokens, cost and error rate of the chosen window, charted by model, group or key, with totals.
import { el, int, percent, table, usd } from './dom.js';
import { timeChart } from './chart.js';
import { api } from './console-api.js';

const $ = (id) => document.getElementById(id);
const card = (label, value, field) => el('div', { class: 'card' }, el('div', { class: 'label' }, label), el('div', { class: 'value', dataset: { field } }, value));
const rate = (errors, requests) => (requests ? errors / requests : null);

export async function loadOverview() {
  const by = $('by').value;
  const s = await api('GET', `/admin/usage/summary?window=${encodeURIComponent($('window').value)}&by=${encodeURIComponent(by)}`);
  const t = s.totals;
  $('totals').replaceChildren(card('Requests', int(t.requests), 'total.requests'), card('Tokens', int(t.tokens), 'total.tokens'),
    card('Cost', usd(t.cost), 'total.cost'), card('Error rate', percent(t.error_rate), 'total.error_rate'));
  // A key's series is labelled with its name (the API's label) when it has one.
  const series = (pick) => s.series.map((x) => ({ label: x.label ?? x.name, values: pick(x) }));
  timeChart($('chart-requests'), { x: s.buckets, series: series((x) => x.requests), format: int, whole: true });
  timeChart($('chart-tokens'), { x: s.buckets, series: series((x) => x.tokens), format: int, whole: true });
  timeChart($('chart-cost'), { x: s.buckets, series: series((x) => x.cost), format: usd });
  timeChart($('chart-errors'), { x: s.buckets, series: series((x) => x.requests.map((r, i) => rate(x.errors[i], r))), format: percent });
  $('split-title').textContent = `By ${by}`;
  const rows = s.series.map((x) => {
    const f = (name) => `split.${x.name}.${name}`;
    // As in the keys table: the id, and under it the key's name.
    const name = el('div', {}, el('div', { dataset: { field: f('name') } }, x.name), x.label ? el('div', { class: 'muted', dataset: { field: f('label') } }, x.label) : null);
    return [name, { text: int(x.totals.requests), num: true, field: f('requests') },
      { text: int(x.totals.errors), num: true, field: f('errors') }, { text: percent(x.totals.error_rate), num: true, field: f('error_rate') },
      { text: int(x.totals.tokens), num: true, field: f('tokens') }, { text: usd(x.totals.cost), num: true, field: f('cost') }];
  });
  const N = (text) => ({ text, num: true });
  $('split').replaceChildren(table([by[0].toUpperCase() + by.slice(1), N('Requests'), N('Errors'), N('Error rate'), N('Tokens'), N('Cost')], rows,
    'No requests in this window.', { stack: true }));
}
