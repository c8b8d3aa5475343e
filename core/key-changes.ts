// Issued-key change notices: one store subscription per process, passed on to the stages of the running config only.
import type { Logger } from 'pino';
import type { Store } from './store/types.ts';

/** The listeners one config load adds while its stages are created. */
export interface KeyListeners {
  add(listener: () => void): void;
  /** This config now serves requests: from here on only its listeners hear changes. */
  run(): void;
}

/**
 * A reload creates every stage again. Were each stage to subscribe to the store, every reload would add listeners
 * the store keeps for good (with the caches they clear). Here the store has one listener, made when a first stage
 * asks, and each config load has its own listener set: running a new config drops the old set with the old config.
 */
export class KeyChanges {
  #store: Store;
  #log: Logger;
  #live: ReadonlySet<() => void> = new Set();
  #subscribed = false;

  constructor(store: Store, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  /** A listener set for a config being loaded; it stays silent until its `run`. */
  listeners(): KeyListeners {
    const set = new Set<() => void>();
    return {
      add: (listener) => { set.add(listener); this.#subscribe(); },
      run: () => { this.#live = set; },
    };
  }

  #subscribe(): void {
    if (this.#subscribed) return;
    this.#subscribed = true;
    const fire = () => { for (const fn of this.#live) fn(); };
    Promise.resolve(this.#store.onKeysChanged(fire)).catch((err: unknown) => {
      this.#log.error({ err }, 'issued-key change feed failed: a change reaches this process only when its key cache expires');
    });
  }
}
