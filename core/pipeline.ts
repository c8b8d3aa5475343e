// Onion composition of stages: each stage gets (ctx, next) and may answer without calling next.
import type { Ctx, Stage } from './types.ts';

export function compose(stages: Stage[]): (ctx: Ctx) => Promise<void> {
  return (ctx) => {
    let index = -1;
    const dispatch = (i: number): Promise<void> => {
      if (i <= index) return Promise.reject(new Error('next() called more than once'));
      index = i;
      const stage = stages[i];
      if (!stage) return Promise.resolve();
      try {
        return stage(ctx, () => dispatch(i + 1));
      } catch (err) {
        return Promise.reject(err);
      }
    };
    return dispatch(0);
  };
}
