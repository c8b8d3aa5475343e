// Router: literal and dynamic patterns, captures ({name}, {name*}, *name), percent-decoding, 404/405, HEAD, duplicates, malformed patterns.
import t from 'tap';
import { compilePattern, Router, type RouteMiss } from '../../core/router.ts';
import { GatewayError } from '../../core/errors.ts';

/** The GatewayError a match throws; throws (failing the test) when the match succeeds or throws something else. */
function matchError<R>(router: Router<R>, method: string, path: string): GatewayError {
  let m: unknown;
  try {
    m = router.match(method, path);
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw new Error(`expected a GatewayError, got ${String(err)}`);
  }
  throw new Error(`expected ${method} ${path} to throw, matched ${JSON.stringify(m)}`);
}

/** The match, or the error it threw (for assertions that must run even while a known bug makes them fail). */
function tryMatch<R>(router: Router<R>, method: string, path: string): unknown {
  try { return router.match(method, path); } catch (err) { return err instanceof GatewayError ? { status: err.status, headers: err.headers } : err; }
}

t.test('literal path matches exactly, with no params', async (t) => {
  const r = new Router<string>();
  r.add('POST', '/v1/chat/completions', 'chat');
  r.add('GET', '/v1/models', 'models');
  t.strictSame(r.match('POST', '/v1/chat/completions'), { route: 'chat', params: {} });
  t.strictSame(r.match('GET', '/v1/models'), { route: 'models', params: {} });
  t.equal(matchError(r, 'GET', '/v1/models/').status, 404, 'a trailing slash is another path');
  t.equal(matchError(r, 'GET', '/V1/models').status, 404, 'paths are case-sensitive');
  t.equal(matchError(r, 'POST', '/v1/chat/completions/x').status, 404);
});

t.test('{name} captures exactly one segment', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/v1/models/{model}', 'model');
  r.add('GET', '/files/{id}/content', 'content');
  t.strictSame(r.match('GET', '/v1/models/gpt-4o-mini'), { route: 'model', params: { model: 'gpt-4o-mini' } });
  t.strictSame(r.match('GET', '/files/file-123/content'), { route: 'content', params: { id: 'file-123' } });
  t.equal(matchError(r, 'GET', '/v1/models/a/b').status, 404, 'a capture never spans a slash');
  t.equal(matchError(r, 'GET', '/v1/models/').status, 404, 'a capture is never empty');
  t.equal(matchError(r, 'GET', '/files//content').status, 404);
});

t.test('Gemini method suffixes: two routes, each matching only its own suffix, model captured up to the colon', async (t) => {
  const r = new Router<string>();
  r.add('POST', '/v1beta/models/{model}:generateContent', 'generate');
  r.add('POST', '/v1beta/models/{model}:streamGenerateContent', 'stream');
  t.strictSame(r.match('POST', '/v1beta/models/gemini-2.5-pro:generateContent'), { route: 'generate', params: { model: 'gemini-2.5-pro' } });
  t.strictSame(r.match('POST', '/v1beta/models/gemini-2.5-flash:streamGenerateContent'), { route: 'stream', params: { model: 'gemini-2.5-flash' } });
  const e = matchError(r, 'POST', '/v1beta/models/gemini-2.5-pro:countTokens');
  t.equal(e.status, 404);
  t.equal(e.code, 'route_not_found');
  t.equal(matchError(r, 'POST', '/v1beta/models/gemini-2.5-pro').status, 404, 'the suffix is required');
  t.equal(matchError(r, 'POST', '/v1beta/models/a:b:generateContent').status, 404, 'the capture stops at the first colon');
});

t.test('{name*} captures one whole segment, colons included', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/v1/models/{model*}', 'model');
  const ft = 'ft:gpt-4o-mini:org::abc123';
  t.strictSame(r.match('GET', `/v1/models/${ft}`), { route: 'model', params: { model: ft } });
  t.strictSame(r.match('GET', '/v1/models/ft%3Agpt-4o-mini%3Aorg%3A%3Aabc123').params, { model: ft }, 'the percent-encoded form too');
  t.strictSame(r.match('GET', '/v1/models/gpt-4o-mini').params, { model: 'gpt-4o-mini' }, 'a plain id as before');
  t.strictSame(r.match('GET', '/v1/models/:').params, { model: ':' });
  t.equal(matchError(r, 'GET', '/v1/models/ft:a/b').status, 404, 'a capture never spans a slash');
  t.equal(matchError(r, 'GET', '/v1/models/').status, 404, 'a capture is never empty');
  const plain = new Router<string>();
  plain.add('GET', '/v1/models/{model}', 'model');
  t.equal(matchError(plain, 'GET', `/v1/models/${ft}`).status, 404, '{name} still stops at the colon');
});

