// The console's alerts: the webhooks of notifications and their latest deliveries (GET /admin/notifications).
import { el, int, table, time } from './dom.js';
import { api } from './console-api.js';

const $ = (id) => document.getElementById(id);

export async function loadNotifications() {
  const { webhooks, deliveries } = await api('GET', '/admin/notifications');
  $('webhooks').replaceChildren(webhooks.length
    ? el('p', { class: 'muted', dataset: { field: 'webhooks' } }, webhooks.map((h) => `${h.name} (${h.host}): ${h.events.join(', ')}`).join(' · '))
    : el('p', { class: 'muted', dataset: { field: 'webhooks' } }, 'No webhooks: add notifications.webhooks to gateway.yaml.'));
  const rows = deliveries.map((d, i) => {
    const f = (name) => `delivery.${i}.${name}`;
    return [
      { text: time(d.time), field: f('time') }, { text: d.event, field: f('event') }, { text: d.subject, class: 'wrap', field: f('subject') },
      { text: d.hook, field: f('hook') },
      { node: el('span', { class: `badge ${d.result === 'sent' ? 'ready' : 'expired'}` }, d.result), field: f('result') },
      { text: int(d.attempts), num: true, field: f('attempts') },
      { text: d.error ?? (d.status === null ? '—' : String(d.status)), class: 'wrap', field: f('answer') },
    ];
  });
  $('deliveries').replaceChildren(table(['Time (UTC)', 'Event', 'Subject', 'Webhook', 'Result', { text: 'Attempts', num: true }, 'Answer'], rows, 'No deliveries yet.', { stack: true }));
}
