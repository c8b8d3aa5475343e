// Prometheus metrics the core records for every request; plugins register their own on the same registry.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { cellHistogram, counter } from './plugin-metrics.ts';
import { metricsText } from './cluster-metrics.ts';
import { statusClass } from './errors.ts';
import type { Store } from './store/types.ts';
import type { Ctx, ModelLabels } from './types.ts';

const LABELS = ['route', 'format', 'platform', 'group', 'model', 'status_class'] as const;

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = counter(registry, { name: 'gateway_requests_total', help: 'Requests answered, by route and outcome class.', labelNames: LABELS });
  const duration = cellHistogram(registry, {
    name: 'gateway_request_duration_seconds', help: 'Time from request arrival to the end of the response.',
    labelNames: LABELS, buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  });
  const upstreamTtfb = cellHistogram(registry, {
    name: 'gateway_upstream_ttfb_seconds', help: 'Time from sending upstream to the first response byte.',
    labelNames: ['route', 'platform', 'group'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  });
  const overhead = cellHistogram(registry, {
    name: 'gateway_overhead_seconds', help: 'Time the gateway added to a request: its duration less the upstream\'s own (from the last attempt sent to its answer complete).',
    labelNames: ['route', 'format'], buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  });
  const ttft = cellHistogram(registry, {
    name: 'gateway_ttft_seconds', help: 'Streams: time from request arrival to the first byte of the answer relayed (queue waits and failovers included).',
    labelNames: ['route', 'group', 'model'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
  });
  const inFlight = new Gauge({ name: 'gateway_requests_in_flight', help: 'Requests being handled now.', registers: [registry] });

  return {
    registry,
    /** The text a scrape gets (under `workers: N`, the whole cluster's). */
    text: metricsText(registry),
    inFlight,
    /** Report the store's availability (a shared store's; an embedded one is always available). */
    watchStore(store: Store): void {
      new Gauge({
        name: 'gateway_store_available', help: '1 while the store answers; 0 from a store call that failed until one succeeds.',
        aggregator: 'min', // under workers: 0 when any worker cannot reach it
        registers: [registry],
        collect() { this.set(store.available?.() === false ? 0 : 1); },
      });
      const failures = store.writeFailures?.bind(store);
      if (!failures) return;
      let counted = 0;
      new Counter({
        name: 'gateway_store_write_failures_total', help: 'Times the embedded store could not write a batch to its file (a full disk, an I/O error); it tries again every second.',
        registers: [registry],
        collect() { const n = failures(); this.inc(n - counted); counted = n; },
      });
    },
    /** Record a finished request; its model is labelled once it passed the allow-list, and only by a name `models` knows. */
    observe(ctx: Ctx, status: number, models: ModelLabels): void {
      const end = ctx.timings.end ?? performance.now();
      const labels = {
        route: ctx.route.path, format: ctx.format.name, platform: ctx.platform?.name ?? '-', group: ctx.group?.name ?? '-',
        model: ctx.upstreamModel && ctx.model ? models.label(ctx.model, ctx.key) : '-', status_class: statusClass(status),
      };
      requests.inc(labels);
      duration.observe(labels, (end - ctx.timings.start) / 1000);
      const { upstreamStart, firstByte, upstreamEnd } = ctx.timings;
      if (ctx.stream && firstByte !== undefined) ttft.observe({ route: labels.route, group: labels.group, model: labels.model }, (firstByte - ctx.timings.start) / 1000);
      if (upstreamStart !== undefined && firstByte !== undefined) {
        upstreamTtfb.observe({ route: labels.route, platform: labels.platform, group: labels.group }, (firstByte - upstreamStart) / 1000);
      }
      if (upstreamStart !== undefined && upstreamEnd !== undefined) {
        overhead.observe({ route: labels.route, format: labels.format }, Math.max(0, end - ctx.timings.start - (upstreamEnd - upstreamStart)) / 1000);
      }
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
