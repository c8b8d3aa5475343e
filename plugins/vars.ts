// The context variables stages hand to one another, declared once here (the way Hono middleware declares its
// variables): the stage that provides one and the stages that use it import the same typed token. Their names are what
// gateway.yaml chains are checked by (Plugin.provides / requires / takes).
import { contextVar as variable } from '../core/vars.ts';
import type { KeyLimits, Store, UsageRecord } from '../core/store/types.ts';


/**
 * The request's admission against its key's limits, provided by rate-limit. A stage that takes it (`takes:
 * ['admission']`, proxy) sends it with its own first store call, so both travel in one round trip. What was reserved
 * goes back once: with the request's settlement (metering), or else at the request's end (rate-limit's end hook).
 */
export interface AdmissionHandle {
  /** Sends the admission (once; a second call gets the same promise): resolves when admitted, rejects with the refusal. */
  send(): Promise<void>;
  /** Settle the request's usage with what was reserved for it, which goes back with it (store.settle). */
  settle(record: UsageRecord, limits: KeyLimits): ReturnType<Store['settle']>;
}
export const ADMISSION = variable<AdmissionHandle>('admission');

/** The groups a request fell back from, first first (proxy, groups.NAME.fallback); metering puts them in the record. */
export const FELL_BACK_FROM = variable<string[]>('fell-back-from');
