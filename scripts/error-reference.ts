// Prints the README's error table (markdown) from the error catalogue; `--write` refreshes README.md between its markers.
// Every module that defines errors registers its table when loaded: loading the server loads them all.
import { readFileSync, writeFileSync } from 'node:fs';
import '../app/gateway.ts';
import { errorCatalogue } from '../core/errors.ts';

const BEGIN = '<!-- error-reference:begin -->';
const END = '<!-- error-reference:end -->';

export function errorReference(): string {
  const rows = [...errorCatalogue()].sort(([a, x], [b, y]) => x.area.localeCompare(y.area) || a.localeCompare(b));
  return ['| code | status | raised by | when |', '|---|---|---|---|',
    ...rows.map(([code, { area, entry }]) => `| \`${code}\` | ${[entry.status, ...(entry.also ?? [])].join(', ')} | ${area} | ${entry.doc} |`)].join('\n');
}

export function withErrorReference(readme: string): string {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start === -1 || end === -1) throw new Error('README.md lacks the error-reference markers');
  return `${readme.slice(0, start + BEGIN.length)}\n${errorReference()}\n${readme.slice(end)}`;
}

if (import.meta.main) {
  if (process.argv.includes('--write')) writeFileSync('README.md', withErrorReference(readFileSync('README.md', 'utf8')));
  else console.log(errorReference());
}
