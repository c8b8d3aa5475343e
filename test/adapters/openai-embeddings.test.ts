// The openai-embeddings adapter: the model in the body, never a stream, usage of the prompt only, OpenAI's error envelope.
import t from 'tap';
import { GatewayError } from '../../core/errors.ts';
import { openaiEmbeddings as format } from '../../adapters/openai-embeddings/index.ts';
import { openaiModelListUpstream } from '../../adapters/shared/openai-models.ts';
import { fakeCtx, schemaAccepts } from './helpers.ts';

t.test('usage: prompt_tokens in, nothing out', async (t) => {
  t.strictSame(format.usageFromBody({ object: 'list', data: [], model: 'text-embedding-3-small', usage: { prompt_tokens: 6, total_tokens: 6 } }),
    { input: 6, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
  t.equal(format.usageFromBody({ data: [] }), undefined);
});

t.test('never streamed; the body names the model; requests need an input', async (t) => {
  t.equal(format.isStream({ stream: true, input: 'x' }, fakeCtx()), false);
  t.same(format.model, { body: 'model' });
  t.ok(schemaAccepts(format, { model: 'm', input: 'x' }));
  t.ok(schemaAccepts(format, { model: 'm', input: [[1, 2], [3]] }));
  t.notOk(schemaAccepts(format, { model: 'm' }));
  t.notOk(schemaAccepts(format, { model: 'm', input: 7 }));
  const json = { object: 'list', model: 'upstream-name' };
  format.setModel(json, 'alias');
  t.equal(json.model, 'alias');
});

t.test('errors in OpenAI\'s envelope; other platforms are told embeddings are not theirs', async (t) => {
  const err = new GatewayError(429, 'API_KEY_RPM_EXCEEDED', 'slow down');
  t.same(format.errorBody(err, { id: 'r' }), { error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'API_KEY_RPM_EXCEEDED' } });
  t.same(JSON.parse(format.streamError(err)), format.errorBody(err, { id: 'r' }));
  const refusal = format.unsupported!('anthropic');
  t.same([refusal.status, refusal.code], [404, 'EMBEDDINGS_NOT_SUPPORTED']);
  t.equal(format.modelListUpstream, openaiModelListUpstream, 'OpenAI\'s model list, shared with the other OpenAI formats');
});
