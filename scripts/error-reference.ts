// Prints the error table (markdown) from the error catalogue; `--write` refreshes docs/errors.md between its markers.
// Every module that defines errors registers its table when loaded: loading the server loads them all.
import { readFileSync, writeFileSync } from 'node:fs';
import '../app/gateway.ts';
import { errorCatalogue } from '../core/errors.ts';

const BEGIN = '<!-- error-reference:begin -->';
const END = '<!-- error-reference:end -->';
/** The page that carries the table (served at /docs/errors). */
export const ERRORS_FILE = 'docs/errors.md';

export function errorReference(): string {
  const rows = [...errorCatalogue()].sort(([a, x], [b, y]) => x.area.localeCompare(y.area) || a.localeCompare(b));
  return ['| code | status | raised by | when |', '|---|---|---|---|',
    ...rows.map(([code, { area, entry }]) => `| \`${code}\` | ${[entry.status, ...(entry.also ?? [])].join(', ')} | ${area} | ${entry.doc} |`)].join('\n');
}

export function withErrorReference(page: string): string {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start === -1 || end === -1) throw new Error(`${ERRORS_FILE} lacks the error-reference markers`);
  return `${page.slice(0, start + BEGIN.length)}\n${errorReference()}\n${page.slice(end)}`;
}

if (import.meta.main) {
  if (process.argv.includes('--write')) writeFileSync(ERRORS_FILE, withErrorReference(readFileSync(ERRORS_FILE, 'utf8')));
  else console.log(errorReference());
}
