// Shared helpers for the simulator tests: authenticated requests and SSE frame splitting.
import type { Simulator } from '../../simulator/server.ts';

export const AUTH = { authorization: 'Bearer sk-test-upstream' };

export function postJson(sim: Simulator, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(sim.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...AUTH, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Splits an SSE body into frames, asserting nothing: callers check the framing themselves. */
export function framesOf(text: string): string[] {
  return text.split('\n\n').filter((frame) => frame !== '');
}

/** Parsed JSON of every data frame except [DONE]. */
export function chunksOf(text: string): any[] {
  return framesOf(text)
    .map((frame) => frame.slice('data: '.length))
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data));
}

export function contentOf(chunks: any[]): string {
  return chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');
}

export interface SseEvent { event: string; data: any; raw: string }

/** Frames of an `event:` + `data:` stream (Responses, Anthropic), each checked to be exactly those two lines. */
export function eventsOf(text: string): SseEvent[] {
  return framesOf(text).map((raw) => {
    const match = /^event: ([^\n]+)\ndata: ([^\n]+)$/.exec(raw);
    if (!match) throw new Error(`not an event:/data: frame: ${JSON.stringify(raw)}`);
    return { event: match[1], data: JSON.parse(match[2]), raw };
  });
}

/** Reads a body to its end or until the connection drops; `failed` tells which. */
export async function readToCut(res: Response): Promise<{ text: string; failed: boolean }> {
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, failed: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, failed: true };
  }
}

/** One refused request: the rule it breaks (a table row's `refuses`), and the vendor's whole error body. */
export interface RefusalCase {
  rule: string;
  body: unknown;
  error: unknown;
  status?: number;
  path?: string;
}

interface Tap { test(name: string, fn: (t: any) => Promise<void>): unknown }

/**
 * One test per case, each asserting the exact status and error envelope; then a test that every row of the strictness
 * table has at least one case, so a rule added later cannot go untested.
 */
export function testRefusals(t: Tap, sim: Simulator, opts: { path: string; headers?: Record<string, string>; rules: readonly { refuses: string }[]; cases: RefusalCase[] }): void {
  for (const c of opts.cases) {
    t.test(c.rule, async (t) => {
      const res = await postJson(sim, c.path ?? opts.path, c.body, opts.headers);
      t.equal(res.status, c.status ?? 400);
      t.same(await res.json(), c.error);
    });
  }
  t.test('every rule of the table has a case', async (t) => {
    for (const rule of opts.rules) t.ok(opts.cases.some((c) => c.rule === rule.refuses), rule.refuses);
    for (const c of opts.cases) t.ok(opts.rules.some((rule) => rule.refuses === c.rule), `the case names a rule of the table: ${c.rule}`);
  });
}

/** The `refuses` text of the one rule that starts with `start`, so cases name rules without copying whole sentences. */
export function ruleStarting(rules: readonly { refuses: string }[], start: string): string {
  const found = rules.filter((rule) => rule.refuses.startsWith(start));
  if (found.length !== 1) throw new Error(`${found.length} rules start with "${start}"`);
  return found[0].refuses;
}
