// What a model name the configuration does not know may cost metering: a client can invent any number of them, so they
// get per-model rollups only up to a bound, and warnings about them are rate-limited.
import type { Logger } from 'pino';
import { MODEL_ROWS } from '../../core/store/rollup.ts';
import { utcDate } from '../../core/store/units.ts';

/** A longer name never gets a row of its own (real model ids are far shorter; a client's could be megabytes). */
const ROW_CHARS = 256;
/** Warnings about names the configuration does not know: at most one this often. */
const UNKNOWN_WARN_MS = 60_000;

/**
 * The names of unknown models that got rows of their own, per key, in the current UTC day: the first MODEL_ROWS a key
 * uses. Per process (each process of a Redis deployment admits its own), cleared when the day turns.
 */
export class ModelRows {
  #day = '';
  readonly #keys = new Map<string, Set<string>>();

  /** True when `model` has (or now takes) a row of its own for `key` on the UTC day of `time`. */
  take(key: string, model: string, time: number): boolean {
    const day = utcDate(time);
    if (day !== this.#day) {
      this.#day = day;
      this.#keys.clear();
    }
    let names = this.#keys.get(key);
    if (!names) this.#keys.set(key, (names = new Set()));
    if (names.has(model)) return true;
    if (names.size >= MODEL_ROWS || model.length > ROW_CHARS) return false;
    names.add(model);
    return true;
  }
}

/**
 * One warning per known name (the configuration bounds them); for unknown names at most one per UNKNOWN_WARN_MS, which
 * says how many it left unsaid since the last one and shows at most ROW_CHARS of the name.
 */
export class NameWarnings {
  readonly #log: Logger;
  readonly #message: string;
  readonly #said = new Set<string>();
  #next = 0;
  #unsaid = 0;

  constructor(log: Logger, message: string) {
    this.#log = log;
    this.#message = message;
  }

  warn(known: boolean, fields: { model: string; [field: string]: string }): void {
    if (known) {
      const said = Object.values(fields).join('\n');
      if (this.#said.has(said)) return;
      this.#said.add(said);
      this.#log.warn(fields, this.#message);
      return;
    }
    const now = Date.now();
    if (now < this.#next) {
      this.#unsaid++;
      return;
    }
    this.#next = now + UNKNOWN_WARN_MS;
    this.#log.warn({ ...fields, model: fields.model.slice(0, ROW_CHARS), unknown_model: true, unsaid: this.#unsaid }, this.#message);
    this.#unsaid = 0;
  }
}
