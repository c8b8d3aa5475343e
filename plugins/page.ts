// Stage `page`: serves one static file (a page, its script or stylesheet) read once per config load, with strict browser headers.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineErrors } from '../core/errors.ts';
import type { Plugin } from '../core/types.ts';

interface Options { file: string; content_type: string; optional: boolean }

// Relative files come from the gateway's own directory, where web/ ships: a config copied or mounted elsewhere still finds them.
const HOME = fileURLToPath(new URL('..', import.meta.url));

// Pages take a key or token, so nothing is cached, nothing inline runs, and no referrer leaks the page's URL.
export const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

const errors = defineErrors('page', {
  not_found: { status: 404, doc: 'An optional page file is missing.', message: (file: string) => `${file} is not installed` },
});

export const page: Plugin<Options> = {
  name: 'page',
  description: 'Serves a static file (read once when the config loads). A relative file is resolved from the gateway\'s own directory (where web/ ships); use an absolute path for files elsewhere.',
  schema: {
    type: 'object', additionalProperties: false, required: ['file', 'content_type'],
    properties: {
      file: { type: 'string', minLength: 1, description: 'Path of the file to serve: absolute, or relative to the gateway\'s directory (e.g. web/key-usage.html, or node_modules/PACKAGE/FILE for a file of a dependency).' },
      content_type: { type: 'string', minLength: 1, description: 'Its content-type, e.g. text/html; charset=utf-8.' },
      optional: { type: 'boolean', default: false, description: 'A missing file answers 404 (with one warning at load) instead of failing the config load: for files an installation may leave out.' },
    },
  },
  create(options, env) {
    const path = resolve(HOME, options.file);
    let body: Buffer;
    try { body = readFileSync(path); } catch (err) {
      if (!options.optional || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`page: cannot read ${path}: ${(err as Error).message}`);
      env.log.warn({ file: path }, 'page: optional file missing (answering 404)');
      return async () => { throw errors.not_found(options.file); };
    }
    const headers = { ...PAGE_HEADERS, 'content-type': options.content_type, 'content-length': String(body.length) };
    return async (ctx) => {
      ctx.end('completed');
      ctx.res.writeHead(200, headers);
      ctx.res.end(ctx.req.method === 'HEAD' ? undefined : body);
    };
  },
};
