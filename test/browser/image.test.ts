// The image's pages in headless Chromium: the app built as the Dockerfile builds it (npm ci --ignore-scripts, production
// dependencies only) from a clean checkout, started as the image starts it; every page of the shipped gateway.yaml loads,
// the console's tabs and the key-usage page draw their charts, with no failed request and no console error.
// Screenshots: .tap/screenshots/image-*.png.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { parts } from '../../app/registry.ts';
import { loadConfig } from '../../core/config.ts';
import { ADMIN, chat, eventually } from '../admin/helpers.ts';
import { bearer } from '../helpers/http.ts';
import { buildImage, cleanCheckout, runImage } from '../helpers/image.ts';
import { connect, tab } from './console-suite.ts';
import { launch, openPage, screenshot, WIDTHS } from './chromium.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// The routes the shipped gateway.yaml runs: the defaults' and its own.
const { routes } = loadConfig(join(ROOT, 'gateway.yaml'), { ...parts, env: {} }).config;
// The gateway's own GET routes outside the admin API, without parameters: pages a person opens, files the browser fetches.
const own = routes.filter((r) => r.method === 'GET' && r.format === 'gateway' && !r.path.startsWith('/admin/') && !r.path.includes('{')).map((r) => r.path);
const isFile = (path: string) => path.startsWith('/assets/') || /\.\w+$/.test(path);
const PAGES = own.filter((p) => !isFile(p));
const FILES = own.filter(isFile);

/** What each page is asked to show once loaded, so its scripts fetch and draw everything they can. */
const USE: Record<string, (page: Page, t: Test) => Promise<void>> = {
  '/console': async (page, t) => {
    await connect(page);
    await page.waitForFunction(() => (document.getElementById('chart-requests') as any)?.plot, undefined, { timeout: 15_000 });
    t.ok(await page.$('#chart-requests .uplot'), 'the overview charts are drawn with uPlot');
    for (const [name, ready] of [['keys', 'tbody tr'], ['records', 'tbody tr'], ['accounts', 'tbody tr'], ['overview', '.uplot']]) await tab(page, name, ready);
  },
  '/key-usage': async (page, t) => {
    await page.fill('#key', 'sk-demo-key');
    await page.click('#show');
    await page.waitForFunction(() => (document.getElementById('daily-chart') as any)?.plot, undefined, { timeout: 15_000 });
    t.ok(await page.$('#daily-chart .uplot'), 'the daily chart is drawn with uPlot');
  },
};

// npm ci (from the cache) and eight page loads on a shared machine.
t.setTimeout(240_000);
const browser = await launch(t);
if (browser) {
  t.test('built as the image is, from a clean checkout, and started as it starts', async (t) => {
    const image = buildImage(t, cleanCheckout(t, ROOT));
    const run = await runImage(t, image, { env: { GATEWAY_ADMIN_TOKEN: ADMIN } });
    for (const model of ['gpt-4o-mini', 'gpt-4o-mini']) t.equal(await chat(run.url, 'sk-demo-key', model), 200, 'traffic for the charts');
    await eventually(async () => (await (await fetch(run.url + '/v1/usage', { headers: bearer('sk-demo-key') })).json() as any).usage?.total?.requests, (n) => n === 2);

    t.test('every file route answers 200 with its file', async (t) => {
      t.ok(['/assets/uplot.js', '/assets/uplot.css', '/favicon.ico'].every((p) => FILES.includes(p)), `the chart library and the icon among them: ${FILES.join(' ')}`);
      for (const path of FILES) {
        const res = await fetch(run.url + path);
        t.equal(res.status, 200, path);
        t.ok((await res.arrayBuffer()).byteLength > 0, `${path} is not empty`);
      }
    });

    t.ok(['/', '/console', '/docs', '/key-usage'].every((p) => PAGES.includes(p)), `the pages of the shipped config: ${PAGES.join(' ')}`);
    for (const path of PAGES) {
      for (const w of WIDTHS) {
        t.test(`${path} at ${w.width} px: loads and works with no failed request and no console error`, async (t) => {
          const failed: string[] = [];
          const { page, errors } = await openPage(browser, 'about:blank', { viewport: { width: w.width, height: w.height } });
          page.on('requestfailed', (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
          page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.url()}: ${r.status()}`); });
          const res = await page.goto(run.url + path);
          t.equal(res?.status(), 200, path);
          await USE[path]?.(page, t);
          await page.waitForLoadState('networkidle');
          if (await page.$('script[src="/assets/uplot.js"]')) t.equal(await page.evaluate(() => typeof (window as any).uPlot), 'function', 'uPlot loaded');
          // A docs page is long (the README): its first screen is enough to look at.
          const tall = await page.evaluate(() => document.documentElement.scrollHeight > 10 * innerHeight);
          const shot = await screenshot(page, `image-${path.slice(1) || 'front'}-${w.name}`, !tall);
          t.comment(`screenshot: ${shot}`);
          t.same(failed, [], 'no failed request');
          t.same(errors, [], 'no console error');
        });
      }
    }
  });
}
