// The writer thread (writer.ts): one per process, shared by its file stores, keeping the process up only while a store
// waits for an answer.
import { Worker } from 'node:worker_threads';
import type { FromWriter, ToWriter } from './rows.ts';

type Listener = (m: FromWriter) => void;
type Message = ToWriter extends infer M ? (M extends ToWriter ? Omit<M, 'id'> : never) : never;

export interface WriterLink {
  post(m: Message): void;
  /** The store waits for an answer: the thread keeps the process up until `done`. */
  wait(): void;
  done(): void;
  disconnect(): void;
}

const WRITER_YOUNG_MB = 4;

let thread: Worker | undefined;
const listeners = new Map<number, Listener>();
let lastId = 0;
let waiting = 0;

function start(): Worker {
  // A small young generation, not the main thread's (resident once grown): its garbage is one batch's rows at a time
  // (docs/performance.md).
  const w = new Worker(new URL('./writer.ts', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: WRITER_YOUNG_MB } });
  w.on('message', (m: FromWriter) => listeners.get(m.id)?.(m));
  const stopped = (message: string) => {
    if (thread === w) thread = undefined;
    for (const [id, listener] of listeners) listener({ id, type: 'stopped', message });
  };
  w.on('error', (err: Error) => stopped(err.message));
  w.on('exit', (code) => stopped(`the writer thread exited (code ${code})`));
  w.unref();
  return w;
}

/** The writer thread while it runs (tests stop it to see the stores carry on without it). */
export const writerThread = (): Worker | undefined => thread;

export function connect(listener: Listener): WriterLink {
  const w = (thread ??= start());
  const id = ++lastId;
  listeners.set(id, listener);
  let held = 0;
  return {
    post: (m) => w.postMessage({ ...m, id }),
    wait: () => {
      held++;
      if (waiting++ === 0) w.ref();
    },
    done: () => {
      if (held === 0) return;
      held--;
      if (--waiting === 0) w.unref();
    },
    disconnect: () => {
      listeners.delete(id);
      waiting -= held;
      held = 0;
      if (waiting === 0) w.unref();
    },
  };
}
