// The key-usage page: asks /v1/usage with the pasted key and renders it. The key lives only in the input and this call.
import { balance, el, errorMessage, int, table, time, usd } from './dom.js';
import { timeChart } from './chart.js';

const form = document.getElementById('lookup');
const input = document.getElementById('key');
const days = document.getElementById('days');
const button = document.getElementById('show');
const errorBox = document.getElementById('error');
const result = document.getElementById('result');

// Days are the visitor's calendar days: the gateway counts them in the browser's time zone.
const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const STATUS = { active: ['active', 'active'], quota_exhausted: ['quota exhausted', 'exhausted'], expired: ['expired', 'expired'] };

/** The badge: the API's status, or "limit reached" when an active key is held back by a spend window. */
function badge(u) {
  const [text, cls] = u.status === 'active' && !u.isValid ? ['limit reached', 'limited'] : STATUS[u.status] ?? [u.status, ''];
  return el('span', { class: `badge ${cls}`, dataset: { field: 'status' } }, text);
}

const card = (label, value, field) => el('div', { class: 'card' }, el('div', { class: 'label' }, label), el('div', { class: 'value', dataset: { field } }, value));

function summary(u) {
  const cards = [card('Requests today', int(u.usage.today.requests), 'summary.today.requests'), card('Cost today', usd(u.usage.today.cost), 'summary.today.cost'),
    card('Requests / min', int(u.usage.rpm), 'rate.rpm'), card('Tokens / min', int(u.usage.tpm), 'rate.tpm'),
    card('Average duration', `${int(u.usage.average_duration_ms)} ms`, 'average_duration_ms')];
  if (u.quota) cards.unshift(card('Quota used', `${usd(u.quota.used)} of ${balance(u.quota.limit)}`, 'quota'), card('Quota remaining', balance(u.quota.remaining), 'quota.remaining'));
  return el('div', { class: 'cards' }, cards);
}

function header(u) {
  const plan = u.mode === 'unrestricted' ? `Unrestricted${u.planName ? ` · ${u.planName}` : ''}` : 'Quota limited';
  const expiry = !u.expires_at ? 'No expiry'
    : Date.parse(u.expires_at) <= Date.now() ? `Expired ${time(u.expires_at)}` : `Expires ${time(u.expires_at)} (${u.days_until_expiry} days left)`;
  return el('div', { class: 'row' }, badge(u), el('strong', { dataset: { field: 'mode' } }, plan), el('span', { class: 'muted', dataset: { field: 'expires_at' } }, expiry));
}

function windows(u) {
  if (!u.rate_limits?.length) return [];
  const rows = u.rate_limits.map((w) => [
    w.window,
    { text: usd(w.used), num: true, field: `window.${w.window}.used` },
    { text: balance(w.limit), num: true, field: `window.${w.window}.limit` },
    { text: balance(w.remaining), num: true, field: `window.${w.window}.remaining` },
    { text: w.reset_at ? time(w.reset_at) : 'not started', field: `window.${w.window}.reset` },
  ]);
  return [el('h2', {}, 'Spend windows'), table(['Window', { text: 'Used', num: true }, { text: 'Limit', num: true }, { text: 'Remaining', num: true }, 'Resets at'], rows, undefined, { stack: true })];
}

const TOTALS = [['Requests', 'requests', int], ['Input tokens', 'input_tokens', int], ['Output tokens', 'output_tokens', int],
  ['Cache read tokens', 'cache_read_tokens', int], ['Cache write tokens', 'cache_creation_tokens', int], ['Total tokens', 'total_tokens', int], ['Cost', 'cost', usd]];

function totals(u) {
  const rows = TOTALS.map(([label, name, fmt]) => [label,
    { text: fmt(u.usage.today[name]), num: true, field: `today.${name}` },
    { text: fmt(u.usage.total[name]), num: true, field: `total.${name}` }]);
  return [el('h2', {}, 'Today and in total'), table(['', { text: 'Today', num: true }, { text: 'Total', num: true }], rows)];
}

const TOKEN_HEADERS = [{ text: 'Requests', num: true }, { text: 'Input', num: true }, { text: 'Output', num: true }, { text: 'Cache read', num: true }, { text: 'Cache write', num: true }];

