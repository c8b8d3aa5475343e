// End to end: refusals and upstream errors reach each official SDK as its own error class — disallowed model (NotFound),
// wrong platform for the route's format (BadRequest), images on a non-OpenAI platform (the established 404 body), and an
// upstream 429 (RateLimit, answered by the pool as ALL_ACCOUNTS_RATE_LIMITED). Runs the shipped routes and pipelines on a
// config whose groups add platforms that serve a single format.
import { readFileSync } from 'node:fs';
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import YAML from 'yaml';
import { withLoggedGateway, writeConfig } from '../helpers/gateway.ts';
import { rejection, SHIPPED_CONFIG } from '../helpers/e2e.ts';

const FULL = 'sk-full-0001';
const NARROW = 'sk-narrow-0002';
const CHAT = 'sk-chat-0003';
const CLAUDE = 'sk-claude-0004';

// The shipped server, pipelines and routes; platforms, groups and keys replaced by ones that can express these cases.
const shipped = YAML.parse(readFileSync(SHIPPED_CONFIG, 'utf8'));
const account = (id: string) => [{ id, credential: `${id}-credential` }];
const config = {
  ...shipped,
  platforms: {
    sim: { simulator: true },
    'chat-only': { simulator: true, format: 'openai-chat' },
    'claude-sim': { simulator: true, format: 'anthropic-messages' },
  },
  groups: {
    main: { platform: 'sim', models: ['gpt-4o-mini', 'gpt-5*', 'gpt-image-1', 'claude-*', 'gemini-*'], accounts: account('sim') },
    chat: { platform: 'chat-only', client_formats: ['openai-chat'], models: ['*'], accounts: account('chat') },
    claude: { platform: 'claude-sim', models: ['*'], accounts: account('claude') },
    'demo-antigravity': { platform: 'sim', dedicated: true, models: ['*'], accounts: account('pool') },
  },
  keys: [
    { id: 'full', key: FULL, group: 'main', pools: ['demo-antigravity'] },
    { id: 'narrow', key: NARROW, group: 'main', models: ['gpt-4o-mini', 'claude-haiku-4-5', 'gemini-2.5-flash'] },
    { id: 'chat', key: CHAT, group: 'chat' },
    { id: 'claude', key: CLAUDE, group: 'claude' },
  ],
};
const { gateway } = await withLoggedGateway(t, writeConfig(YAML.stringify(config)));
const sims = Object.values(gateway.simulators);
const upstreamCount = () => sims.reduce((n, s) => n + s.requests.length, 0);

const openai = (key: string, base = '/v1') => new OpenAI({ apiKey: key, baseURL: gateway.url + base, maxRetries: 0 });
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
const gemini = (key: string, apiVersion?: string) =>
  new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url, ...(apiVersion === undefined ? {} : { apiVersion }) } });

const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello there' }];

/** The JSON body inside an @google/genai ApiError message ("got status: 404 Not Found. {…}"). */
const geminiBody = (err: ApiError): unknown => JSON.parse(err.message.slice(err.message.indexOf('{')));

