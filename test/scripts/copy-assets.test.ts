// scripts/copy-assets.ts: the chart library's files copied from a node_modules folder into the served folder, or a clear refusal.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ASSETS, copyAssets } from '../../scripts/copy-assets.ts';

t.test('copies each file of the package to its served name', async (t) => {
  const modules = mkdtempSync(join(tmpdir(), 'gw-modules-'));
  for (const [from] of ASSETS) {
    mkdirSync(join(modules, from, '..'), { recursive: true });
    writeFileSync(join(modules, from), `content of ${from}`);
  }
  const target = mkdtempSync(join(tmpdir(), 'gw-vendor-'));
  const copied = copyAssets(modules, target);
  t.same(copied, ASSETS.map(([, to]) => join(target, to)));
  for (const [from, to] of ASSETS) t.equal(readFileSync(join(target, to), 'utf8'), `content of ${from}`);
});

t.test('a missing package is an error naming the files', async (t) => {
  const empty = mkdtempSync(join(tmpdir(), 'gw-modules-'));
  t.throws(() => copyAssets(empty, mkdtempSync(join(tmpdir(), 'gw-vendor-'))), /not found: .*uPlot\.iife\.min\.js/);
});
