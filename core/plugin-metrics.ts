// Metrics that plugins register: stages are rebuilt on every config reload, so a metric is created once and then reused.
import { Counter, Gauge, Histogram, type CounterConfiguration, type GaugeConfiguration, type HistogramConfiguration, type Registry } from 'prom-client';

function ensure<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

/** What the hot path calls on a labelled counter. */
export interface LabelledCounter<T extends string> { inc(labels: Record<T, string>, value?: number): void }

interface Cell { labels: Record<string, string>; sum: number }

/**
 * A labelled counter whose increments are summed in a cell per label set, found through nested Maps in labelNames
 * order: no label hash string per call (prom-client makes one per inc). prom-client's counter takes the sums when it
 * is collected (a scrape, get()), so its text, its sums across workers and its reset stay its own. A label set seen for
 * the first time is created in it at once (0), so it is checked where it is used and shown from then on.
 */
class CellCounter<T extends string> implements LabelledCounter<T> {
  readonly #names: readonly T[];
  readonly #root = new Map<string, unknown>();
  readonly #cells: Cell[] = [];
  readonly #name: string;
  readonly counter: Counter<T>;

  constructor(registry: Registry, opts: CounterConfiguration<T>) {
    this.#names = opts.labelNames ?? [];
    this.#name = opts.name;
    const cells = this.#cells;
    this.counter = new Counter({
      ...opts, registers: [registry],
      collect(this: Counter<T>) {
        for (const c of cells) {
          if (c.sum === 0) continue;
          this.inc(c.labels as Record<T, string>, c.sum);
          c.sum = 0;
        }
      },
    });
  }

  inc(labels: Record<T, string>, value = 1): void {
    if (!(value >= 0) || !Number.isFinite(value)) throw new TypeError(`counter ${this.#name}: not a finite increment ≥ 0: ${value}`);
    const names = this.#names;
    let map = this.#root;
    const last = names.length - 1;
    for (let i = 0; i < last; i++) {
      const v = labels[names[i]];
      let next = map.get(v) as Map<string, unknown> | undefined;
      if (!next) map.set(v, (next = new Map()));
      map = next;
    }
    const v = last < 0 ? '' : labels[names[last]];
    let cell = map.get(v) as Cell | undefined;
    if (!cell) {
      this.counter.inc(labels, 0); // checks the label set (names, values) as prom-client does, and shows it
      cell = { labels: { ...labels }, sum: 0 };
      map.set(v, cell);
      this.#cells.push(cell);
    }
    cell.sum += value;
  }
}

const cellCounters = new WeakMap<object, CellCounter<string>>();

/** A labelled counter of the registry (the same one on every reload), for the hot path. */
export function counter<T extends string>(registry: Registry, opts: CounterConfiguration<T>): LabelledCounter<T> {
  const existing = registry.getSingleMetric(opts.name);
  const known = existing && cellCounters.get(existing);
  if (known) return known as unknown as LabelledCounter<T>;
  const made = new CellCounter(registry, opts);
  cellCounters.set(made.counter, made as unknown as CellCounter<string>);
  return made;
}

export const gauge = <T extends string>(registry: Registry, opts: GaugeConfiguration<T>): Gauge<T> =>
  ensure(registry, opts.name, () => new Gauge({ ...opts, registers: [registry] }));

export const histogram = <T extends string>(registry: Registry, opts: HistogramConfiguration<T>): Histogram<T> =>
  ensure(registry, opts.name, () => new Histogram({ ...opts, registers: [registry] }));
