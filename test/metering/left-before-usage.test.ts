// Issue 38, item 3 on the file store (left-before-usage-suite.ts), and a shutdown while a stream the client left is read
// on for its usage: the settlement reaches the file before the store closes.
import { pino } from 'pino';
import t from 'tap';
import { startGateway } from '../../app/gateway.ts';
import { testEnv, writeConfig } from '../helpers/gateway.ts';
import { bearer, post } from '../helpers/http.ts';
import { slowChatStream, startUpstream } from '../helpers/upstream.ts';
import { admin } from '../admin/helpers.ts';
import { ALICE, chat, config, leftBeforeUsage, PROMPT, REPLY, TEXT, type Record_ } from './left-before-usage-suite.ts';

t.test('file store', (t) => leftBeforeUsage(t, 'store: { path: ./data/gateway.db }'));

t.test('a shutdown waits for a stream read on for its usage: its settlement reaches the file before the store closes', async (t) => {
  const silent = await startUpstream(t, slowChatStream(1, 0));
  const file = writeConfig(config('store: { path: ./data/gateway.db }', silent.url, silent.url));
  const start = () => startGateway({ configFile: file, host: '127.0.0.1', port: 0, env: testEnv(), log: pino({ level: 'silent' }) });
  const first = await start();
  const controller = new AbortController();
  const res = await post(first.url + '/v1/chat/completions', chat(TEXT).body, { ...bearer(ALICE), 'x-request-id': 'at-shutdown', 'x-simulator-chunk-delay-ms': '200' }, controller.signal);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('Echo')) text += new TextDecoder().decode((await reader.read()).value);
  controller.abort();
  await reader.cancel().catch(() => {});
  const closing = Date.now();
  await first.close();
  t.ok(Date.now() - closing >= 500, `the close waited ${Date.now() - closing} ms for the stream's end`);
  const second = await start();
  t.teardown(() => second.close());
  const { body } = await admin(second, 'GET', '/admin/usage?key=alice');
  t.match(body.records.find((r: Record_) => r.client_request_id === 'at-shutdown'), { ending: 'disconnected', input_tokens: PROMPT, output_tokens: REPLY });
});