t.test('{name*} followed by a literal in its segment: the literal is matched at the end', async (t) => {
  const r = new Router<string>();
  r.add('POST', '/m/{model*}:generateContent', 'generate');
  t.strictSame(r.match('POST', '/m/a:b:generateContent').params, { model: 'a:b' });
  t.strictSame(r.match('POST', '/m/a:generateContent').params, { model: 'a' });
  t.equal(matchError(r, 'POST', '/m/a:b').status, 404);
});

t.test('literal suffixes win over {name*} whatever the declaration order', async (t) => {
  const r = new Router<string>();
  r.add('POST', '/v1/models/{model*}', 'greedy-post');
  r.add('GET', '/v1/models/{model*}', 'model');
  r.add('POST', '/v1/models/{model}:generateContent', 'generate');
  r.add('POST', '/v1/models/{model}:streamGenerateContent', 'stream');
  t.strictSame(r.match('POST', '/v1/models/gemini-2.5-pro:generateContent'), { route: 'generate', params: { model: 'gemini-2.5-pro' } });
  t.strictSame(r.match('POST', '/v1/models/gemini-2.5-pro:streamGenerateContent'), { route: 'stream', params: { model: 'gemini-2.5-pro' } });
  t.strictSame(r.match('POST', '/v1/models/ft:a:b'), { route: 'greedy-post', params: { model: 'ft:a:b' } }, 'what no suffix route takes');
  t.strictSame(r.match('GET', '/v1/models/ft:a::b'), { route: 'model', params: { model: 'ft:a::b' } });

  const shipped = new Router<string>();
  shipped.add('POST', '/v1/models/{model}:generateContent', 'generate');
  shipped.add('GET', '/v1/models/{model*}', 'model');
  t.strictSame(shipped.match('POST', '/v1/models/gemini-2.5-flash:generateContent').route, 'generate');
  t.strictSame(shipped.match('GET', '/v1/models/ft:gpt-4o-mini:org::abc123').route, 'model');
  const e = matchError(shipped, 'POST', '/v1/models/ft:gpt-4o-mini:org::abc123');
  t.equal(e.status, 405, 'a path only the GET route takes');
  t.strictSame(e.headers, { allow: 'GET' });
  const verb = matchError(shipped, 'GET', '/v1/models/gemini-2.5-flash:generateContent');
  t.equal(verb.status, 405, 'a path the suffix route matches is not taken by {name*}, even for another method');
  t.strictSame(verb.headers, { allow: 'POST' });
  const literal = new Router<string>();
  literal.add('POST', '/v1/models/batch', 'batch');
  literal.add('GET', '/v1/models/{model*}', 'model');
  t.strictSame(matchError(literal, 'GET', '/v1/models/batch').headers, { allow: 'POST' }, 'nor a literal path');
});

