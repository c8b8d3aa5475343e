// An upstream answer in a kind's own framing, presented as its format's: the kind's decoder (UpstreamKind.decode) turns
// the body's bytes as they come into the format's (Bedrock's event-stream into Anthropic SSE frames), and the relays,
// the stream probe and the failover read the result as any UpstreamResponse, backpressure and hang-ups included.
import type { IncomingHttpHeaders } from 'node:http';
import type { AnswerDecoder } from '../../core/types.ts';
import { UpstreamResponse } from './upstream-response.ts';

/** Headers that describe the undecoded body. */
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'transfer-encoding']);

function rawHeaders(headers: IncomingHttpHeaders, contentType: string): Buffer[] {
  const raw: Buffer[] = [Buffer.from('content-type'), Buffer.from(contentType)];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || BODY_HEADERS.has(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) raw.push(Buffer.from(name, 'latin1'), Buffer.from(one, 'latin1'));
  }
  return raw;
}

export function decodedResponse(source: UpstreamResponse, decoder: AnswerDecoder): UpstreamResponse {
  const out = new UpstreamResponse();
  const h = out.handler(() => {}, () => {});
  // Hanging up on the decoded answer hangs up on the upstream's.
  h.onConnect!((err?: Error) => { source.destroy(err); });
  h.onHeaders!(source.statusCode, rawHeaders(source.headers, decoder.contentType), () => { source.resume(); }, '');
  let ended = false;
  const give = (text: string): void => {
    if (text && h.onData!(Buffer.from(text)) === false) source.pause();
  };
  const fail = (err: Error): void => {
    if (ended) return;
    ended = true;
    source.destroy();
    if (!out.destroyed) out.destroy(err);
  };
  source.on('data', (chunk: Buffer) => {
    if (ended) return;
    try { give(decoder.push(chunk)); } catch (err) { fail(err as Error); }
  });
  source.once('end', () => {
    if (ended) return;
    try { give(decoder.end()); } catch (err) { return fail(err as Error); }
    ended = true;
    h.onComplete!([]);
  });
  source.once('close', () => { if (!ended) fail(new Error('aborted')); });
  source.on('error', () => {});
  return out;
}
