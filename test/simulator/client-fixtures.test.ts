// The recorded requests of Claude Code, Codex CLI and Gemini CLI are valid to the strict simulator in their own
// dialect, and so is each client's next turn built from the simulator's answer (signatures replayed as received).
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { eventsOf, postJson } from './helpers.ts';
import { clientFixture as fixture, fixtureVersion } from '../helpers/client-fixtures.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

t.test(`Claude Code ${fixtureVersion('claude-code')} → /v1/messages?beta=true: accepted, streamed with an omitted-display thinking block; its next turn too`, async (t) => {
  const { url, headers, body } = fixture('claude-code');
  const res = await postJson(sim, url, body, headers);
  t.equal(res.status, 200);
  const events = eventsOf(await res.text());
  t.equal(events[events.length - 1].event, 'message_stop');
  const blocks = events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block.type);
  t.same(blocks, ['thinking', 'tool_use'], 'thinking (display omitted), then a call of its first tool');

  const whole = await (await postJson(sim, url, { ...body, stream: false }, headers)).json();
  t.same(whole.content[0].thinking, '', 'display omitted: no thinking text');
  const toolUse = whole.content.find((b: { type: string }) => b.type === 'tool_use');
  const messages = [...(body.messages as unknown[]), { role: 'assistant', content: whole.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'done' }] }];
  const next = await postJson(sim, url, { ...body, messages }, headers);
  t.equal(next.status, 200, 'the next turn, thinking block replayed as received, is accepted');
  await next.text();
});

t.test(`Claude Code ${fixtureVersion('claude-code-default')} with its default model: a system message with output_config inside messages is accepted; its next turn too`, async (t) => {
  const { url, headers, body } = fixture('claude-code-default');
  const messages = body.messages as Record<string, unknown>[];
  t.match(messages[1], { role: 'system', output_config: { effort: 'medium' } }, 'the recording holds the beta system message');
  const res = await postJson(sim, url, body, headers);
  const text = await res.text();
  t.equal(res.status, 200, text.slice(0, 300));
  const events = eventsOf(text);
  t.equal(events[events.length - 1].event, 'message_stop');
  t.same(events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block.type), ['thinking', 'tool_use']);

  const whole = await (await postJson(sim, url, { ...body, stream: false }, headers)).json();
  const toolUse = whole.content.find((b: { type: string }) => b.type === 'tool_use');
  // Where Claude Code puts it on the next turn: the system message stays after the first user message.
  const next = [...messages, { role: 'assistant', content: whole.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'done' }] }];
  const again = await postJson(sim, url, { ...body, stream: false, messages: next }, headers);
  t.equal(again.status, 200, 'the next turn, the system message between the user and the assistant turns, is accepted');
  t.same((await again.json()).content.map((b: { type: string }) => b.type), ['thinking', 'text'], 'the tool result was read: a text answer');
});

t.test(`Codex CLI ${fixtureVersion('codex-cli')} → /v1/responses: accepted, streamed with an encrypted reasoning item; its stateless next turn too`, async (t) => {
  const { url, headers, body } = fixture('codex-cli');
  const res = await postJson(sim, url, body, headers);
  t.equal(res.status, 200);
  const events = eventsOf(await res.text());
  const completed = events[events.length - 1];
  t.equal(completed.event, 'response.completed');
  const output = completed.data.response.output;
  t.same(output.map((item: { type: string }) => item.type), ['reasoning', 'function_call']);
  t.ok(output[0].encrypted_content && output[0].summary.length === 1, 'include asked for encrypted_content, summary auto for a summary');
  t.ok(events.some((e) => e.event === 'response.reasoning_summary_text.delta'));

  const input = [...(body.input as unknown[]), ...output, { type: 'function_call_output', call_id: output[1].call_id, output: 'exit 0' }];
  const next = await postJson(sim, url, { ...body, input }, headers);
  t.equal(next.status, 200, 'the next turn, reasoning item replayed with its encrypted_content (store false), is accepted');
  await next.text();
});

t.test(`Gemini CLI ${fixtureVersion('gemini-cli')} → streamGenerateContent?alt=sse: accepted, with thoughts and a signed function call; its next turn too`, async (t) => {
  const { url, headers, body } = fixture('gemini-cli');
  const res = await postJson(sim, url, body, headers);
  t.equal(res.status, 200);
  const chunks = (await res.text()).split('\r\n\r\n').filter(Boolean).map((frame) => JSON.parse(frame.slice('data: '.length)));
  const parts = chunks.flatMap((c) => c.candidates[0].content.parts);
  t.same(parts.map((p: Record<string, unknown>) => Object.keys(p)), [['text', 'thought'], ['functionCall', 'thoughtSignature']]);
  t.equal(parts[1].functionCall.name, 'update_topic', 'its first declared function');

  const contents = [...(body.contents as unknown[]), { role: 'model', parts }, { role: 'user', parts: [{ functionResponse: { name: 'update_topic', response: { output: 'ok' } } }] }];
  const next = await postJson(sim, url, { ...body, contents }, headers);
  t.equal(next.status, 200, 'the next turn, thought part and signature replayed, is accepted');
  await next.text();
});
