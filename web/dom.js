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

/** USD with micro-dollar precision and at least two decimals: 0.5 → $0.50, 0.000123 → $0.000123. */
export const usd = (v) => '$' + Number(v ?? 0).toFixed(6).replace(/0{1,4}$/, '');

export const int = (v) => String(Math.round(Number(v ?? 0)));

/** An ISO time as "YYYY-MM-DD HH:MM:SS UTC" (the same for every visitor, whatever their locale). */
export const time = (v) => (v === null || v === undefined ? '—' : new Date(v).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'));

/** A table with a header row; each row is a list of cells, a cell is text or { text, num, field }. */
export function table(headers, rows, empty = 'Nothing yet.') {
  const head = el('tr', {}, headers.map((h) => el('th', { class: h.num ? 'num' : undefined }, h.text ?? h)));
  const body = rows.length
    ? rows.map((cells) => el('tr', {}, cells.map((c) => (c instanceof Node ? el('td', {}, c)
      : typeof c === 'object' && c !== null ? el('td', { class: c.num ? 'num' : undefined, dataset: c.field ? { field: c.field } : undefined }, c.text)
        : el('td', {}, c)))))
    : [el('tr', {}, el('td', { colspan: headers.length, class: 'muted' }, empty))];
  return el('div', { class: 'scroll' }, el('table', {}, el('thead', {}, head), el('tbody', {}, body)));
}

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