t.test('*rest captures the remainder including slashes', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/responses/*subpath', 'responses');
  r.add('POST', '/proxy/{platform}/*rest', 'proxy');
  t.strictSame(r.match('GET', '/responses/resp_1/input_items/x'), { route: 'responses', params: { subpath: 'resp_1/input_items/x' } });
  t.strictSame(r.match('GET', '/responses/resp_1'), { route: 'responses', params: { subpath: 'resp_1' } });
  t.equal(matchError(r, 'GET', '/responses/').status, 400, 'an empty capture is refused');
  t.strictSame(r.match('POST', '/proxy/openai/v1/chat/completions'), { route: 'proxy', params: { platform: 'openai', rest: 'v1/chat/completions' } });
  t.equal(matchError(r, 'GET', '/responses').status, 404, 'the slash before *rest is literal');
});

t.test('params are percent-decoded', async (t) => {
  const r = new Router<string>();
  r.add('POST', '/v1beta/models/{model}:generateContent', 'generate');
  r.add('GET', '/files/*rest', 'files');
  t.strictSame(r.match('POST', '/v1beta/models/gemini%2D1.5%20pro:generateContent').params, { model: 'gemini-1.5 pro' });
  t.strictSame(r.match('POST', '/v1beta/models/a%3Ab:generateContent').params, { model: 'a:b' }, 'an encoded colon is part of the capture');
  t.strictSame(r.match('POST', '/v1beta/models/caf%C3%A9:generateContent').params, { model: 'café' });
  t.strictSame(r.match('GET', '/files/a%20b/c%2Dd').params, { rest: 'a b/c-d' });
});

t.test('a capture never changes the shape of a path: separators, dot segments and control characters are refused (400)', async (t) => {
  const r = new Router<string>();
  r.add('POST', '/v1beta/models/{model}:generateContent', 'generate');
  r.add('POST', '/v1/responses/*subpath', 'subpaths');
  r.add('GET', '/v1/responses/{id}', 'read');
  const refused = [
    ['POST', '/v1beta/models/a%2Fb:generateContent', 'an encoded slash'],
    ['POST', '/v1beta/models/a%5Cb:generateContent', 'an encoded backslash'],
    ['POST', '/v1beta/models/%2E%2E:generateContent', 'an encoded dot segment'],
    ['POST', '/v1beta/models/bad%E0%A4%A:generateContent', 'a malformed escape'],
    ['POST', '/v1/responses/..%2F..%2Fv1%2Fchat%2Fcompletions', 'encoded slashes in a rest capture'],
    ['POST', '/v1/responses/../../v1/chat/completions', 'dot segments in a rest capture'],
    ['POST', '/v1/responses/abc/./cancel', 'a single-dot segment'],
    ['POST', '/v1/responses/abc//cancel', 'an empty segment'],
    ['POST', '/v1/responses/abc%3Fx=1', 'an encoded query mark'],
    ['POST', '/v1/responses/abc%23frag', 'an encoded fragment mark'],
    ['POST', '/v1/responses/abc%0D%0Ax-injected:1', 'encoded CR LF'],
    ['POST', '/v1/responses/abc%00', 'an encoded NUL'],
    ['GET', '/v1/responses/%2e%2e', 'an encoded dot segment as the whole capture'],
    ['GET', '/v1/responses/.', 'a single dot as the whole capture'],
  ] as const;
  for (const [method, path, what] of refused) {
    const e = matchError(r, method, path);
    t.equal(e.status, 400, what);
    t.equal(e.code, 'invalid_path', what);
    t.equal((e as RouteMiss<string>).near, path.startsWith('/v1beta') ? 'generate' : method === 'GET' ? 'read' : 'subpaths', `${what}: the error names its route`);
  }
  t.strictSame(r.match('POST', '/v1/responses/resp_1/cancel').params, { subpath: 'resp_1/cancel' });
  t.strictSame(r.match('POST', '/v1/responses/a.b/c..d').params, { subpath: 'a.b/c..d' }, 'dots inside a segment are fine');
});

t.test('a route may restrict a capture (params): a value breaking it is a 404 on that route', async (t) => {
  const r = new Router<string>();
  r.add('POST', '/v1/responses/*subpath', 'subpaths', { subpath: /^(?:resp_\w+(?:\/cancel)?|input_tokens)$/ });
  t.strictSame(r.match('POST', '/v1/responses/resp_1/cancel').params, { subpath: 'resp_1/cancel' });
  t.strictSame(r.match('POST', '/v1/responses/input_tokens').params, { subpath: 'input_tokens' });
  const e = matchError(r, 'POST', '/v1/responses/resp_1/files');
  t.equal(e.status, 404);
  t.equal((e as RouteMiss<string>).near, 'subpaths');
});

t.test('a miss names the nearest route (longest literal prefix), so its error speaks that route\'s format', async (t) => {
  const r = new Router<string>();
  r.add('POST', '/v1/chat/completions', 'chat');
  r.add('POST', '/v1beta/models/{model}:generateContent', 'gemini');
  r.add('GET', '/admin/keys', 'admin');
  t.equal((matchError(r, 'POST', '/v1beta/models/x:nothing') as RouteMiss<string>).near, 'gemini');
  t.equal((matchError(r, 'GET', '/v1beta/models/x:generateContent') as RouteMiss<string>).near, 'gemini', 'a 405 names the route of the other method');
  t.equal((matchError(r, 'GET', '/v1/chat/completions') as RouteMiss<string>).near, 'chat');
  t.equal((matchError(r, 'DELETE', '/admin/keys/9') as RouteMiss<string>).near, 'admin');
  t.equal((matchError(r, 'GET', '/nothing') as RouteMiss<string>).near, undefined);
});

t.test('unknown path → 404 route_not_found naming the path', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/v1/models', 'models');
  r.add('GET', '/v1/models/{model}', 'model');
  const e = matchError(r, 'POST', '/v2/nothing');
  t.ok(e instanceof GatewayError);
  t.equal(e.status, 404);
  t.equal(e.code, 'route_not_found');
  t.equal(e.message, 'No route for /v2/nothing');
  t.strictSame(e.headers, {});
  t.equal(matchError(new Router<string>(), 'GET', '/').status, 404, 'an empty router answers 404');
});

t.test('known path with the wrong method → 405 with an allow header', async (t) => {
  const r = new Router<string>();
  r.add('POST', '/v1/chat/completions', 'chat');
  r.add('PUT', '/v1/chat/completions', 'chat-put');
  r.add('GET', '/v1/models/{model}', 'get-model');
  r.add('DELETE', '/v1/models/{model}', 'delete-model');

  const literal = matchError(r, 'GET', '/v1/chat/completions');
  t.equal(literal.status, 405);
  t.equal(literal.code, 'method_not_allowed');
  t.strictSame(literal.headers, { allow: 'POST, PUT' });
  t.equal(literal.message, 'Method GET is not allowed here; use POST, PUT');

  const dynamic = matchError(r, 'POST', '/v1/models/gpt-4o');
  t.equal(dynamic.status, 405);
  t.equal(dynamic.code, 'method_not_allowed');
  t.strictSame(dynamic.headers, { allow: 'GET, DELETE' });
});

t.test('405 allow header lists each method once when several patterns match', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/a/{x}', 'one');
  r.add('GET', '/a/*rest', 'rest');
  r.add('PUT', '/a/*rest', 'rest-put');
  const e = matchError(r, 'POST', '/a/b');
  t.equal(e.status, 405);
  t.strictSame(e.headers, { allow: 'GET, PUT' }, 'each method once');
});

t.test('HEAD falls back to GET on literal routes, but not to other methods', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/v1/models', 'models');
  r.add('POST', '/v1/chat/completions', 'chat');
  r.add('HEAD', '/explicit', 'head');
  r.add('GET', '/explicit', 'get');
  t.strictSame(r.match('HEAD', '/v1/models'), { route: 'models', params: {} });
  t.strictSame(r.match('HEAD', '/explicit'), { route: 'head', params: {} }, 'a declared HEAD route wins over GET');
  const e = matchError(r, 'HEAD', '/v1/chat/completions');
  t.equal(e.status, 405);
  t.strictSame(e.headers, { allow: 'POST' });
});

t.test('HEAD falls back to GET on dynamic routes too', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/v1/models/{model}', 'model');
  t.strictSame(tryMatch(r, 'HEAD', '/v1/models/gpt-4o'), { route: 'model', params: { model: 'gpt-4o' } }, 'HEAD served by the GET route');
});

t.test('first declared wins for duplicate method + pattern', async (t) => {
  const r = new Router<string>();
  r.add('POST', '/v1/chat/completions', 'first');
  r.add('POST', '/v1/chat/completions', 'second');
  r.add('GET', '/m/{model}', 'first-dyn');
  r.add('GET', '/m/{model}', 'second-dyn');
  r.add('GET', '/m/{other}', 'third-dyn');
  t.equal(r.match('POST', '/v1/chat/completions').route, 'first');
  t.strictSame(r.match('GET', '/m/x'), { route: 'first-dyn', params: { model: 'x' } });
});

t.test('earlier dynamic patterns are tried first; a later one still serves other methods', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/a/{x}', 'get-x');
  r.add('POST', '/a/*rest', 'post-rest');
  t.strictSame(r.match('GET', '/a/b'), { route: 'get-x', params: { x: 'b' } });
  t.strictSame(r.match('POST', '/a/b'), { route: 'post-rest', params: { rest: 'b' } }, 'a method miss on the first pattern falls through');
});

t.test('the same shape with other parameter names keeps each route\'s own names', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/things/{thing_id}', 'get');
  r.add('DELETE', '/things/{id}', 'delete');
  t.strictSame(r.match('GET', '/things/7'), { route: 'get', params: { thing_id: '7' } });
  t.strictSame(r.match('DELETE', '/things/7'), { route: 'delete', params: { id: '7' } }, 'params named by the DELETE route');
});

t.test('a literal route does not hide a dynamic route for another method', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/v1/models/list', 'literal-get');
  r.add('POST', '/v1/models/{model}', 'dynamic-post');
  t.strictSame(r.match('GET', '/v1/models/list'), { route: 'literal-get', params: {} });
  t.strictSame(tryMatch(r, 'POST', '/v1/models/list'), { route: 'dynamic-post', params: { model: 'list' } }, 'POST reaches the dynamic route');
});

t.test('regex metacharacters in literal parts are matched literally', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/a.b/{x}', 'dot');
  r.add('GET', '/c+d/(e)/{y}$', 'meta');
  t.strictSame(r.match('GET', '/a.b/1'), { route: 'dot', params: { x: '1' } });
  t.equal(matchError(r, 'GET', '/aXb/1').status, 404);
  t.strictSame(r.match('GET', '/c+d/(e)/2$'), { route: 'meta', params: { y: '2' } });
  t.equal(matchError(r, 'GET', '/ccd/(e)/2$').status, 404);
});

t.test('compilePattern', async (t) => {
  t.equal(compilePattern('/v1/models'), null, 'a pattern without parameters is literal');
  const gemini = compilePattern('/v1beta/models/{model}:generateContent');
  t.strictSame(gemini?.names, ['model']);
  t.equal(gemini?.regex.test('/v1beta/models/gemini-pro:generateContent'), true);
  t.equal(gemini?.regex.exec('/v1beta/models/gemini-pro:generateContent')?.[1], 'gemini-pro');
  t.strictSame(compilePattern('/p/{a}/{b}/*rest')?.names, ['a', 'b', 'rest']);
  t.strictSame(compilePattern('/files/*rest')?.names, ['rest']);
  t.equal(compilePattern('/v1/models/{model}')?.wholeSegment, false);
  const whole = compilePattern('/v1/models/{model*}');
  t.strictSame(whole?.names, ['model']);
  t.equal(whole?.wholeSegment, true);
  t.equal(whole?.regex.exec('/v1/models/ft:a::b')?.[1], 'ft:a::b');

  t.throws(() => compilePattern('v1/models'), { message: 'a path pattern must start with "/"' });
  t.throws(() => compilePattern(''), { message: 'a path pattern must start with "/"' });
  t.throws(() => compilePattern('/a/{x'), { message: 'unexpected "{" at offset 3: use {name} for one segment, {name*} for a whole segment with its colons, or *name at the end for the rest' });
  t.throws(() => compilePattern('/a/x}'), { message: 'unexpected "}" at offset 4: use {name} for one segment, {name*} for a whole segment with its colons, or *name at the end for the rest' });
  t.throws(() => compilePattern('/a/*rest/more'), { message: 'unexpected "*" at offset 3: use {name} for one segment, {name*} for a whole segment with its colons, or *name at the end for the rest' });
  t.throws(() => compilePattern('/a/*'), { message: 'unexpected "*" at offset 3: use {name} for one segment, {name*} for a whole segment with its colons, or *name at the end for the rest' });
  t.throws(() => compilePattern('/a/{}'), { message: /^unexpected "\{" at offset 3/ });
  t.throws(() => compilePattern('/a/{1x}'), { message: /^unexpected "\{" at offset 3/ });
  t.throws(() => compilePattern('/a/{x}/{x}'), { message: 'parameter "x" appears twice' });
  t.throws(() => compilePattern('/a/{x}/*x'), { message: 'parameter "x" appears twice' });
  t.throws(() => compilePattern('/a/{x*}/{x}'), { message: 'parameter "x" appears twice' });
  t.throws(() => compilePattern('/a/{*x}'), { message: /^unexpected "\{" at offset 3/ });
  t.throws(() => compilePattern('/a/{x**}'), { message: /^unexpected "\{" at offset 3/ });
  t.throws(() => new Router<string>().add('GET', '/a/{x', 'r'), { message: /^unexpected "\{"/ }, 'Router.add rejects malformed patterns');
});
