// The docs pages (/docs, /docs/{page}) of the shipped config in headless Chromium, at a laptop's and a phone's width:
// every page loads with no failed request and no console error (CSP), the body never scrolls sideways (code and tables
// scroll inside their own box), every table-of-contents link lands on an id of the page, and links between pages work.
// Screenshots: .tap/screenshots/docs-*.png.
import { readdirSync } from 'node:fs';
import t from 'tap';
import { startGateway } from '../../app/gateway.ts';
import { createLogger } from '../../core/log.ts';
import { SHIPPED_CONFIG } from '../helpers/e2e.ts';
import { launch, openPage, screenshot, WIDTHS } from './chromium.ts';

const PAGES = ['', ...readdirSync(new URL('../../docs/', import.meta.url)).filter((f) => f.endsWith('.md')).map((f) => f.slice(0, -3)).sort()];

t.setTimeout(180_000);
const browser = await launch(t);
if (browser) {
  const gw = await startGateway({ configFile: SHIPPED_CONFIG, host: '127.0.0.1', port: 0, env: {}, log: createLogger('silent') });
  t.teardown(() => gw.close());

  for (const w of WIDTHS) {
    t.test(`every docs page at ${w.width} px`, async (t) => {
      const { page, errors } = await openPage(browser, 'about:blank', { viewport: { width: w.width, height: w.height } });
      const failed: string[] = [];
      page.on('requestfailed', (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
      page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.url()}: ${r.status()}`); });
      for (const name of PAGES) {
        const path = name ? `/docs/${name}` : '/docs';
        const res = await page.goto(gw.url + path);
        t.equal(res?.status(), 200, path);
        await page.waitForLoadState('networkidle');
        const look = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth, inner: innerWidth,
          styled: getComputedStyle(document.body).fontFamily.includes('system-ui'),
          h1: document.querySelector('main h1')?.textContent ?? '',
          // The table of contents: the first list of in-page links (the README's, or a page's opening one).
          toc: [...document.querySelectorAll<HTMLAnchorElement>('main ul a[href^="#"]')].map((a) => a.getAttribute('href')!.slice(1)),
          missing: [...document.querySelectorAll<HTMLAnchorElement>('main a[href^="#"]')].map((a) => decodeURIComponent(a.getAttribute('href')!.slice(1)))
            .filter((id) => !document.getElementById(id)),
          h2: [...document.querySelectorAll('main h2')].map((h) => h.id),
          // Wide blocks must scroll inside themselves, not push the page.
          wide: [...document.querySelectorAll<HTMLElement>('main pre, main .table')].filter((b) => b.getBoundingClientRect().right > innerWidth + 1).length,
          pageLinks: [...document.querySelectorAll<HTMLAnchorElement>('a[href^="/docs"]')].map((a) => a.getAttribute('href')!),
        }));
        t.ok(look.styled, `${path}: the stylesheet applies`);
        t.ok(look.h1.length > 0, `${path}: its title "${look.h1}"`);
        t.ok(look.scroll <= look.inner, `${path}: no sideways scroll of the body (${look.scroll} <= ${look.inner})`);
        t.equal(look.wide, 0, `${path}: code and tables stay within the width`);
        t.ok(look.toc.length >= 2, `${path}: a table of contents (${look.toc.length} links)`);
        t.strictSame(look.h2.filter((id) => !look.toc.includes(id)), [], `${path}: it names every section`);
        t.strictSame(look.missing, [], `${path}: every in-page link lands on an id`);
        const known = new Set(PAGES.map((p) => (p ? `/docs/${p}` : '/docs')));
        t.strictSame(look.pageLinks.map((l) => l.replace(/#.*$/, '')).filter((l) => !known.has(l)), [], `${path}: links to pages that exist`);
        if (['', 'operate', 'configuration', 'security'].includes(name)) {
          t.comment(`screenshot: ${await screenshot(page, `docs-${name || 'index'}-${w.name}`, false)}`);
        }
      }
      t.same(failed, [], 'no failed request');
      t.same(errors, [], 'no console error (no CSP violation)');
    });
  }

  t.test('a table-of-contents link scrolls to its section; a link to another page\'s section opens it there', async (t) => {
    const { page } = await openPage(browser, gw.url + '/docs/operate', { viewport: WIDTHS[1] });
    await page.click('main ul a[href="#upgrades"]');
    await page.waitForFunction(() => location.hash === '#upgrades');
    const top = await page.evaluate(() => document.getElementById('upgrades')!.getBoundingClientRect().top);
    t.ok(top >= 0 && top < 60, `the Upgrades heading is at the top of the window (${Math.round(top)} px)`);
    await page.goto(gw.url + '/docs');
    await page.click('main a[href="/docs/configuration"]');
    await page.waitForURL(`${gw.url}/docs/configuration`);
    t.equal(await page.textContent('main h1'), 'Configuration reference');
    await page.click('main a[href="#stages"]');
    await page.click('main a[href="#proxy"]');
    t.equal(await page.evaluate(() => location.hash), '#proxy');
    const code = await page.evaluate(() => document.querySelector('main pre') as HTMLElement);
    t.ok(code !== null, 'the page has code blocks');
    t.comment(`screenshot: ${await screenshot(page, 'docs-configuration-proxy-phone', false)}`);
    t.equal((await page.goto(gw.url + '/docs/nothing-here'))?.status(), 404, 'an unknown page is a 404');
  });
}
