// The Store contract on MemoryStore, plus what only the embedded store promises (no timers, createStore).
import t from 'tap';
import { MemoryStore } from '../../core/store/memory.ts';
import { createStore } from '../../core/store/index.ts';
import { contract } from './contract.ts';

contract(t, async (options) => new MemoryStore(options));

t.test('createStore without a Redis URL is the memory store', async (t) => {
  const s = createStore({ redis: '' });
  t.equal(s.kind, 'memory');
  await s.close();
});
