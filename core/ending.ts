// How a request ended: one table says which ending stands when a second is observed, who ended it, and what its log
// line calls it; RequestEnd is the one writer of a context's outcome and runs the stages' end hooks.
import type { GatewayError } from './errors.ts';
import type { Ctx, EndedBy, EndHook, Outcome } from './types.ts';

interface EndingRule {
  /** Later observations that replace this ending; any ending replaces none. The first observation otherwise stands. */
  replacedBy: readonly Outcome[];
  /** What the log line says of a request that ended so, when the ending tells it by itself (else the error or status does). */
  said?: { by: EndedBy; error: string };
}

/** A cut of the exchange: it outranks the answer the upstream gave (the client left, or the stream stopped short). */
const CUTS: readonly Outcome[] = ['disconnected', 'missing-terminal', 'timeout'];

export const ENDINGS: Record<Outcome, EndingRule> = {
  completed: { replacedBy: CUTS },
  incomplete: { replacedBy: CUTS },
  failed: { replacedBy: CUTS },
  // Refused before any upstream: nothing to bill, and nothing that happens after the refusal changes that.
  rejected: { replacedBy: [] },
  disconnected: { replacedBy: [], said: { by: 'client', error: 'client_disconnected' } },
  'missing-terminal': { replacedBy: [], said: { by: 'upstream', error: 'stream_truncated' } },
  timeout: { replacedBy: [], said: { by: 'upstream', error: 'timeout' } },
};

/** Whether `next`, observed now, stands over `current`. */
export const stands = (current: Outcome | undefined, next: Outcome): boolean =>
  current === undefined || ENDINGS[current].replacedBy.includes(next);

/** A request's ending as its context carries it: the outcome, who ended it, and the hooks to run once it is over. */
export class RequestEnd {
  outcome: Outcome | undefined = undefined;
  endedBy: EndedBy | undefined = undefined;
  #hooks: EndHook[] | undefined = undefined;

  /** Say how the request ended; true when this ending stands (ENDINGS, or it was said already), false when another does. */
  end(outcome: Outcome, by?: EndedBy): boolean {
    if (this.outcome !== outcome && !stands(this.outcome, outcome)) return false;
    this.outcome = outcome;
    if (by !== undefined) this.endedBy = by;
    return true;
  }

  onEnd(hook: EndHook): void { (this.#hooks ??= []).push(hook); }

  /**
   * Once the chain returned or threw (before a thrown error is answered): the hooks, the last registered first, as a
   * chain's `finally` blocks would unwind; one that fails is logged and the others still run.
   */
  async ended(ctx: Ctx, thrown: GatewayError | undefined): Promise<void> {
    const hooks = this.#hooks;
    if (hooks === undefined) return;
    this.#hooks = undefined;
    for (let i = hooks.length - 1; i >= 0; i--) {
      try { await hooks[i](ctx, thrown); } catch (err) { ctx.log.error({ err, req_id: ctx.id }, 'end hook failed'); }
    }
  }
}
