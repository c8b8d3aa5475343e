// The shape of a strictness table: each row names what the real API refuses and checks one request for it.
import type { ErrorSpec } from '../errors.ts';

export interface Rule<Subject> {
  /** What the real API refuses, in words; tests and reviewers read the table by these. */
  refuses: string;
  /** The vendor's own refusal when the request breaks the rule. */
  check: (subject: Subject) => ErrorSpec | undefined;
}

/** The first refusal of a table, in table order, so the error a request gets is stable. */
export function firstRefusal<Subject>(rules: readonly Rule<Subject>[], subject: Subject): ErrorSpec | undefined {
  for (const rule of rules) {
    const refusal = rule.check(subject);
    if (refusal) return refusal;
  }
  return undefined;
}

/** The first defined value of `find` over `items`, with each item's index: a loop that stops at the first problem. */
export function firstOf<T, R>(items: readonly T[], find: (item: T, index: number) => R | undefined): R | undefined {
  for (let i = 0; i < items.length; i++) {
    const found = find(items[i], i);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Keys of `object` outside `known`, in the object's order. */
export function unknownKeys(object: Record<string, unknown>, known: ReadonlySet<string>): string[] {
  return Object.keys(object).filter((key) => !known.has(key));
}

/** 'a', 'a' and 'b', 'a', 'b', and 'c': how OpenAI lists supported values. */
export function quotedList(values: readonly string[]): string {
  const quoted = values.map((value) => `'${value}'`);
  if (quoted.length <= 2) return quoted.join(' and ');
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted[quoted.length - 1]}`;
}
