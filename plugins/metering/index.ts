// Stage `metering`: settles every request that reached it (completed, failed, cut or abandoned) into the usage ledger, once.
import { isBodyAborted } from '../../core/errors.ts';
import { counter, gauge } from '../../core/plugin-metrics.ts';
import { isStoreUnavailable } from '../../core/store/guard.ts';
import type { Ctx, EndHook, Env, KeyConfig, Plugin } from '../../core/types.ts';
import { OTHER_MODEL } from '../../core/store/rollup.ts';
import type { Ending, Store, UsageRecord } from '../../core/store/types.ts';
import type { Usage } from '../../core/usage.ts';
import { ADMISSION, FELL_BACK_FROM } from '../vars.ts';
import { billable, cost, findPrice, type Price } from '../pricing.ts';
import { promptEstimate } from './prompt.ts';
import { ModelRows, NameWarnings } from './names.ts';
import { QuotaWatch } from './quota-watch.ts';

interface Options { price_by: 'upstream' | 'requested'; on_disconnect: 'observed' | 'none'; chars_per_token: number }

const ZERO: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };

// One per store, which is opened once per process: a reload keeps the day's rows and the keys being watched.
const byStore = new WeakMap<Store, { rows: ModelRows; quota: QuotaWatch }>();
function perStore(store: Store): { rows: ModelRows; quota: QuotaWatch } {
  let kept = byStore.get(store);
  if (!kept) byStore.set(store, (kept = { rows: new ModelRows(), quota: new QuotaWatch() }));
  return kept;
}

function metrics(env: Env) {
  const labels = ['model', 'group'] as const;
  return {
    tokens: counter(env.metrics, { name: 'gateway_tokens_total', help: 'Tokens metered, by direction.', labelNames: ['direction', ...labels] }),
    cost: counter(env.metrics, { name: 'gateway_cost_usd_total', help: 'Cost metered in USD (after the group multiplier).', labelNames: labels }),
    // Per upstream account (bounded by config): its prompt-cache hit ratio is read / (read + write + uncached).
    prompt: counter(env.metrics, {
      name: 'gateway_prompt_tokens_total', help: 'Prompt tokens by upstream account and how the provider\'s prompt cache took them (read: a hit, write, uncached).',
      labelNames: ['group', 'account', 'cache'],
    }),
    settled: counter(env.metrics, { name: 'gateway_settlements_total', help: 'Requests settled into the ledger, by how they ended.', labelNames: ['ending'] }),
    unpriced: counter(env.metrics, { name: 'gateway_unpriced_requests_total', help: 'Requests for a model with no price (billed 0).', labelNames: ['model'] }),
    unreported: counter(env.metrics, {
      name: 'gateway_usage_unreported_total', help: 'Completed answers whose upstream reported no usage: recorded with 0 tokens, nothing estimated.',
      labelNames: ['route', 'model'],
    }),
    // The store is opened once per process, so the first stage's reference stays right across reloads.
    pending: gauge(env.metrics, {
      name: 'gateway_settlements_pending', help: 'Settlements held in memory until the store answers again (written then).',
      collect() { this.set(env.store.pendingSettlements?.() ?? 0); },
    }),
  };
}

