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
