// The docs as a reader finds them: a README of at most 300 lines that links every page, and pages that each open with
// a table of contents of their own sections, whose links (and the links between pages) land on a heading that exists.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { slugger } from '../../plugins/docs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(ROOT + file, 'utf8');
const PAGES = readdirSync(ROOT + 'docs').filter((f) => f.endsWith('.md')).sort();

/** Outside fenced code: the lines a reader sees as text. */
const prose = (md: string) => md.replace(/^```[\s\S]*?^```/gm, '');
/** The anchors the page's headings get (as GitHub and /docs make them). */
function anchors(md: string): Set<string> {
  const slug = slugger();
  return new Set([...prose(md).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1].replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'))));
}
/** Every Markdown link's target outside code. */
const links = (md: string) => [...prose(md).replace(/`[^`\n]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);

t.test('the README: at most 300 lines, none wider than 200 characters, the two commands, links to every page', async (t) => {
  const readme = read('README.md');
  const lines = readme.split('\n');
  t.ok(lines.length <= 300, `${lines.length} lines`);
  t.strictSame(lines.filter((l) => l.length > 200), [], 'no line longer than 200 characters');
  t.match(readme, 'npm install && npm start');
  t.match(readme, /^npm test\b/m);
  for (const sdk of ['new OpenAI(', 'new Anthropic(', 'new GoogleGenAI(', 'codex', 'claude', 'gemini']) t.match(readme, sdk, `the base URL of ${sdk}`);
  const linked = new Set(links(readme).filter((l) => l.startsWith('docs/')).map((l) => l.replace(/#.*$/, '').slice('docs/'.length)));
  t.strictSame(PAGES.filter((p) => !linked.has(p)), [], 'every page of docs/ is linked from the README');
});

t.test('the pages the issue asks for are there', async (t) => {
  for (const page of ['operate', 'configuration', 'security', 'translation', 'stores', 'performance', 'metrics', 'errors', 'alerts', 'architecture']) {
    t.ok(PAGES.includes(`${page}.md`), `docs/${page}.md`);
  }
  const architecture = read('docs/architecture.md');
  for (const choice of ['undici', 'http-proxy-3', 'node:sqlite', 'pino']) t.match(architecture, choice, `the architecture gives its reason for ${choice}`);
  t.match(architecture, /## Where each stage lives/);
  t.match(architecture, /## A request, start to end/);
});

for (const file of PAGES) {
  t.test(`docs/${file}: opens with a table of contents of its sections, and every link lands`, async (t) => {
    const md = read(`docs/${file}`);
    const text = prose(md);
    const sections = [...text.matchAll(/^## (.+)$/gm)].map((m) => m.index);
    t.ok(sections.length > 0, 'has sections');
    const head = text.slice(0, sections[0]);
    const toc = [...head.matchAll(/^\s*- \[[^\]]+\]\(#([^)]+)\)/gm)].map((m) => m[1]);
    const own = anchors(md);
    const h2 = new Set([...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]));
    const slug = slugger();
    t.strictSame([...h2].map((h) => slug(h.replace(/`/g, ''))).filter((a) => !toc.includes(a)), [], 'the table of contents names every ## section');
    t.strictSame(toc.filter((a) => !own.has(a)), [], 'its links land on headings of the page');
    for (const link of links(md)) {
      if (/^[a-z]+:/.test(link)) continue;
      const [path, anchor] = link.split('#');
      if (path === '') { t.ok(own.has(anchor), `${link} lands on this page`); continue; }
      if (!path.endsWith('.md') || path.includes('/')) continue;
      t.ok(PAGES.includes(path), `${link}: a page`);
      if (anchor) t.ok(anchors(read(`docs/${path}`)).has(anchor), `${link} lands on a heading of ${path}`);
    }
  });
}

t.test('links from the README to a page\'s section land', async (t) => {
  for (const link of links(read('README.md')).filter((l) => l.startsWith('docs/') && l.includes('#'))) {
    const [path, anchor] = link.split('#');
    t.ok(anchors(read(path)).has(anchor), link);
  }
});

t.test('every metric the gateway defines is in docs/metrics.md', async (t) => {
  const metrics = read('docs/metrics.md');
  const defined = new Set<string>();
  for (const dir of ['core', 'plugins', 'adapters', 'app']) {
    for (const f of readdirSync(ROOT + dir, { recursive: true }) as string[]) {
      if (!f.endsWith('.ts')) continue;
      for (const m of read(`${dir}/${f}`).matchAll(/name: '(gateway_[a-z_]+)'/g)) defined.add(m[1]);
    }
  }
  t.ok(defined.size > 20, `${defined.size} metrics defined`);
  t.strictSame([...defined].filter((m) => !metrics.includes(`\`${m}\``)), [], 'each documented');
});