function models(u) {
  const rows = u.model_stats.map((m) => [m.model,
    { text: int(m.requests), num: true, field: `model.${m.model}.requests` }, { text: int(m.input_tokens), num: true }, { text: int(m.output_tokens), num: true },
    { text: int(m.cache_read_tokens), num: true }, { text: int(m.cache_creation_tokens), num: true },
    { text: int(m.total_tokens), num: true, field: `model.${m.model}.total_tokens` }, { text: usd(m.cost), num: true, field: `model.${m.model}.cost` }]);
  return [el('h2', {}, 'By model'), table(['Model', ...TOKEN_HEADERS, { text: 'Total tokens', num: true }, { text: 'Cost', num: true }], rows, 'No requests in this period.', { stack: true })];
}

function daily(u) {
  const rows = [...u.daily_usage].reverse().map((d) => [d.date,
    { text: int(d.requests), num: true, field: `day.${d.date}.requests` }, { text: int(d.input_tokens), num: true }, { text: int(d.output_tokens), num: true },
    { text: int(d.cache_read_tokens), num: true }, { text: int(d.cache_write_tokens), num: true }, { text: usd(d.cost), num: true, field: `day.${d.date}.cost` }]);
  return [el('h2', {}, 'By day'), table([`Date (${ZONE})`, ...TOKEN_HEADERS, { text: 'Cost', num: true }], rows, 'No requests in this period.', { stack: true })];
}

/** The usage day holding now: the local date at the end of this UTC hour (in :30 and :45 zones a day starts before local midnight). */
function usageToday() {
  const now = Date.now();
  return new Intl.DateTimeFormat('en-CA', { timeZone: ZONE }).format(now + 3_600_000 - (now % 3_600_000) - 1);
}

/** Every day of the period, oldest first: the API's days (it lists only days with traffic), zero on the others. */
function everyDay(u, count) {
  const last = [usageToday(), ...u.daily_usage.map((d) => d.date)].sort().at(-1);
  const end = Date.parse(`${last}T00:00:00Z`);
  const byDate = new Map(u.daily_usage.map((d) => [d.date, d]));
  return Array.from({ length: count }, (_, i) => {
    const date = new Date(end - (count - 1 - i) * 86_400_000).toISOString().slice(0, 10);
    return byDate.get(date) ?? { date, requests: 0, cost: 0 };
  });
}

function chart(u, count) {
  const box = el('div', { id: 'daily-chart', class: 'chart' });
  const panel = el('div', { class: 'panel' }, el('h3', {}, `Requests and cost per day (${ZONE})`), box);
  const days = everyDay(u, count);
  // Drawn once the panel is in the page, so the chart takes its width.
  queueMicrotask(() => timeChart(box, {
    x: days.map((d) => Date.parse(`${d.date}T00:00:00Z`)), format: int, format2: usd, daily: true, whole: true,
    series: [{ label: 'Requests', values: days.map((d) => d.requests), bars: true }, { label: 'Cost', values: days.map((d) => d.cost), scale: 'right' }],
  }));
  return panel;
}

function render(u, count) {
  errorBox.hidden = true;
  result.replaceChildren(header(u), summary(u), chart(u, count), ...windows(u), ...totals(u), ...models(u), ...daily(u));
  result.hidden = false;
}

function showError(message) {
  result.hidden = true;
  result.replaceChildren();
  errorBox.textContent = message;
  errorBox.hidden = false;
}

form.addEventListener('submit', async (event) => {
  // Never let the browser submit the form: that would put the key in a request the page does not control.
  event.preventDefault();
  const key = input.value.trim();
  if (!key) return showError('Paste an API key first.');
  // The previous answer goes at once: it may belong to another key.
  result.hidden = true;
  result.replaceChildren();
  errorBox.hidden = true;
  button.disabled = true;
  try {
    const res = await fetch(`/v1/usage?days=${encodeURIComponent(days.value)}&timezone=${encodeURIComponent(ZONE)}`, {
      headers: { authorization: `Bearer ${key}` }, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer',
    });
    if (!res.ok) showError(await errorMessage(res));
    else render(await res.json(), Number(days.value));
  } catch (err) {
    showError(`The gateway could not be reached: ${err.message}`);
  } finally {
    button.disabled = false;
  }
});

// Leaving the page (or putting it in the back-forward cache) forgets the key and what it showed.
window.addEventListener('pagehide', () => {
  input.value = '';
  result.replaceChildren();
  result.hidden = true;
});
