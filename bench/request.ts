// The one request every target gets (a chat completion, whole or streamed), and how to tell an answer to it was whole.
export const PATH = '/v1/chat/completions';
const BENCH_KEY = 'sk-bench-0123456789';

export const headersFor = (key = BENCH_KEY) => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });

/** The keys a load spreads its requests over, in turn (--keys): `keys`, else the one `key` (undefined: BENCH_KEY). */
export const loadKeys = (aim: { key?: string; keys?: readonly string[] }): readonly (string | undefined)[] => (aim.keys?.length ? aim.keys : [aim.key]);

export const bodies = {
  whole: JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Say hello' }] }),
  stream: JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'Say hello' }] }),
};

/**
 * Whether an answer's body is whole, judged against the target's answer to the check request (`check`): not shorter,
 * and ending as it does (a stream's last frames, `data: [DONE]`). The static upstream's answers never vary, so a body
 * that fails this was cut short.
 */
export function wholeLike(check: string): (body: string) => boolean {
  const end = check.slice(-32);
  return (body) => body.length >= check.length && body.endsWith(end);
}
