// The context variables stages hand to one another, declared once here (the way Hono middleware declares its
// variables): the stage that provides one and the stages that use it import the same typed token. Their names are what
// gateway.yaml chains are checked by (Plugin.provides / requires / takes).
import { contextVar as variable } from '../core/vars.ts';
import type { Admission } from '../core/store/types.ts';


/**
 * The request's admission against its key's limits, provided by rate-limit. A stage that takes it (`takes:
 * ['admission']`, proxy) sends it with its own first store call, so both travel in one round trip; metering hands the
 * reservation back when it settles.
 */
export interface AdmissionHandle {
  /** Sends the admission (once; a second call gets the same promise): resolves when admitted, rejects with the refusal. */
  send(): Promise<void>;
  /** What was reserved, once admitted. */
  readonly admission: Admission | undefined;
  /** Set by the stage that settled the request's usage (the reservation went back with it). */
  settled: boolean;
}
export const ADMISSION = variable<AdmissionHandle>('admission');
