// Stage `docs`: the README and a folder's Markdown pages as HTML, rendered once per config load; pages by name from the
// files found at load (nothing else reachable), links between pages rewritten, headings with GitHub's anchors.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { startGateway } from '../../app/gateway.ts';
import { linkTarget, slugger } from '../../plugins/docs.ts';

const dir = mkdtempSync(join(tmpdir(), 'gw-docs-'));
mkdirSync(join(dir, 'pages'));
writeFileSync(join(dir, 'secret.md'), '# not a page');
writeFileSync(join(dir, 'README.md'), [
  '# Home', '', 'See [the guide](pages/guide.md#second-part), [a repo file](deploy/README.md) and [a site](https://example.com/x).', '',
  '<p>raw html stays</p>', '',
].join('\n'));
writeFileSync(join(dir, 'pages', 'guide.md'), [
  '# The guide', '', '- [First: `a_b` & c](#first-a_b--c)', '- [Second part](#second-part)', '',
  '## First: `a_b` & c', '', '| a | b |', '|---|---|', '| 1 | 2 |', '', '```sh', 'echo <hi>', '```', '',
  '## Second part', '', 'Back [home](../README.md), to [the other](other.md) and [its end](other.md#end).', '',
  '## Second part', '', 'A repeated heading gets its own anchor.', '',
].join('\n'));
writeFileSync(join(dir, 'pages', 'other.md'), '# Other\n\n## End\n');
writeFileSync(join(dir, 'pages', 'notes.txt'), 'not markdown');

const config = (readme: string) => `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
platforms: { sim: { simulator: true } }
groups: { main: { platform: sim, models: ["*"], accounts: [{ id: s, credential: c }] } }
routes:
  - { method: GET, path: /docs, format: gateway, pipeline: [{ docs: { readme: ${JSON.stringify(readme)}, dir: ${JSON.stringify(join(dir, 'pages'))} } }] }
  - { method: GET, path: "/docs/{page}", format: gateway, pipeline: [{ docs: { readme: ${JSON.stringify(readme)}, dir: ${JSON.stringify(join(dir, 'pages'))}, page_param: page } }] }
  - { method: GET, path: "/raw/*page", format: gateway, pipeline: [{ docs: { readme: ${JSON.stringify(readme)}, dir: ${JSON.stringify(join(dir, 'pages'))}, page_param: page } }] }
`;

async function start() {
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, config(join(dir, 'README.md')));
  const gw = await startGateway({ configFile, host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }) });
  t.teardown(() => gw.close());
  return gw;
}

t.test('GitHub\'s anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered', async (t) => {
  const slug = slugger();
  t.equal(slug('Alerts and guesses: what lives per process'), 'alerts-and-guesses-what-lives-per-process');
  t.equal(slug('Behind a proxy: trusted_proxies'), 'behind-a-proxy-trusted_proxies');
  t.equal(slug('A production gateway.yaml'), 'a-production-gatewayyaml');
  t.equal(slug('Browser apps (CORS)'), 'browser-apps-cors');
  t.equal(slug('The operator\'s side — bounded'), 'the-operators-side--bounded');
  t.equal(slug('Browser apps (CORS)'), 'browser-apps-cors-1');
  t.equal(slug('Browser apps (CORS)'), 'browser-apps-cors-2');
});

t.test('links: pages to /docs/{page}, the README to /docs, repository files unlinked, the rest as written', async (t) => {
  const pages = new Set(['guide', 'other']);
  t.equal(linkTarget('docs/guide.md', 'README.md', pages, 'docs'), '/docs/guide');
  t.equal(linkTarget('docs/guide.md#part', 'README.md', pages, 'docs'), '/docs/guide#part');
  t.equal(linkTarget('other.md', 'docs/guide.md', pages, 'docs'), '/docs/other');
  t.equal(linkTarget('./other.md#x', 'docs/guide.md', pages, 'docs'), '/docs/other#x');
  t.equal(linkTarget('../README.md', 'docs/guide.md', pages, 'docs'), '/docs');
  t.equal(linkTarget('../README.md#run-it', 'docs/guide.md', pages, 'docs'), '/docs#run-it');
  t.equal(linkTarget('missing.md', 'docs/guide.md', pages, 'docs'), null, 'a page not found at load');
  t.equal(linkTarget('../deploy/README.md', 'docs/guide.md', pages, 'docs'), null, 'a file the gateway does not serve');
  t.equal(linkTarget('../../etc/passwd', 'docs/guide.md', pages, 'docs'), null);
  t.equal(linkTarget('#here', 'docs/guide.md', pages, 'docs'), '#here');
  t.equal(linkTarget('https://example.com/a.md', 'docs/guide.md', pages, 'docs'), 'https://example.com/a.md');
  t.equal(linkTarget('/console', 'docs/guide.md', pages, 'docs'), '/console');
});

