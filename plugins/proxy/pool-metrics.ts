// Metrics of the account pools: per-account state (read from the store on scrape), selections, attempts, failovers, queue waits, stickiness.
import type { Registry } from 'prom-client';
import { counter, gauge, histogram } from '../../core/plugin-metrics.ts';
import type { GatewayConfig } from '../../core/types.ts';
import type { Store } from '../../core/store/types.ts';

const STATES = ['available', 'cooling', 'needs_attention'] as const;

/** What the state gauge reads on scrape: the latest config (a reload replaces it) and the store. */
const sources = new WeakMap<Registry, { config: GatewayConfig; store: Store }>();

export function poolMetrics(registry: Registry, config: GatewayConfig, store: Store) {
  sources.set(registry, { config, store });
  return {
    state: gauge(registry, {
      name: 'gateway_account_state', help: 'Upstream account state: 1 for the state it is in (available, cooling, needs_attention), else 0.',
      labelNames: ['group', 'account', 'state'],
      aggregator: 'max', // every worker reads the same shared state: summing would count it once per worker
      async collect() {
        const source = sources.get(registry);
        if (!source) return;
        this.reset();
        const now = Date.now();
        await Promise.all(Object.values(source.config.groups).map(async (group) => {
          const ids = group.accounts.filter((a) => a.enabled).map((a) => a.id);
          if (!ids.length) return;
          const states = await source.store.accountStates(group.name, ids, now).catch(() => []);
          for (const s of states) {
            const current = s.coolingUntil === undefined ? 'available' : s.reason === 'auth' ? 'needs_attention' : 'cooling';
            for (const state of STATES) this.set({ group: group.name, account: s.id, state }, state === current ? 1 : 0);
          }
        }));
      },
    }),
    selections: counter(registry, { name: 'gateway_account_selections_total', help: 'Upstream accounts chosen to serve a request (each attempt).', labelNames: ['group', 'account'] }),
    attempts: counter(registry, { name: 'gateway_upstream_attempts_total', help: 'Upstream attempts, by how they ended (ok, client_error, rate_limited, overloaded, auth, upstream_error, unreachable, timeout, stream_error).', labelNames: ['group', 'account', 'reason'] }),
    failovers: counter(registry, { name: 'gateway_failovers_total', help: 'Requests moved to another account, by the failure that moved them.', labelNames: ['group', 'reason'] }),
    fallbacks: counter(registry, { name: 'gateway_group_fallbacks_total', help: 'Requests moved to a fallback group (groups.NAME.fallback) because no account of their group could take them.', labelNames: ['from', 'to'] }),
    attention: counter(registry, { name: 'gateway_account_needs_attention_total', help: 'Upstream accounts refused with 401/403 (their credential needs an operator).', labelNames: ['group', 'account'] }),
    queueWait: histogram(registry, {
      name: 'gateway_queue_wait_seconds', help: 'Time requests waited for a free account slot (only requests that waited).',
      labelNames: ['group'], buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    }),
    sticky: counter(registry, { name: 'gateway_sticky_total', help: 'Requests with a session: served by their bound account (hit), first of their session (miss), or moved off a cooling or busy account (moved).', labelNames: ['result'] }),
  };
}

export type PoolMetrics = ReturnType<typeof poolMetrics>;
