// GET / on the shipped gateway.yaml in headless Chromium: a small page linking the key-usage page, the console and the
// docs (/docs: the README as HTML), with the base URLs at the gateway's own address; no 404, nothing inline (CSP).
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startGateway } from '../../app/gateway.ts';
import { createLogger } from '../../core/log.ts';
import { SHIPPED_CONFIG } from '../helpers/e2e.ts';
import { launch, openPage } from './chromium.ts';

const browser = await launch(t);
if (browser) {
  const gw = await startGateway({ configFile: SHIPPED_CONFIG, host: '127.0.0.1', port: 0, env: {}, log: createLogger('silent') });
  t.teardown(() => gw.close());

  t.test('the front page links the two pages and the docs, and shows this gateway\'s base URLs', async (t) => {
    const res = await fetch(gw.url + '/');
    t.equal(res.status, 200, 'GET / is a page, not a 404');
    t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');

    const { page, errors } = await openPage(browser, gw.url + '/');
    t.equal(await page.title(), 'Model gateway');
    const links = await page.$$eval('a', (as) => as.map((a) => [a.getAttribute('href'), a.querySelector('.value')?.textContent]));
    t.same(links, [['/key-usage', 'Key usage'], ['/console', 'Console'], ['/docs', 'Docs']]);
    const bases = await page.$$eval('td code', (cs) => cs.map((c) => c.textContent));
    t.same(bases, [`${gw.url}/v1`, gw.url, gw.url], 'the base URLs name the address the browser reached');
    const shot = join(process.env.SCREENSHOT_DIR ?? tmpdir(), 'front-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    t.comment(`screenshot: ${shot}`);
    t.same(errors, [], 'no console errors (no CSP violation)');

    await page.click('text=Key usage');
    t.equal(await page.textContent('h1'), 'API key usage');
    await page.goBack();
    await page.click('text=Console');
    t.equal(await page.textContent('h1'), 'Gateway console');
    await page.goBack();
    const [docs] = await Promise.all([page.waitForResponse((r) => r.url() === `${gw.url}/docs`), page.click('text=Docs')]);
    t.equal(docs.status(), 200);
    t.equal(docs.headers()['content-type'], 'text/html; charset=utf-8');
    const title = /^# (.+)$/m.exec(readFileSync(new URL('../../README.md', import.meta.url), 'utf8'))![1];
    t.equal(await page.textContent('main h1'), title, 'the docs open on the README, rendered');
    t.ok(await page.$('a[href="/docs/operate"]'), 'with links to the other pages');
  });
}
