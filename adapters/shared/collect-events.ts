// Folds a canonical event stream into the whole answer it describes: what a stream decoder produced must equal what the
// same format's body decoder makes of the whole answer (the codec tests compare the two).
import type { CanonBlock, CanonEvent, CanonResponse, StopReason } from '../../core/canonical.ts';
import type { Usage } from '../../core/usage.ts';

const ZERO: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };

export function collectEvents(events: CanonEvent[]): CanonResponse & { error?: CanonEvent & { type: 'error' } } {
  const blocks: CanonBlock[] = [];
  const byIndex = new Map<number, CanonBlock>();
  let id = '';
  let model = '';
  let created: number | undefined;
  let stop: StopReason = 'end';
  let stopSequence: string | undefined;
  let usage: Usage = { ...ZERO };
  let error: (CanonEvent & { type: 'error' }) | undefined;
  for (const e of events) {
    switch (e.type) {
      case 'start':
        ({ id, model, created } = e);
        usage = { ...usage, ...e.usage };
        break;
      case 'block_start': {
        const b = e.block;
        const block: CanonBlock = b.type === 'whole' ? b.block
          : b.type === 'text' ? { type: 'text', text: '' }
            : b.type === 'reasoning' ? { type: 'reasoning', text: '', ...(b.id ? { id: b.id } : {}) }
              : { type: 'tool_call', id: b.id, name: b.name, arguments: '', ...(b.custom ? { custom: true } : {}), ...(b.signature ? { signature: b.signature } : {}) };
        byIndex.set(e.index, block);
        blocks.push(block);
        break;
      }
      case 'delta': {
        const block = byIndex.get(e.index);
        if (!block) throw new Error(`delta for block ${e.index}, which never started`);
        if (e.text !== undefined && (block.type === 'text' || block.type === 'reasoning')) block.text += e.text;
        if (e.arguments !== undefined && block.type === 'tool_call') block.arguments += e.arguments;
        if (e.signature !== undefined && (block.type === 'reasoning' || block.type === 'text' || block.type === 'tool_call')) block.signature = e.signature;
        break;
      }
      case 'block_end':
        break;
      case 'usage':
        usage = { ...usage, ...e.usage };
        break;
      case 'finish':
        stop = e.stop;
        stopSequence = e.stopSequence;
        if (e.usage) usage = e.usage;
        break;
      case 'error':
        error = e;
        break;
    }
  }
  return { id, model, content: blocks, stop, ...(stopSequence === undefined ? {} : { stopSequence }), usage, ...(created === undefined ? {} : { created }), ...(error ? { error } : {}) };
}