t.test('disallowed model → each SDK\'s NotFound class, nothing sent upstream', async (t) => {
  const before = upstreamCount();

  const responses = await rejection(openai(FULL).responses.create({ model: 'o1-pro', input: 'Hello there' }));
  t.ok(responses instanceof OpenAI.NotFoundError, 'openai responses → NotFoundError');
  const openaiErr = responses as InstanceType<typeof OpenAI.NotFoundError>;
  t.equal(openaiErr.status, 404);
  t.same(openaiErr.error, {
    message: 'The model "o1-pro" does not exist or this API key may not use it. GET /v1/models lists the models you can use.',
    type: 'invalid_request_error', param: 'model', code: 'model_not_found',
  });

  const narrowed = await rejection(openai(NARROW).responses.create({ model: 'gpt-5', input: 'Hello there' }));
  t.ok(narrowed instanceof OpenAI.NotFoundError, 'a model outside the key\'s own list → NotFoundError');

  const image = await rejection(openai(FULL).images.generate({ model: 'dall-e-3', prompt: 'A red fox' }));
  t.ok(image instanceof OpenAI.NotFoundError, 'openai images → NotFoundError');
  t.equal((image as InstanceType<typeof OpenAI.NotFoundError>).code, 'model_not_found');

  const message = await rejection(anthropic(FULL).messages.create({ model: 'llama-3-70b', max_tokens: 10, messages }));
  t.ok(message instanceof Anthropic.NotFoundError, 'anthropic → NotFoundError');
  const anthropicErr = message as InstanceType<typeof Anthropic.NotFoundError>;
  t.equal(anthropicErr.status, 404);
  t.same((anthropicErr.error as { type: string; error: unknown }).error, {
    type: 'not_found_error',
    message: 'The model "llama-3-70b" does not exist or this API key may not use it. GET /v1/models lists the models you can use.',
    code: 'model_not_found',
  });
  t.equal((anthropicErr.error as { type: string }).type, 'error');
  t.match(anthropicErr.headers?.get('x-request-id'), /^[0-9a-f-]{36}$/);
  t.equal((anthropicErr.error as { request_id: string }).request_id, anthropicErr.headers?.get('x-request-id'), 'the envelope\'s request_id is the gateway\'s');

  const narrowClaude = await rejection(anthropic(NARROW).messages.create({ model: 'claude-opus-4-1', max_tokens: 10, messages }));
  t.ok(narrowClaude instanceof Anthropic.NotFoundError, 'anthropic, key-narrowed → NotFoundError');
  const count = await rejection(anthropic(FULL).messages.countTokens({ model: 'llama-3-70b', messages }));
  t.ok(count instanceof Anthropic.NotFoundError, 'anthropic count_tokens → NotFoundError');

  for (const apiVersion of ['v1beta', undefined]) {
    const generated = await rejection(gemini(FULL, apiVersion).models.generateContent({ model: 'text-bison-001', contents: 'Hello there' }));
    t.ok(generated instanceof ApiError, `genai (${apiVersion ?? 'default'}) → ApiError`);
    t.equal((generated as ApiError).status, 404);
    t.match(geminiBody(generated as ApiError), {
      error: {
        code: 404, status: 'NOT_FOUND',
        message: 'The model "text-bison-001" does not exist or this API key may not use it. GET /v1beta/models lists the models you can use.',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'model_not_found', domain: 'gateway' }],
      },
    });
  }
  const streamed = await rejection((async () => {
    for await (const chunk of await gemini(NARROW, 'v1beta').models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'Hello there' })) void chunk;
  })());
  t.ok(streamed instanceof ApiError, 'genai stream, key-narrowed → ApiError');
  t.equal((streamed as ApiError).status, 404);

  t.equal(upstreamCount(), before, 'no refused request reached an upstream');
});

const wrongPlatform = (format: string) =>
  `This API key's group "chat" is on platform "chat-only", which does not serve the ${format} API; use that platform's own endpoint`;

t.test('a format the group does not accept (client_formats) → each SDK\'s BadRequest class, naming the platform', async (t) => {
  const before = upstreamCount();

  const message = await rejection(anthropic(CHAT).messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages }));
  t.ok(message instanceof Anthropic.BadRequestError, 'anthropic → BadRequestError');
  t.same(((message as InstanceType<typeof Anthropic.BadRequestError>).error as { error: unknown }).error, {
    type: 'invalid_request_error', message: wrongPlatform('anthropic-messages'), code: 'FORMAT_NOT_SUPPORTED',
  });
  const streamed = await rejection(anthropic(CHAT).messages.stream({ model: 'claude-haiku-4-5', max_tokens: 10, messages }).finalMessage());
  t.ok(streamed instanceof Anthropic.BadRequestError, 'anthropic stream → BadRequestError');

  for (const apiVersion of ['v1beta', undefined]) {
    const generated = await rejection(gemini(CHAT, apiVersion).models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hello there' }));
    t.ok(generated instanceof ApiError, `genai (${apiVersion ?? 'default'}) → ApiError`);
    t.equal((generated as ApiError).status, 400);
    t.match(geminiBody(generated as ApiError), { error: { code: 400, status: 'INVALID_ARGUMENT', message: wrongPlatform('gemini') } });
  }

  const responses = await rejection(openai(CHAT).responses.create({ model: 'gpt-5', input: 'Hello there' }));
  t.ok(responses instanceof OpenAI.BadRequestError, 'openai responses → BadRequestError');
  t.same((responses as InstanceType<typeof OpenAI.BadRequestError>).error, {
    message: wrongPlatform('openai-responses'), type: 'invalid_request_error', param: null, code: 'FORMAT_NOT_SUPPORTED',
  });

  const chat = await openai(CHAT).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] });
  t.equal(chat.choices[0].message.content, 'Echo: Hello there', 'the format the platform does serve still works');
  t.equal(upstreamCount(), before + 1, 'only that one reached an upstream');
});

