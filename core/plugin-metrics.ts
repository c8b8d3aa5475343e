// Metrics that plugins register: stages are rebuilt on every config reload, so a metric is created once and then reused.
import { Counter, Gauge, Histogram, type CounterConfiguration, type GaugeConfiguration, type HistogramConfiguration, type Registry } from 'prom-client';

function ensure<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

/** What the hot path calls on a labelled counter. */
export interface LabelledCounter<T extends string> { inc(labels: Record<T, string>, value?: number): void }

interface Cell { labels: Record<string, string>; sum: number }

/**
 * The cell of a label set under `root` (nested Maps, one level per label name in `names` order); a label set seen for
 * the first time gets the cell `make` returns (made once per metric, so a call allocates nothing).
 */
function cellOf<C>(root: Map<string, unknown>, names: readonly string[], labels: Record<string, string>, make: (labels: Record<string, string>) => C): C {
  let map = root;
  const last = names.length - 1;
  for (let i = 0; i < last; i++) {
    const v = labels[names[i]];
    let next = map.get(v) as Map<string, unknown> | undefined;
    if (!next) map.set(v, (next = new Map()));
    map = next;
  }
  const v = last < 0 ? '' : labels[names[last]];
  let cell = map.get(v) as C | undefined;
  if (cell === undefined) map.set(v, (cell = make(labels)));
  return cell;
}

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
  readonly #make = (labels: Record<string, string>): Cell => {
    this.counter.inc(labels as Record<T, string>, 0); // checks the label set (names, values) as prom-client does, and shows it
    const cell = { labels: { ...labels }, sum: 0 };
    this.#cells.push(cell);
    return cell;
  };

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
    cellOf(this.#root, this.#names, labels, this.#make).sum += value;
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

/** What the hot path calls on a labelled histogram. */
export interface LabelledHistogram<T extends string> { observe(labels: Record<T, string>, value: number): void }

interface HistogramCell { labels: Record<string, string>; buckets: number[]; sum: number; count: number }

/** A prom-client value pair (its setValuePair): what a metric's getForPromString() lists. */
const pair = (labels: Record<string, string | number>, value: number, metricName: string, exemplar: null | undefined, sharedLabels: Record<string, string>) =>
  ({ labels, sharedLabels, value, metricName, exemplar });

/**
 * A labelled histogram kept in a cell per label set, found as CellCounter finds its cells: prom-client's observe()
 * builds a label hash string, validates the labels and looks the hash up on every call (docs/performance.md). It is
 * registered as a metric of its own, and gives prom-client's scrape text, get() (which the cluster's aggregation
 * reads) and reset() exactly what prom-client's Histogram gives for the same observations
 * (test/core/plugin-metrics.test.ts compares them), so the registry cannot tell them apart.
 */
class CellHistogram<T extends string> implements LabelledHistogram<T> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #names: readonly T[];
  readonly #bounds: number[];
  #root = new Map<string, unknown>();
  #cells: HistogramCell[] = [];
  readonly #make = (labels: Record<string, string>): HistogramCell => {
    for (const k of Object.keys(labels)) {
      if (!this.#names.includes(k as T)) throw new Error(`Added label "${k}" is not included in initial labelset: ${JSON.stringify(this.#names)}`);
    }
    const cell = { labels: { ...labels }, buckets: this.#bounds.map(() => 0), sum: 0, count: 0 };
    this.#cells.push(cell);
    return cell;
  };

  constructor(registry: Registry, opts: HistogramConfiguration<T>) {
    this.name = opts.name;
    this.help = opts.help;
    this.#names = opts.labelNames ?? [];
    if (this.#names.includes('le' as T)) throw new Error('le is a reserved label keyword');
    this.#bounds = [...(opts.buckets ?? [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])];
    this.#unlabelled();
    registry.registerMetric(this as never);
  }

  /** Without labels, prom-client shows its one series (all zero) from the start. */
  #unlabelled(): void {
    if (this.#names.length) return;
    const cell = { labels: {}, buckets: this.#bounds.map(() => 0), sum: 0, count: 0 };
    this.#cells.push(cell);
    this.#root.set('', cell);
  }

  observe(labels: Record<T, string>, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`histogram ${this.name}: not a finite value: ${value}`);
    const cell = cellOf(this.#root, this.#names, labels, this.#make);
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) { cell.buckets[i]++; break; }
    }
    cell.sum += value;
    cell.count += 1;
  }

  async getForPromString() {
    const bucket = `${this.name}_bucket`;
    const values = [];
    for (const c of this.#cells) {
      let acc = 0;
      for (let i = 0; i < this.#bounds.length; i++) values.push(pair({ le: this.#bounds[i] }, (acc += c.buckets[i]), bucket, null, c.labels));
      values.push(pair({ le: '+Inf' }, c.count, bucket, null, c.labels));
      values.push(pair({}, c.sum, `${this.name}_sum`, undefined, c.labels));
      values.push(pair({}, c.count, `${this.name}_count`, undefined, c.labels));
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  async get() {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })),
    };
  }

  reset(): void {
    this.#root = new Map();
    this.#cells = [];
    this.#unlabelled();
  }
}

/** A labelled histogram of the registry (the same one on every reload), for the hot path. */
export function cellHistogram<T extends string>(registry: Registry, opts: HistogramConfiguration<T>): LabelledHistogram<T> {
  const existing = registry.getSingleMetric(opts.name);
  if (existing instanceof CellHistogram) return existing as unknown as LabelledHistogram<T>;
  return new CellHistogram(registry, opts);
}

export const gauge = <T extends string>(registry: Registry, opts: GaugeConfiguration<T>): Gauge<T> =>
  ensure(registry, opts.name, () => new Gauge({ ...opts, registers: [registry] }));

export const histogram = <T extends string>(registry: Registry, opts: HistogramConfiguration<T>): Histogram<T> =>
  ensure(registry, opts.name, () => new Histogram({ ...opts, registers: [registry] }));
