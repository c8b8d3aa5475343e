// A chat upstream's chunk stream → canonical events. Text and reasoning_content deltas open a block each; tool-call
// fragments are keyed by their `index` (they may interleave) and keep their names restored; the finish comes once the
// upstream has said both its finish_reason and its usage ([DONE] or the end of the stream closes it). An error chunk
// (`data: {"error":…}`) is an error event, and nothing after it counts. One decoder per request.
import type { CanonEvent, CodecContext, StreamDecoder } from '../../../core/canonical.ts';
import type { SseFrame } from '../../../core/types.ts';
import type { Usage } from '../../../core/usage.ts';
import { parseObject } from '../../shared/stream-json.ts';
import { OPENAI_NAMES, restoreName } from '../../shared/tool-names.ts';
import { chatUsage } from '../usage.ts';
import { isObj, type Obj } from './checks.ts';
import { reasoningText, stopReason } from './decode-response.ts';
import { errorFromObject } from './errors.ts';

export function decodeStream(ctx: CodecContext): StreamDecoder {
  let started = false;
  let done = false;
  let next = 0;
  // The open text or reasoning block (one at a time), and the tool-call blocks by the upstream's tool index.
  let prose: { kind: 'text' | 'reasoning'; index: number } | undefined;
  const tools = new Map<number | string, number>();
  let lastKey: number | string | undefined;
  const open = new Set<number>();
  let finish: unknown;
  let refused = false;
  let usage: Usage | undefined;

  const close = (index: number, out: CanonEvent[]) => {
    if (open.delete(index)) out.push({ type: 'block_end', index });
  };

  function text(kind: 'text' | 'reasoning', value: unknown, out: CanonEvent[]): void {
    if (typeof value !== 'string' || value === '') return;
    if (prose?.kind !== kind) {
      if (prose) close(prose.index, out);
      prose = { kind, index: next++ };
      open.add(prose.index);
      out.push({ type: 'block_start', index: prose.index, block: { type: kind } });
    }
    out.push({ type: 'delta', index: prose.index, text: value });
  }

  function toolFragment(call: Obj, out: CanonEvent[]): void {
    // The key is the upstream's index; for servers that send none, the call's id, and a fragment without either
    // continues the latest call.
    const key = typeof call.index === 'number' ? call.index
      : typeof call.id === 'string' && call.id !== '' ? `id:${call.id}` : lastKey ?? 'id:';
    lastKey = key;
    const custom = isObj(call.custom) ? call.custom : undefined;
    const fn = isObj(call.function) ? call.function : custom ?? {};
    let index = tools.get(key);
    if (index === undefined) {
      if (prose) { close(prose.index, out); prose = undefined; }
      index = next++;
      tools.set(key, index);
      open.add(index);
      const id = typeof call.id === 'string' && call.id !== '' ? call.id : `call_${tools.size - 1}`;
      const name = restoreName(typeof fn.name === 'string' ? fn.name : '', ctx.request, OPENAI_NAMES);
      out.push({ type: 'block_start', index, block: { type: 'tool_call', id, name, ...(custom || call.type === 'custom' ? { custom: true } : {}) } });
    }
    const args = custom ? custom.input : fn.arguments;
    if (typeof args === 'string' && args !== '') out.push({ type: 'delta', index, arguments: args });
  }

  function choice(c: Obj, out: CanonEvent[]): void {
    const delta = isObj(c.delta) ? c.delta : {};
    text('reasoning', reasoningText(delta), out);
    text('text', delta.content, out);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      refused = true;
      text('text', delta.refusal, out);
    }
    const calls = Array.isArray(delta.tool_calls) ? delta.tool_calls : isObj(delta.function_call) ? [{ index: -1, function: delta.function_call }] : [];
    for (const call of calls) if (isObj(call)) toolFragment(call, out);
    if (c.finish_reason !== undefined && c.finish_reason !== null) finish = c.finish_reason;
  }

  /** The answer ends: open blocks close, then the finish with the usage the upstream gave. */
  function finishEvents(): CanonEvent[] {
    done = true;
    const out: CanonEvent[] = [];
    for (const index of [...open].sort((a, b) => a - b)) close(index, out);
    const stop = stopReason(finish, tools.size > 0, refused);
    out.push({ type: 'finish', stop, usage: usage ?? { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 } });
    return out;
  }

  return {
    frame(frame: SseFrame): CanonEvent[] {
      if (done) return [];
      if (frame.data.trim() === '[DONE]') return finish !== undefined ? finishEvents() : [];
      const json = parseObject(frame.data);
      if (!json) return [];
      if (json.error !== undefined && json.error !== null) {
        done = true;
        return [{ type: 'error', error: errorFromObject(json.error, 0) }];
      }
      const out: CanonEvent[] = [];
      if (!started) {
        started = true;
        out.push({
          type: 'start', id: typeof json.id === 'string' ? json.id : '', model: typeof json.model === 'string' ? json.model : '',
          ...(typeof json.created === 'number' ? { created: json.created } : {}),
        });
      }
      const choices = Array.isArray(json.choices) ? json.choices : [];
      for (const c of choices) if (isObj(c) && (c.index ?? 0) === 0) choice(c, out);
      if (isObj(json.usage)) usage = chatUsage(json.usage);
      return out;
    },
    end(): CanonEvent[] {
      // An upstream that closed after its finish_reason but before [DONE] still finished; one that never said how it
      // ended did not, and gets no finish here (the bridge ends the client's stream as failed).
      return !done && finish !== undefined ? finishEvents() : [];
    },
  };
}
