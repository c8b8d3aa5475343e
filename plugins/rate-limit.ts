// Stage `rate-limit`: admits the request against the key's limits (in the round trip of the stage that calls the upstream,
// when there is one), holding a concurrency lease until settled.
import { defineErrors, type GatewayError } from '../core/errors.ts';
import type { Ctx, EndHook, Env, Plugin } from '../core/types.ts';
import type { Admission, AdmitRequest, AdmitResult, KeyLimits, UsageRecord } from '../core/store/types.ts';
import { dig } from './dotted.ts';
import { Heartbeats } from './heartbeats.ts';
import { cost, findPrice } from './pricing.ts';
import { ADMISSION, type AdmissionHandle } from './vars.ts';

type LimitName = keyof KeyLimits;
interface Options { lease_ms: number; heartbeat_ms: number; output_fields: string[]; bytes_per_token: number; limits: LimitName[] }

const LIMITS: LimitName[] = ['rpm', 'tpm', 'concurrency', 'quota_usd', 'usd_5h', 'usd_1d', 'usd_7d'];

/** The key's limits this stage enforces (a route that costs nothing enforces only some). */
function only(limits: KeyLimits, names: LimitName[]): KeyLimits {
  const out: KeyLimits = {};
  for (const name of names) if (limits[name] !== undefined) out[name] = limits[name];
  return out;
}

/** `held`: reached with the estimated cost of the key's requests in flight, which settle for their actual cost. */
const limit = (wire: string, doc: string, text: string) => ({
  status: 429, doc, wire,
  message: ({ window, held }: { window?: string; held?: boolean }) =>
    text + (held ? ` (${window ? `${window}, ` : ''}with the estimated cost of its requests in flight)` : window ? ` (${window})` : ''),
});
const errors = defineErrors('rate-limit', {
  api_key_quota_exhausted: limit('API_KEY_QUOTA_EXHAUSTED', 'The key has spent its `quota_usd` (`x-should-retry: false`), or its requests in flight hold what is left (`retry-after: 1`).', 'This API key has used up its quota'),
  api_key_usage_window_exceeded: limit('API_KEY_USAGE_WINDOW_EXCEEDED', 'The key reached `usd_5h` / `usd_1d` / `usd_7d` in the current window (`retry-after`: when it resets), or its requests in flight hold what is left (`retry-after: 1`).', 'This API key has reached its spend limit for the current window'),
  api_key_rpm_exceeded: limit('API_KEY_RPM_EXCEEDED', 'The key reached its `rpm`.', 'This API key has reached its requests-per-minute limit'),
  api_key_tpm_exceeded: limit('API_KEY_TPM_EXCEEDED', 'The key reached its `tpm`.', 'This API key has reached its tokens-per-minute limit'),
  api_key_concurrency_exceeded: limit('API_KEY_CONCURRENCY_EXCEEDED', 'The key has `concurrency` requests in flight.', 'This API key has too many requests in flight'),
});
const BY_REASON = {
  quota_exhausted: errors.api_key_quota_exhausted, window_exhausted: errors.api_key_usage_window_exceeded,
  rpm: errors.api_key_rpm_exceeded, tpm: errors.api_key_tpm_exceeded, concurrency: errors.api_key_concurrency_exceeded,
};

/** The gateway's own limit, in a shape no upstream uses: a distinct code, and x-should-retry false when waiting cannot help. */
function refusal(result: Extract<AdmitResult, { ok: false }>): GatewayError {
  const headers: Record<string, string> = { 'x-gateway-limit': result.window ? `${result.reason}:${result.window}` : result.reason };
  if (result.retryAfterMs === undefined) headers['x-should-retry'] = 'false';
  else headers['retry-after'] = String(Math.max(1, Math.ceil(result.retryAfterMs / 1000)));
  return BY_REASON[result.reason]({ window: result.window, held: result.held }, { headers });
}


/** Prompt tokens from the body bytes, and the output cap the body names (undefined: none). */
async function measure(ctx: Ctx, options: Options): Promise<{ prompt: number; output: number | undefined }> {
  const bytes = (await ctx.body()).length;
  let output: number | undefined;
  if (ctx.format.jsonBody && bytes > 0) {
    const body = await ctx.json();
    for (const field of options.output_fields) {
      const v = dig(body, field);
      if (typeof v === 'number' && v > 0) { output = v; break; }
    }
  }
  return { prompt: Math.ceil(bytes / options.bytes_per_token), output };
}

/**
 * USD the request may cost, held against the USD limits until it settles: the prompt at the input price and the output cap
 * (or the group's default_max_tokens) at the output price, by the dearer of the requested and upstream model's prices
 * (metering may bill by either).
 */
