// Headless Chromium for the page tests (Debian's /usr/bin/chromium driven by playwright-core); skipped only outside CI.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
export async function openPage(browser: Browser, url: string, options: { timezoneId?: string; viewport?: { width: number; height: number } } = {}): Promise<{ page: Page; errors: string[]; requests: { url: string; headers: Record<string, string> }[] }> {
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

/** The pages' money format: six decimals (four for a quota or window's limit and remainder), trailing zeros trimmed down to two. */
const dollars = (v: number, decimals: number) => `$${v.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
export const usd = (v: number) => dollars(v, 6);
export const balance = (v: number) => dollars(v, 4);

/** The widths every page is checked at: a laptop and a phone. */
export const WIDTHS = [{ name: 'desktop', width: 1280, height: 900 }, { name: 'phone', width: 390, height: 844 }];

/** Where screenshots go: .tap/screenshots/ (kept after the run, not committed), or $SCREENSHOT_DIR. */
export const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? fileURLToPath(new URL('../../.tap/screenshots/', import.meta.url));

/** A full-page screenshot under SCREENSHOTS (of the first screen only with fullPage false: a long text); returns its path. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage });
  return path;
}

/** Elements cut off at the viewport's right edge, and tables wider than their box: every page must fit both widths. */
export async function overflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out: string[] = [];
    if (document.documentElement.scrollWidth > width) out.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
    for (const node of document.querySelectorAll('button, input, select, h1, h2, .card, .panel')) {
      const r = node.getBoundingClientRect();
      if (r.width === 0 || (node as HTMLElement).closest('.scroll')) continue;
      if (r.right > width + 1) out.push(`${node.tagName.toLowerCase()}#${node.id || (node as HTMLElement).dataset.action || ''} ends at ${Math.round(r.right)} > ${width}`);
    }
    // A table wider than its box hides columns behind a scrollbar (the Disable button at 1280 px was one).
    for (const box of document.querySelectorAll('.scroll')) {
      if (box.clientWidth > 0 && box.scrollWidth > box.clientWidth + 1) out.push(`table in #${box.parentElement?.id || '?'} is cut: ${box.scrollWidth} > ${box.clientWidth}`);
    }
    return out;
  }).then(async (out) => [...out, ...await cutPlaceholders(page)]);
}

/** Inputs whose placeholder is wider than the room inside them (the records filter's date example was one). */
export async function cutPlaceholders(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const pen = document.createElement('canvas').getContext('2d')!;
    const out: string[] = [];
    for (const input of document.querySelectorAll<HTMLInputElement>('input[placeholder]')) {
      if (input.getBoundingClientRect().width === 0) continue;
      const s = getComputedStyle(input);
      pen.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
      const room = input.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
      const need = pen.measureText(input.placeholder).width;
      if (need > room) out.push(`the placeholder of input#${input.id || input.dataset.model || ''} is cut: ${Math.ceil(need)} > ${Math.floor(room)} px`);
    }
    return out;
  });
}

/**
 * Pixels of a chart's canvas drawn in one series' colour (within a small distance, for anti-aliasing): whether that
 * series left any mark. The series is found by its label in the chart's legend.
 */
export async function seriesInk(page: Page, chartId: string, label: string): Promise<number> {
  return page.evaluate(({ chartId, label }) => {
    const box = document.getElementById(chartId) as HTMLElement & { plot?: any };
    const plot = box.plot;
    const i = plot.series.findIndex((s: any) => s.label === label);
    if (i < 1) throw new Error(`no series "${label}" in #${chartId}`);
    const stroke = typeof plot.series[i].stroke === 'function' ? plot.series[i].stroke(plot, i) : plot.series[i].stroke;
    const want = [1, 3, 5].map((at) => parseInt(String(stroke).slice(at, at + 2), 16));
    const canvas = box.querySelector('canvas')!;
    const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let p = 0; p < data.length; p += 4) {
      if (data[p + 3] > 200 && Math.abs(data[p] - want[0]) + Math.abs(data[p + 1] - want[1]) + Math.abs(data[p + 2] - want[2]) < 40) n++;
    }
    return n;
  }, { chartId, label });
}
