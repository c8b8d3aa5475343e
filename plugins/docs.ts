// Stage `docs`: the README and docs/*.md rendered as HTML pages (marked) once per config load, served by name from that fixed list.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked, Renderer, type Tokens } from 'marked';
import { defineErrors } from '../core/errors.ts';
import type { Plugin } from '../core/types.ts';
import { PAGE_HEADERS } from './page.ts';

interface Options { readme: string; dir: string; page_param?: string; stylesheet: string }

// As page.ts: relative paths come from the gateway's own directory, wherever the config file is.
const HOME = fileURLToPath(new URL('..', import.meta.url));

const errors = defineErrors('docs', {
  page_not_found: { status: 404, doc: 'No docs page of that name (`/docs` lists them).', message: 'no docs page of that name' },
});

interface Source { name: string; file: string; text: string; title: string }

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A heading's words without markup, as GitHub reads them to make its anchor. */
function plainText(tokens: readonly Tokens.Generic[]): string {
  return tokens.map((t) => (t.tokens ? plainText(t.tokens) : typeof t.text === 'string' ? t.text : '')).join('');
}

/** GitHub's anchor of a heading (github-slugger): lower case, punctuation dropped, each space a dash; repeats get -1, -2. */
export function slugger(): (text: string) => string {
  const seen = new Map<string, number>();
  return (text) => {
    const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const n = seen.get(base);
    seen.set(base, (n ?? -1) + 1);
    return n === undefined ? base : `${base}-${n + 1}`;
  };
}

/**
 * Where a link of a page (`from`, a path in the repository) points once served: a page's own address for the README and
 * docs/*.md, unchanged for absolute URLs and anchors, and null for another file of the repository (the gateway does not
 * serve it: the link's text stays, unlinked).
 */
export function linkTarget(href: string, from: string, pages: ReadonlySet<string>, dir: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('/')) return href;
  const cut = href.search(/[?#]/);
  const [path, rest] = cut === -1 ? [href, ''] : [href.slice(0, cut), href.slice(cut)];
  const target = posix.normalize(posix.join(posix.dirname(from), decodeURIComponent(path)));
  if (target === 'README.md') return `/docs${rest}`;
  const name = posix.dirname(target) === dir && target.endsWith('.md') ? posix.basename(target, '.md') : undefined;
  return name !== undefined && pages.has(name) ? `/docs/${name}${rest}` : null;
}

function render(source: Source, pages: ReadonlySet<string>, dir: string): string {
  const slug = slugger();
  const defaults = new Renderer();
  const marked = new Marked({
    gfm: true,
    renderer: {
      heading({ tokens, depth }) {
        return `<h${depth} id="${escapeHtml(slug(plainText(tokens)))}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
      link({ href, title, tokens }) {
        const text = this.parser.parseInline(tokens);
        const to = linkTarget(href, source.file, pages, dir);
        if (to === null) return text;
        return `<a href="${escapeHtml(to)}"${title ? ` title="${escapeHtml(title)}"` : ''}>${text}</a>`;
      },
      // A wide table scrolls inside its box, never the page.
      table(token) { return `<div class="table">${defaults.table.call(this, token)}</div>\n`; },
    },
  });
  return marked.parse(source.text, { async: false });
}

function html(title: string, stylesheet: string, body: string, nav: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeHtml(stylesheet)}">
</head>
<body>
<header><a href="/">Model gateway</a> · <a href="/docs">Docs</a></header>
<main class="doc">
${body}</main>
<footer><nav>${nav}</nav></footer>
</body>
</html>
`;
}

// The routes of one load (/docs and /docs/{page}) share one rendering while no file changed.
let last: { key: string; pages: Map<string, Buffer> } | undefined;

/** Each page's HTML by name ('' is the index: the README and the list of pages), made once per load. */
export function renderDocs(options: { readme: string; dir: string; stylesheet: string }): Map<string, Buffer> {
  const dir = resolve(HOME, options.dir);
  const files = [resolve(HOME, options.readme), ...readdirSync(dir).filter((f) => f.endsWith('.md')).sort().map((f) => resolve(dir, f))];
  const key = JSON.stringify([options, files.map((f) => { const st = statSync(f); return [f, st.mtimeMs, st.size]; })]);
  if (last?.key === key) return last.pages;
  last = { key, pages: renderAll(options, dir) };
  return last.pages;
}

function renderAll(options: { readme: string; dir: string; stylesheet: string }, dir: string): Map<string, Buffer> {
  const docsDir = posix.basename(dir);
  const read = (name: string, file: string, path: string): Source => {
    const text = readFileSync(path, 'utf8');
    return { name, file, text, title: /^# (.+)$/m.exec(text)?.[1].replace(/`/g, '') ?? name };
  };
  const sources = readdirSync(dir).filter((f) => f.endsWith('.md')).sort()
    .map((f) => read(f.slice(0, -3), `${docsDir}/${f}`, resolve(dir, f)));
  const readme = read('', 'README.md', resolve(HOME, options.readme));
  const names = new Set(sources.map((s) => s.name));
  const list = sources.map((s) => `<li><a href="/docs/${escapeHtml(s.name)}">${escapeHtml(s.title)}</a></li>`).join('');
  const nav = `<h2>Docs</h2><ul><li><a href="/docs">README</a></li>${list}</ul>`;
  const out = new Map<string, Buffer>();
  out.set('', Buffer.from(html(readme.title, options.stylesheet, render(readme, names, docsDir), nav)));
  for (const s of sources) out.set(s.name, Buffer.from(html(`${s.title} · ${readme.title}`, options.stylesheet, render(s, names, docsDir), nav)));
  return out;
}

export const docs: Plugin<Options> = {
  name: 'docs',
  description: 'Serves the README and the Markdown pages of a folder as HTML, rendered once when the config loads: the index (the README and a list of the pages), or with page_param the page its route names. Only the files found at load are pages.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      readme: { type: 'string', minLength: 1, default: 'README.md', description: 'The Markdown file of the index page, relative to the gateway\'s directory.' },
      dir: { type: 'string', minLength: 1, default: 'docs', description: 'The folder whose *.md files are the pages (each named by its file, without .md), relative to the gateway\'s directory.' },
      page_param: { type: 'string', minLength: 1, description: 'The route parameter naming the page (e.g. page for /docs/{page}). Absent: the index page.' },
      stylesheet: { type: 'string', minLength: 1, default: '/assets/docs.css', description: 'URL of the pages\' stylesheet.' },
    },
  },
  create(options) {
    const pages = renderDocs(options);
    const param = options.page_param;
    return async (ctx) => {
      const name = param === undefined ? '' : ctx.params[param] ?? '';
      // Names are looked up, never joined into a path: a page is one of the files found at load, or nothing.
      const body = name === '' && param !== undefined ? undefined : pages.get(name);
      if (body === undefined) throw errors.page_not_found();
      ctx.end('completed');
      ctx.res.writeHead(200, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length) });
      ctx.res.end(ctx.req.method === 'HEAD' ? undefined : body);
    };
  },
};
