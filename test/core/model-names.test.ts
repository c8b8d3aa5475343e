// The model names the gateway knows (core/model-names.ts), the only ones a metric label takes: the configuration's
// concrete names, a key's own list and what an upstream listed; every other name, bounded or not, is `other`.
import t from 'tap';
import { ModelNames } from '../../core/model-names.ts';
import type { GatewayConfig } from '../../core/types.ts';
import { demoConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, metricsText, metricValue, post } from '../helpers/http.ts';

const config = {
  groups: {
    g: {
      models: ['gpt-4o-mini', 'gpt-5*'], model_map: { alias: 'mapped-target', 'claude-*': 'glob-target' },
      accounts: [{ models: ['acct-model', 'acct-*'], model_map: { 'acct-alias': 'acct-target' } }, {}],
    },
  },
  keys: [{ models: ['key-model', 'key-*'] }],
  pricing: { 'priced-only': {}, 'priced-*': {} },
} as unknown as Pick<GatewayConfig, 'groups' | 'keys' | 'pricing'>;

t.test('the configuration\'s concrete names are known; a glob names none', async (t) => {
  const names = new ModelNames(config);
  for (const m of ['gpt-4o-mini', 'alias', 'mapped-target', 'glob-target', 'acct-model', 'acct-alias', 'acct-target', 'key-model', 'priced-only']) {
    t.equal(names.label(m), m, m);
  }
  for (const m of ['gpt-5-invented', 'gpt-5*', 'claude-x', 'acct-x', 'key-x', 'priced-x', '']) t.equal(names.label(m), 'other', `${m || '(empty)'}: other`);
});

t.test('a key\'s own concrete names are known for that key', async (t) => {
  const names = new ModelNames(config);
  t.equal(names.label('issued-only', { models: ['issued-only', 'x-*'] }), 'issued-only');
  t.equal(names.label('issued-only'), 'other', 'not for another key');
  t.equal(names.label('x-*', { models: ['x-*'] }), 'other', 'a glob of the key\'s list names nothing');
});

t.test('what an upstream listed is known, within a bound on count and length', async (t) => {
  const names = new ModelNames(config);
  names.listed(['gpt-5-mini', 'x'.repeat(257)]);
  t.equal(names.label('gpt-5-mini'), 'gpt-5-mini');
  t.equal(names.label('x'.repeat(257)), 'other', 'a name past 256 characters is not taken');
  names.listed(Array.from({ length: 5000 }, (_, i) => `listed-${i}`));
  t.equal(names.label('listed-4094'), 'listed-4094');
  t.equal(names.label('listed-4095'), 'other', 'at most 4096 listed names are kept');
});

t.test('through a gateway: a name the glob admits is labelled other until the upstream lists it', async (t) => {
  const gateway = await withGateway(t, demoConfig());
  const series = async (model: string) => metricValue(await metricsText(gateway.url),
    `gateway_requests_total{route="/v1/chat/completions",format="openai-chat",platform="sim",group="main",model="${model}",status_class="2xx"}`);
  const chat = async (model: string) => (await post(`${gateway.url}/v1/chat/completions`, chatBody(model), bearer('sk-alice-0001'))).status;
  t.equal(await chat('gpt-5-mini'), 200);
  t.equal(await series('other'), 1, 'not listed yet: other');
  t.equal(await series('gpt-5-mini'), undefined);
  const list = await fetch(`${gateway.url}/v1/models`, { headers: bearer('sk-alice-0001') });
  t.ok((await list.json() as { data: { id: string }[] }).data.some((m) => m.id === 'gpt-5-mini'), 'the upstream lists it');
  t.equal(await chat('gpt-5-mini'), 200);
  t.equal(await series('gpt-5-mini'), 1, 'listed: its own label');
  t.equal(await chat('gpt-4o-mini'), 200);
  t.equal(await series('gpt-4o-mini'), 1, 'a concrete name of the group: its own label');
});
