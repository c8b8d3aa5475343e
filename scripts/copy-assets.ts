// Copies the pages' chart library (uPlot's minified script and stylesheet) from its npm package into web/vendor/, where
// the `page` routes serve it: the gateway serves it itself, never from a CDN. Run by `npm install` (postinstall);
// `--from DIR` takes the package from another node_modules folder.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Package file → served file (web/vendor/ is not committed). */
export const ASSETS: [string, string][] = [
  ['uplot/dist/uPlot.iife.min.js', 'uplot.min.js'],
  ['uplot/dist/uPlot.min.css', 'uplot.min.css'],
];

export function copyAssets(modules: string, target = join(ROOT, 'web', 'vendor')): string[] {
  const missing = ASSETS.map(([from]) => join(modules, from)).filter((f) => !existsSync(f));
  if (missing.length) throw new Error(`not found: ${missing.join(', ')} (is uplot installed?)`);
  mkdirSync(target, { recursive: true });
  return ASSETS.map(([from, to]) => {
    copyFileSync(join(modules, from), join(target, to));
    return join(target, to);
  });
}

if (import.meta.main) {
  const i = process.argv.indexOf('--from');
  const modules = i > 0 ? process.argv[i + 1] : join(ROOT, 'node_modules');
  try {
    for (const file of copyAssets(modules)) console.log(`copied ${file}`);
  } catch (err) {
    // An install without the library still gives a working gateway: the pages show their tables without charts.
    console.warn(`copy-assets: ${(err as Error).message}; the pages will show no charts`);
  }
}