export const metering: Plugin<Options> = {
  name: 'metering',
  description: 'Records usage and cost of every request into the store and the metrics, with how it ended (completed, incomplete: cut by the output cap, failed, disconnected, missing-terminal, timeout); place it after rate-limit and before proxy.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      price_by: { type: 'string', enum: ['upstream', 'requested'], default: 'upstream', description: 'Which model name is looked up in pricing: the one served upstream or the one the client asked for.' },
      on_disconnect: {
        type: 'string', enum: ['observed', 'none'], default: 'observed',
        description: 'When the client leaves mid-stream: bill what was observed (the usage the upstream reported, read on after the client left within proxy usage_drain_ms; what it never reported is estimated: the output from the text streamed, see chars_per_token, the prompt as count_tokens estimates the request), or nothing.',
      },
      chars_per_token: {
        type: 'number', exclusiveMinimum: 0, default: 4,
        description: 'on_disconnect observed: streamed output the upstream never counted is estimated as streamed characters / this, rounded up; the record says estimated: true.',
      },
    },
  },
  // Settles what the stages after it relayed (usage, account, outcome), whether or not they finished.
  requires: ['key', 'group'],
  create(options, env) {
    const m = metrics(env);
    const unreportedWarnings = new NameWarnings(env.log, 'the upstream reported no usage: recorded with 0 tokens (nothing is estimated)');
    const unpricedWarnings = new NameWarnings(env.log, 'model has no price: billed 0 (add it to pricing)');
    const { rows, quota } = perStore(env.store);
    /** Some answers carry no usage (e.g. older Gemini embedding models): counted and said, never guessed. */
    const unreported = (route: string, model: string, label: string): void => {
      m.unreported.inc({ route, model: label });
      unreportedWarnings.warn(label === model, { route, model });
    };
    const priceOf = (model: string, label: string): Price | undefined => {
      const price = findPrice(env.config.pricing, model);
      if (!price) {
        m.unpriced.inc({ model: label });
        unpricedWarnings.warn(label === model, { model });
      }
      return price;
    };

    /** Every request that reached this stage settles once, when it has ended. */
    const settleAtEnd: EndHook = (ctx, thrown) =>
      settle(ctx, thrown ? thrown.status : ctx.res.statusCode).catch((err) => ctx.log.error({ err, req_id: ctx.id }, 'settlement failed'));

    return async (ctx, next) => {
      ctx.onEnd(settleAtEnd);
      try {
        await next();
      } catch (err) {
        // Refused because the store could not be asked (limits, accounts), or the client never sent its whole request:
        // like a limit's refusal, nothing to bill (and nothing to hold while the store is away).
        ctx.end(isStoreUnavailable(err) || isBodyAborted(err) ? 'rejected' : 'failed');
        throw err;
      }
    };

    /**
     * What a request the client abandoned is billed: nothing, or the usage the upstream reported; when its final usage
     * never came, the text streamed stands in for the output and, if the prompt was not counted either, the request
     * itself for the prompt (a client must not get its prompt free by leaving before the usage chunk).
     */
    async function observed(ctx: Ctx): Promise<{ usage: Usage; estimated: boolean }> {
      if (options.on_disconnect === 'none') return { usage: ZERO, estimated: false };
      let usage = ctx.usage ?? ZERO;
      const streamed = ctx.streamed;
      if (!streamed || streamed.outputFinal) return { usage, estimated: false };
      let estimated = false;
      const guess = Math.ceil(streamed.chars / options.chars_per_token);
      // A count the upstream did report (a placeholder such as message_start's) stands when the text suggests no more.
      if (guess > usage.output) { usage = { ...usage, output: guess }; estimated = true; }
      if (usage.input === 0) { usage = { ...usage, input: await promptEstimate(ctx) }; estimated = true; }
      return { usage, estimated };
    }

    /**
     * Whether a record gets per-model rollups under its own model: a name the configuration knows always; another only
     * when the upstream did not refuse it, and within the key's MODEL_ROWS such names of the day.
     */
    function ownRow(key: KeyConfig, model: string, status: number, time: number): boolean {
      return model === '' || env.models.known(model, key) || (status < 400 && rows.take(key.id, model, time));
    }

    async function settle(ctx: Ctx, status: number): Promise<void> {
      const key = ctx.key;
      const group = ctx.group;
      // A request the gateway refused (its limits) never reached an upstream: there is nothing to bill. Nor on a route
      // whose answers are not billed requests (token counting): rate-limit then hands its admission back unsettled.
      if (!key || !group || ctx.outcome === 'rejected' || ctx.route.billed === false) return;
      const ending: Ending = ctx.outcome ?? (status >= 400 ? 'failed' : 'completed');
      const { usage, estimated } = ending === 'disconnected' ? await observed(ctx) : { usage: ctx.usage ?? ZERO, estimated: false };
      const model = ctx.model ?? '';
      const upstreamModel = ctx.upstreamModel ?? model;
      const priced = options.price_by === 'upstream' ? upstreamModel : model;
      // Metric labels take only names the configuration knows: a client's invented ones share `other`.
      const shown = priced ? env.models.label(priced, key) : '-';
      if (ending === 'completed' && status < 300 && !ctx.usage) unreported(ctx.route.path, priced, shown);
      const price = usage === ZERO ? undefined : priceOf(priced, shown);
      const usd = price ? cost(usage, price, group.rate_multiplier) : 0;
      const b = billable(usage);
      const time = Date.now();
      const { start, firstByte, end } = ctx.timings;
      const fellBackFrom = ctx.get(FELL_BACK_FROM);
      const record: UsageRecord = {
        request_id: ctx.id, ...(ctx.clientRequestId === undefined ? {} : { client_request_id: ctx.clientRequestId }), time, key_id: key.id, group: group.name, platform: ctx.platform?.name ?? '',
        account: ctx.account?.id ?? '', route: ctx.route.path, model, upstream_model: upstreamModel, stream: ctx.stream,
        status, ending, input_tokens: b.input, output_tokens: b.output, cache_read_tokens: b.cacheRead,
        cache_write_tokens: b.cacheWrite, reasoning_tokens: usage.reasoning, cost: usd,
        duration_ms: Math.round((end ?? performance.now()) - start),
        ttft_ms: firstByte === undefined ? null : Math.round(firstByte - start),
        ...(b.cacheWrite1h > 0 ? { cache_write_1h_tokens: b.cacheWrite1h } : {}),
        ...(estimated ? { estimated } : {}),
        ...(ctx.attempts ? { attempts: ctx.attempts } : {}),
        ...(fellBackFrom ? { fell_back_from: fellBackFrom } : {}),
        ...(ownRow(key, model, status, time) ? {} : { rollup_model: OTHER_MODEL }),
      };
      ctx.cost = usd;
      // With what rate-limit reserved for it, which goes back with it.
      const admission = ctx.get(ADMISSION);
      await (admission ? admission.settle(record, key.limits) : env.store.settle(record, undefined, key.limits));
      if (usd > 0) quota.settled(key, env);
      const tokens = (direction: string, n: number) => { if (n > 0) m.tokens.inc({ direction, model: shown, group: group.name }, n); };
      tokens('input', b.input);
      tokens('output', b.output);
      tokens('cache_read', b.cacheRead);
      tokens('cache_write', b.cacheWrite);
      tokens('reasoning', usage.reasoning);
      if (usd > 0) m.cost.inc({ model: shown, group: group.name }, usd);
      const account = ctx.account?.id ?? '-';
      const prompt = (cache: string, n: number) => { if (n > 0) m.prompt.inc({ group: group.name, account, cache }, n); };
      prompt('read', b.cacheRead);
      prompt('write', b.cacheWrite);
      prompt('uncached', b.input);
      m.settled.inc({ ending });
    }
  },
};