const IMAGES_404 = '{"error":{"type":"not_found_error","message":"Images API is not supported for this platform"}}';

t.test('images on a non-OpenAI platform → 404 with the established body, byte for byte', async (t) => {
  const before = upstreamCount();
  for (const [key, path] of [[CLAUDE, '/v1/images/generations'], [CHAT, '/v1/images/generations'], [CLAUDE, '/images/generations']]) {
    const res = await fetch(gateway.url + path, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-image-1', prompt: 'A red fox' }),
    });
    t.equal(res.status, 404, `${path} with the ${key} key`);
    t.match(res.headers.get('content-type'), /^application\/json/);
    t.equal(await res.text(), IMAGES_404);
  }
  // Multipart edits are refused the same way, and the SDK sees NotFoundError.
  const edit = await rejection(openai(CLAUDE).images.edit({ model: 'gpt-image-1', prompt: 'Add a hat', image: await OpenAI.toFile(Buffer.from('png'), 'a.png') }));
  t.ok(edit instanceof OpenAI.NotFoundError);
  t.same((edit as InstanceType<typeof OpenAI.NotFoundError>).error, { type: 'not_found_error', message: 'Images API is not supported for this platform' });
  const aliasEdit = await rejection(openai(CLAUDE, '').images.edit({ model: 'gpt-image-1', prompt: 'Add a hat', image: await OpenAI.toFile(Buffer.from('png'), 'a.png') }));
  t.ok(aliasEdit instanceof OpenAI.NotFoundError, '/images/edits too');
  t.equal(upstreamCount(), before, 'nothing reached an upstream');
});

// The upstream says its limit resets at once (retry-after: 0), so the account is not cooled down and every call below
// reaches it; a longer reset would answer the later calls from the gateway alone (test/pools covers that).
const fault429 = { headers: { 'x-simulator-fault': 'status=429, retry-after=0' } };
const POOL_429 = 'Every upstream account of group "main" is rate limited; retry after 1 s';

