// The core is the ground floor: no file under core/ imports a module outside it (the composition root, app/, hands it
// the stages, formats and simulator).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CORE = join(ROOT, 'core');
const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

const sources = (readdirSync(CORE, { recursive: true }) as string[]).filter((f) => /\.(ts|js)$/.test(f)).map((f) => join(CORE, f));

t.test('core/ imports only core/ and packages', async (t) => {
  t.ok(sources.length > 20, 'the core sources are found');
  const escapes: string[] = [];
  for (const file of sources) {
    for (const m of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const spec = m[1] ?? m[2];
      if (!spec.startsWith('.')) continue;
      const target = relative(CORE, resolve(dirname(file), spec));
      if (target.startsWith('..')) escapes.push(`${relative(ROOT, file)} -> ${spec}`);
    }
  }
  t.strictSame(escapes, []);
});