function costEstimate(ctx: Ctx, pricing: Env['config']['pricing'], m: { prompt: number; output: number | undefined }): number {
  const usage = { input: m.prompt, output: m.output ?? ctx.group?.default_max_tokens ?? 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
  let usd = 0;
  for (const model of [ctx.model, ctx.upstreamModel]) {
    const price = model === undefined ? undefined : findPrice(pricing, model);
    if (price) usd = Math.max(usd, cost(usage, price, ctx.group?.rate_multiplier ?? 1));
  }
  return usd;
}

/**
 * One request's admission, sent once (by this stage, or by the later stage that takes it) and returned once: settled
 * with the request's usage, or released at its end. A class with plain fields, not an object literal with a getter: V8
 * makes such a getter's accessor pair in the old generation, which kept every request alive past minor GCs
 * (docs/performance.md).
 */
class Admitting implements AdmissionHandle {
  #admission: Admission | undefined = undefined;
  #returned = false;
  #sent: Promise<void> | undefined = undefined;
  readonly #store: Env['store'];
  readonly #ctx: Ctx;
  readonly #request: Omit<AdmitRequest, 'now'>;
  readonly #leases: Heartbeats<Admission>;

  constructor(store: Env['store'], ctx: Ctx, request: Omit<AdmitRequest, 'now'>, leases: Heartbeats<Admission>) {
    this.#store = store;
    this.#ctx = ctx;
    this.#request = request;
    this.#leases = leases;
  }

  send(): Promise<void> { return (this.#sent ??= this.#admit()); }

  settle(record: UsageRecord, limits: KeyLimits): ReturnType<Env['store']['settle']> {
    return this.#store.settle(record, this.#return(), limits);
  }

  /** Hand the reservation back unsettled (a route not billed, a request not metered); nothing once it went back. */
  async release(): Promise<void> {
    const admitted = this.#return();
    if (admitted) await this.#store.release(admitted).catch((err) => this.#ctx.log.warn({ err, req_id: this.#ctx.id }, 'lease release failed'));
  }

  /** What goes back, the first time only. */
  #return(): Admission | undefined {
    if (this.#returned) return undefined;
    this.#returned = true;
    const admitted = this.#admission;
    if (admitted) this.#leases.delete(admitted);
    return admitted;
  }

  async #admit(): Promise<void> {
    const result = await this.#store.admit({ ...this.#request, now: Date.now() }); // the clock when it is sent
    if (!result.ok) {
      this.#ctx.end('rejected'); // never reached an upstream: nothing to settle
      throw refusal(result);
    }
    this.#admission = result.admission;
    if (result.admission.lease) this.#leases.add(result.admission);
  }
}

/** At the request's end, what it reserved goes back unless its settlement took it (metering's end hook runs first). */
const releaseAdmission: EndHook = (ctx) => (ctx.get(ADMISSION) as Admitting | undefined)?.release();

export const rateLimit: Plugin<Options> = {
  name: 'rate-limit',
  description: 'Enforces the key\'s rpm, tpm, concurrency, lifetime quota and 5h/1d/7d spend windows, shared by every gateway process. With a USD limit, a request holds its estimated cost (prompt estimate × input price + output cap, or the group\'s default_max_tokens, × output price, by the dearer of the requested and upstream model) until it settles, and what requests in flight hold counts as spent, so concurrent requests cannot overdraw the limit together. With a later proxy stage the admission is sent with proxy\'s account decision (one store round trip); a refused request is not metered.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      lease_ms: { type: 'integer', minimum: 1000, default: 60_000, description: 'A concurrency slot expires this long after its last heartbeat (so a crashed process frees it).' },
      heartbeat_ms: { type: 'integer', minimum: 100, default: 20_000, description: 'How often a running request renews its slot.' },
      output_fields: {
        type: 'array', items: { type: 'string' },
        default: ['max_tokens', 'max_completion_tokens', 'max_output_tokens', 'generationConfig.maxOutputTokens'],
        description: 'Body fields naming the output cap, first found wins (dotted paths): part of the tpm estimate and of the cost held.',
      },
      bytes_per_token: { type: 'number', minimum: 1, default: 4, description: 'Request bytes per token for the prompt estimate (tpm and cost held).' },
      limits: {
        type: 'array', items: { type: 'string', enum: LIMITS }, uniqueItems: true, default: LIMITS,
        description: 'The key\'s limits this stage enforces; a route that spends nothing (reading a stored response) takes [rpm, concurrency].',
      },
    },
  },
  requires: ['key'],
  provides: ['admission'],
  create(options, env, place) {
    // A later stage that takes the admission sends it with its own first store call: one round trip, not two.
    const deferred = place.laterTakes('admission');
    // The concurrency leases of the requests running through this stage, renewed together.
    const leases = new Heartbeats<Admission>(options.heartbeat_ms, (a, now) => env.store.heartbeat(a, options.lease_ms, now));
    const every = LIMITS.every((name) => options.limits.includes(name));
    return async (ctx, next) => {
      const key = ctx.key!;
      const limits = every ? key.limits : only(key.limits, options.limits);
      if (!limits.rpm && !limits.tpm && !limits.concurrency && !limits.quota_usd && !limits.usd_5h && !limits.usd_1d && !limits.usd_7d) return next();
      const usd = !!(limits.quota_usd || limits.usd_5h || limits.usd_1d || limits.usd_7d) && ctx.route.billed !== false;
      const m = limits.tpm || usd ? await measure(ctx, options) : undefined;
      const handle = new Admitting(env.store, ctx, {
        keyId: key.id, requestId: ctx.id, limits, leaseMs: options.lease_ms,
        estimatedTokens: limits.tpm && m ? m.prompt + (m.output ?? 0) : 0,
        estimatedCost: usd && m ? costEstimate(ctx, env.config.pricing, m) : 0,
      }, leases);
      ctx.set(ADMISSION, handle);
      ctx.onEnd(releaseAdmission);
      if (!deferred) await handle.send();
      return next();
    };
  },
};