// An upstream 429 moves the request to another account; the group has one, so the pool answers with its own 429
// (ALL_ACCOUNTS_RATE_LIMITED, retry-after), never the upstream's body.
t.test('an upstream 429 reaches each SDK as its RateLimit class, as the pool\'s ALL_ACCOUNTS_RATE_LIMITED', async (t) => {
  const sim = gateway.simulators.sim;
  const before = sim.requests.length;

  for (const [label, call] of [
    ['responses', () => openai(FULL).responses.create({ model: 'gpt-5', input: 'Hello there' }, fault429)],
    ['responses stream', () => openai(FULL).responses.create({ model: 'gpt-5', input: 'Hello there', stream: true }, fault429)],
    ['images', () => openai(FULL).images.generate({ model: 'gpt-image-1', prompt: 'A red fox' }, fault429)],
    ['chat', () => openai(FULL).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] }, fault429)],
  ] as const) {
    const err = await rejection(call());
    t.ok(err instanceof OpenAI.RateLimitError, `openai ${label} → RateLimitError`);
    const limited = err as InstanceType<typeof OpenAI.RateLimitError>;
    t.same(limited.error, { message: POOL_429, type: 'rate_limit_error', param: null, code: 'ALL_ACCOUNTS_RATE_LIMITED' }, `${label}: the pool's body`);
    t.equal(limited.headers?.get('retry-after'), '1');
  }

  const anthropicError = { type: 'rate_limit_error', message: POOL_429, code: 'ALL_ACCOUNTS_RATE_LIMITED' };
  const message = await rejection(anthropic(FULL).messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages }, fault429));
  t.ok(message instanceof Anthropic.RateLimitError, 'anthropic → RateLimitError');
  t.match((message as InstanceType<typeof Anthropic.RateLimitError>).error, { type: 'error', error: anthropicError });
  t.equal((message as InstanceType<typeof Anthropic.RateLimitError>).headers?.get('retry-after'), '1');
  const streamed = await rejection(anthropic(FULL).messages.stream({ model: 'claude-haiku-4-5', max_tokens: 10, messages }, fault429).finalMessage());
  t.ok(streamed instanceof Anthropic.RateLimitError, 'anthropic stream → RateLimitError');
  t.match((streamed as InstanceType<typeof Anthropic.RateLimitError>).error, { type: 'error', error: anthropicError });
  const count = await rejection(anthropic(FULL).messages.countTokens({ model: 'claude-haiku-4-5', messages }, fault429));
  t.ok(count instanceof Anthropic.RateLimitError, 'anthropic count_tokens → RateLimitError');

  for (const apiVersion of ['v1beta', undefined]) {
    const ai = gemini(FULL, apiVersion);
    const config = { httpOptions: { headers: fault429.headers } };
    const generated = await rejection(ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hello there', config }));
    t.ok(generated instanceof ApiError, `genai (${apiVersion ?? 'default'}) → ApiError`);
    t.equal((generated as ApiError).status, 429, 'with status 429, the genai SDK\'s rate-limit signal');
    t.match(geminiBody(generated as ApiError), { error: { code: 429, message: POOL_429, status: 'RESOURCE_EXHAUSTED', details: [{ reason: 'ALL_ACCOUNTS_RATE_LIMITED' }] } });
    const stream = await rejection((async () => {
      for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Hello there', config })) void chunk;
    })());
    t.ok(stream instanceof ApiError);
    t.equal((stream as ApiError).status, 429);
    t.match(geminiBody(stream as ApiError), { error: { code: 429, message: POOL_429 } });
  }

  t.equal(sim.requests.length, before + 4 + 3 + 4, 'maxRetries 0: one upstream attempt each');
});

t.test('a dedicated entry refuses a key without the pool → each SDK\'s PermissionDenied class', async (t) => {
  const before = upstreamCount();
  const pool = new Anthropic({ apiKey: NARROW, baseURL: gateway.url + '/antigravity', maxRetries: 0 });
  const message = await rejection(pool.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages }));
  t.ok(message instanceof Anthropic.PermissionDeniedError, 'anthropic → PermissionDeniedError');
  t.same(((message as InstanceType<typeof Anthropic.PermissionDeniedError>).error as { error: unknown }).error, {
    type: 'permission_error', message: 'This API key may not use the dedicated pool "demo-antigravity"', code: 'POOL_NOT_ALLOWED',
  });
  const ai = new GoogleGenAI({ apiKey: NARROW, httpOptions: { baseUrl: gateway.url + '/antigravity', apiVersion: 'v1beta' } });
  const generated = await rejection(ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hello there' }));
  t.ok(generated instanceof ApiError);
  t.equal((generated as ApiError).status, 403);
  t.match(geminiBody(generated as ApiError), { error: { code: 403, status: 'PERMISSION_DENIED' } });
  t.equal(upstreamCount(), before);

  // The key that holds the pool gets through, to the pool's own account.
  const allowed = new Anthropic({ apiKey: FULL, baseURL: gateway.url + '/antigravity', maxRetries: 0 });
  const ok = await allowed.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages });
  t.equal(ok.usage.input_tokens, 8);
  t.equal(gateway.simulators.sim.requests.at(-1)?.headers['x-api-key'], 'pool-credential');
});
