// Session signals for account stickiness: an explicit session id from headers or body, else a hash of the conversation's stable prefix.
import { createHash } from 'node:crypto';
import type { Ctx } from '../../core/types.ts';
import { dig } from '../dotted.ts';

export interface SessionOptions {
  /** Request headers naming a session, first present wins. */
  session_headers: string[];
  /** Body fields (dotted paths) naming a session, tried after the headers. */
  session_fields: string[];
  /** Body fields (dotted paths) whose values together are the conversation's stable prefix, hashed when no id is given. */
  session_prefix: string[];
}

export const SESSION_DEFAULTS: SessionOptions = {
  // Codex CLI sends `session-id`; Claude Code `x-claude-code-session-id` (its metadata.user_id carries the same session).
  session_headers: ['session_id', 'session-id', 'conversation_id', 'x-session-affinity', 'x-claude-code-session-id'],
  session_fields: ['prompt_cache_key', 'metadata.user_id'],
  session_prefix: ['system', 'instructions', 'systemInstruction', 'tools', 'messages.0', 'input.0', 'contents.0'],
};

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 32);

/**
 * The request's session key (hashed, so its length is bounded and a client's id is not stored as given), or undefined
 * when the request carries nothing to tell one conversation from another.
 */
export async function sessionKey(ctx: Ctx, o: SessionOptions): Promise<string | undefined> {
  for (const name of o.session_headers) {
    const v = ctx.req.headers[name];
    const value = Array.isArray(v) ? v[0] : v;
    if (value) return `h:${digest(value)}`;
  }
  const method = ctx.req.method ?? 'GET';
  const json = ctx.format.jsonBody || String(ctx.req.headers['content-type'] ?? '').includes('json');
  if (method === 'GET' || method === 'HEAD' || !json || (await ctx.body()).length === 0) return undefined;
  let body: Record<string, unknown>;
  try { body = await ctx.json(); } catch { return undefined; }
  for (const path of o.session_fields) {
    const value = dig(body, path);
    if (typeof value === 'string' && value !== '') return `f:${digest(value)}`;
  }
  const prefix = o.session_prefix.map((path) => dig(body, path));
  if (prefix.every((v) => v === undefined)) return undefined;
  // The format is part of the prefix: the same first words in two wire formats are two conversations.
  return `p:${digest(JSON.stringify([ctx.format.name, ...prefix]))}`;
}
