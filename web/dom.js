// Small helpers shared by the pages: build elements safely (text only, never HTML) and format numbers the same way everywhere.

/** el('td', { class: 'num', dataset: { field: 'x' } }, 'text', child) */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** USD rounded to `decimals`, trailing zeros trimmed down to two. */
const dollars = (v, decimals) => '$' + Number(v ?? 0).toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1');

/** USD with micro-dollar precision and at least two decimals: 0.5 → $0.50, 0.000123 → $0.000123. */
export const usd = (v) => dollars(v, 6);

/** A quota or spend window's limit and what remains of it: at most 4 decimals, 4.913877 → $4.9139. */
export const balance = (v) => dollars(v, 4);

export const int = (v) => String(Math.round(Number(v ?? 0)));

/** An ISO time as "YYYY-MM-DD HH:MM:SS UTC" (the same for every visitor, whatever their locale). */
export const time = (v) => (v === null || v === undefined ? '—' : new Date(v).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'));

/** The same to the minute, for tables ("YYYY-MM-DD HH:MM", UTC). */
export const shortTime = (v) => (v === null || v === undefined ? '—' : new Date(v).toISOString().slice(0, 16).replace('T', ' '));

/**
 * A table with a header row; each row is a list of cells, a cell is text, a node or { text, num, field, class }.
 * `stack`: on a narrow screen each row becomes a card, every cell labelled with its header (page.css).
 */
export function table(headers, rows, empty = 'Nothing yet.', { stack = false } = {}) {
  const labels = headers.map((h) => h.text ?? h);
  const head = el('tr', {}, headers.map((h, i) => el('th', { class: h.num ? 'num' : undefined }, labels[i])));
  const cell = (c, i) => {
    const label = stack ? labels[i] : undefined;
    if (c instanceof Node) return el('td', { 'data-label': label }, c);
    if (typeof c === 'object' && c !== null) {
      return el('td', { class: [c.num ? 'num' : '', c.class ?? ''].join(' ').trim() || undefined, 'data-label': label, dataset: c.field ? { field: c.field } : undefined }, c.node ?? c.text);
    }
    return el('td', { 'data-label': label }, c);
  };
  const body = rows.length
    ? rows.map((cells) => el('tr', {}, cells.map(cell)))
    : [el('tr', {}, el('td', { colspan: headers.length, class: 'muted' }, empty))];
  return el('div', { class: 'scroll' }, el('table', { class: stack ? 'stack' : undefined }, el('thead', {}, head), el('tbody', {}, body)));
}

/** A share as a percentage with one decimal: 0.2 → 20.0%. */
export const percent = (v) => `${(Number(v ?? 0) * 100).toFixed(1)}%`;

/** The message of a gateway error body, whatever its envelope. */
export async function errorMessage(res) {
  try {
    const body = await res.json();
    const e = body.error ?? body;
    return typeof e === 'string' ? e : e.message ?? `HTTP ${res.status}`;
  } catch {
    return `HTTP ${res.status} ${res.statusText}`;
  }
}
