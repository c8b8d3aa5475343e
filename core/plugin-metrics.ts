// Metrics that plugins register: stages are rebuilt on every config reload, so a metric is created once and then reused.
import { Counter, Gauge, Histogram, type CounterConfiguration, type GaugeConfiguration, type HistogramConfiguration, type Registry } from 'prom-client';

function ensure<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

export const counter = <T extends string>(registry: Registry, opts: CounterConfiguration<T>): Counter<T> =>
  ensure(registry, opts.name, () => new Counter({ ...opts, registers: [registry] }));

export const gauge = <T extends string>(registry: Registry, opts: GaugeConfiguration<T>): Gauge<T> =>
  ensure(registry, opts.name, () => new Gauge({ ...opts, registers: [registry] }));

export const histogram = <T extends string>(registry: Registry, opts: HistogramConfiguration<T>): Histogram<T> =>
  ensure(registry, opts.name, () => new Histogram({ ...opts, registers: [registry] }));