t.test('serves the index and each page as HTML with the pages\' strict headers', async (t) => {
  const gw = await start();
  const index = await fetch(gw.url + '/docs');
  t.equal(index.status, 200);
  t.equal(index.headers.get('content-type'), 'text/html; charset=utf-8');
  t.equal(index.headers.get('cache-control'), 'no-store');
  t.match(index.headers.get('content-security-policy'), /^default-src 'self';.*script-src 'self'/);
  t.notMatch(index.headers.get('content-security-policy'), /unsafe-inline/);
  const home = await index.text();
  t.match(home, '<title>Home</title>');
  t.match(home, '<h1 id="home">Home</h1>');
  t.match(home, '<a href="/docs/guide#second-part">the guide</a>', 'a link to a page, with its anchor');
  t.match(home, '</a>, a repo file and <a', 'a repository file the gateway does not serve: its text, unlinked');
  t.match(home, '<a href="https://example.com/x">a site</a>');
  t.match(home, '<p>raw html stays</p>');
  t.match(home, '<link rel="stylesheet" href="/assets/docs.css">');
  t.match(home, '<a href="/docs/guide">The guide</a>', 'the list of pages, by title');
  t.match(home, '<a href="/docs/other">Other</a>');
  t.notMatch(home, /secret|notes/, 'only the folder\'s Markdown files are pages');

  const guide = await (await fetch(gw.url + '/docs/guide')).text();
  t.match(guide, '<title>The guide · Home</title>');
  t.match(guide, '<h2 id="first-a_b--c">First: <code>a_b</code> &amp; c</h2>');
  t.match(guide, '<a href="#first-a_b--c">', 'the table of contents points at that id');
  t.match(guide, '<h2 id="second-part">Second part</h2>');
  t.match(guide, '<h2 id="second-part-1">Second part</h2>', 'a repeated heading gets the anchor GitHub gives it');
  t.match(guide, /<div class="table"><table>[\s\S]*<\/table>\s*<\/div>/, 'a table inside its scrolling box');
  t.match(guide, 'echo &lt;hi&gt;', 'code is escaped');
  t.match(guide, '<a href="/docs">home</a>');
  t.match(guide, '<a href="/docs/other">the other</a>');
  t.match(guide, '<a href="/docs/other#end">its end</a>');

  const head = await fetch(gw.url + '/docs/guide', { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength(guide)));
  t.equal(await head.text(), '');
});

t.test('a name not found at load is a 404; nothing else of the disk is reachable', async (t) => {
  const gw = await start();
  for (const path of ['/docs/missing', '/docs/secret', '/docs/notes', '/docs/README', '/docs/guide.md', '/docs/GUIDE', '/docs/__proto__',
    '/docs/constructor', '/docs/..%2Fsecret', '/docs/%2e%2e', '/raw/../secret', '/raw/pages/guide', '/raw/%2e%2e/secret']) {
    const res = await fetch(gw.url + path);
    t.ok(res.status === 404 || res.status === 400, `${path}: ${res.status}`);
    const body = await res.text();
    t.notMatch(body, /not a page|not markdown|<html/, `${path} serves no file`);
  }
  const res = await fetch(gw.url + '/docs/missing');
  t.equal(res.status, 404);
  t.equal(((await res.json()) as { error: { code: string } }).error.code, 'page_not_found');
});

t.test('pages are rendered when the config loads: an edit shows after a reload, a new file becomes a page then', async (t) => {
  const gw = await start();
  writeFileSync(join(dir, 'pages', 'other.md'), '# Other, edited\n');
  writeFileSync(join(dir, 'pages', 'added.md'), '# Added\n');
  t.match(await (await fetch(gw.url + '/docs/other')).text(), '<h1 id="other">Other</h1>', 'not before a reload');
  t.equal((await fetch(gw.url + '/docs/added')).status, 404);
  t.same(await gw.reload(), []);
  t.match(await (await fetch(gw.url + '/docs/other')).text(), '<h1 id="other-edited">Other, edited</h1>');
  t.equal((await fetch(gw.url + '/docs/added')).status, 200);
});
