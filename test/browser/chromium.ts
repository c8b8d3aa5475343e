// Headless Chromium for the page tests (Debian's /usr/bin/chromium driven by playwright-core); skipped only outside CI.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Test } from 'tap';

export const CHROMIUM = '/usr/bin/chromium';

/** The browser, or undefined after ending the test as skipped (no chromium here) or failed (no chromium in CI). */
export async function launch(t: Test): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI) t.fail(`${CHROMIUM} is missing: CI must install chromium (see .ci/run)`);
    else t.plan(0, `${CHROMIUM} not found: install it (apt-get install chromium) to run the browser tests`);
    return undefined;
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  t.teardown(() => browser.close());
  return browser;
}

/** A fresh page (in the given time zone, if any) that records console errors (a CSP violation shows up there) and every request URL it makes. */
export async function openPage(browser: Browser, url: string, options: { timezoneId?: string } = {}): Promise<{ page: Page; errors: string[]; requests: { url: string; headers: Record<string, string> }[] }> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: { url: string; headers: Record<string, string> }[] = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => requests.push({ url: r.url(), headers: r.headers() }));
  await page.goto(url);
  return { page, errors, requests };
}

/** Text of the element carrying data-field="name" (trimmed), or null when absent. */
export async function field(page: Page, name: string): Promise<string | null> {
  const handle = await page.$(`[data-field="${name}"]`);
  return handle ? (await handle.textContent())?.trim() ?? '' : null;
}

/** What the browser keeps for this origin: storage, cookies, IndexedDB names, the URL and the page's HTML. */
export async function traces(page: Page) {
  return page.evaluate(async () => ({
    local: JSON.stringify(Object.entries(localStorage)),
    session: JSON.stringify(Object.entries(sessionStorage)),
    cookie: document.cookie,
    indexedDB: JSON.stringify(await indexedDB.databases()),
    url: location.href,
    history: history.length,
    html: document.documentElement.outerHTML,
  }));
}

/** The pages' money format: six decimals, trailing zeros trimmed down to two. */
export const usd = (v: number) => `$${v.toFixed(6).replace(/0{1,4}$/, '')}`;
