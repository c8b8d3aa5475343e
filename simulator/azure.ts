// The simulator playing kind `azure-openai`: Azure's paths (/openai/v1/..., /openai/deployments/{d}/...?api-version=)
// mapped onto the OpenAI routes, `api-key` or a bearer its own token endpoint issued (refused once expired, with
// Azure's 401), and Azure's content-filter results on request: a prompt carrying AZURE_FILTER_PROMPT gets the 400 with
// `innererror`, one carrying AZURE_FILTER_COMPLETION an answer cut with finish_reason content_filter.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BAD_CREDENTIAL } from './incoming.ts';

export const AZURE_FILTER_PROMPT = '[sim:azure-content-filter:prompt]';
export const AZURE_FILTER_COMPLETION = '[sim:azure-content-filter:completion]';
/** The simulated Entra ID token endpoint (any path ending so, e.g. /TENANT/oauth2/v2.0/token). */
const TOKEN_PATH = /\/oauth2\/v2\.0\/token$/;

const FILTER_SAFE = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' } };
const FILTER_HIT = { ...FILTER_SAFE, violence: { filtered: true, severity: 'high' } };

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const azureError = (res: ServerResponse, status: number, code: string, message: string, extra: Record<string, unknown> = {}) =>
  json(res, status, { error: { code, message, ...extra } });

export interface AzureRequest { path: string; credential: string; deployment?: string }

export class AzureSimulator {
  readonly #ttlMs: number;
  /** Issued tokens and when each expires. */
  readonly #tokens = new Map<string, number>();
  readonly #usedRefresh = new Set<string>();
  /** Tokens issued so far (a test counts refreshes). */
  issued = 0;

  constructor(ttlMs = 3_600_000) { this.#ttlMs = Math.max(1000, ttlMs); }

  /**
   * The token endpoint: client credentials or a refresh token; a client secret of BAD_CREDENTIAL is refused. Refresh
   * tokens rotate as Entra ID's do: each answer carries a new one, and one already used is refused (invalid_grant).
   */
  token(res: ServerResponse, method: string, body: string): void {
    if (method !== 'POST') return azureError(res, 405, 'invalid_request', 'POST only');
    const form = new URLSearchParams(body);
    const grant = form.get('grant_type');
    const refresh = grant === 'refresh_token' ? form.get('refresh_token') : null;
    if (refresh !== null && this.#usedRefresh.has(refresh)) return json(res, 400, { error: 'invalid_grant', error_description: 'AADSTS70000: The refresh token was already used.' });
    const ok = grant === 'client_credentials' ? Boolean(form.get('client_id')) && Boolean(form.get('client_secret')) && form.get('client_secret') !== BAD_CREDENTIAL
      : grant === 'refresh_token' ? Boolean(refresh) && refresh !== BAD_CREDENTIAL : false;
    if (!ok) return json(res, grant ? 401 : 400, { error: grant ? 'invalid_client' : 'unsupported_grant_type', error_description: 'AADSTS7000215: Invalid client secret provided.' });
    if (refresh) this.#usedRefresh.add(refresh);
    const token = `simtok_${randomBytes(16).toString('hex')}`;
    const now = Date.now();
    for (const [t, until] of this.#tokens) if (until < now) this.#tokens.delete(t);
    this.#tokens.set(token, now + this.#ttlMs);
    this.issued++;
    json(res, 200, {
      token_type: 'Bearer', expires_in: Math.floor(this.#ttlMs / 1000), ext_expires_in: Math.floor(this.#ttlMs / 1000), access_token: token,
      ...(refresh ? { refresh_token: `simrt_${randomBytes(16).toString('hex')}` } : {}),
    });
  }

  /**
   * An Azure request checked and mapped onto the OpenAI route it plays, or undefined once it was answered (a refusal).
   * Its token endpoint is answered here too.
   */
  accept(req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams, body: string): AzureRequest | undefined {
    if (TOKEN_PATH.test(path)) { this.token(res, method, body); return undefined; }
    let mapped: string;
    let deployment: string | undefined;
    const d = /^\/openai\/deployments\/([^/]+)(\/.*)$/.exec(path);
    if (path.startsWith('/openai/v1/')) mapped = path.slice('/openai'.length);
    else if (d || path.startsWith('/openai/')) {
      if (!query.get('api-version')) { azureError(res, 404, '404', 'Resource not found'); return undefined; }
      deployment = d ? decodeURIComponent(d[1]) : undefined;
      mapped = `/v1${d ? d[2] : path.slice('/openai'.length)}`;
    } else { azureError(res, 404, '404', 'Resource not found'); return undefined; }
    const credential = this.#credential(req, res);
    return credential === undefined ? undefined : { path: mapped, credential, deployment };
  }

  #credential(req: IncomingMessage, res: ServerResponse): string | undefined {
    const key = String(req.headers['api-key'] ?? '').trim();
    const bearer = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ''))?.[1]?.trim();
    if (key && key !== BAD_CREDENTIAL) return key;
    if (bearer) {
      const until = this.#tokens.get(bearer);
      if (until !== undefined && until > Date.now()) return bearer;
      azureError(res, 401, '401', 'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.');
      return undefined;
    }
    azureError(res, 401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.');
    return undefined;
  }

  /** Azure's content filter, when the request asks for it; true once answered. */
  filter(res: ServerResponse, path: string, text: string, json: any): boolean {
    if (text.includes(AZURE_FILTER_PROMPT)) {
      azureError(res, 400, 'content_filter', 'The response was filtered due to the prompt triggering Azure OpenAI\'s content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766', {
        param: 'prompt', status: 400,
        innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { ...FILTER_HIT, jailbreak: { filtered: false, detected: false } } },
      });
      return true;
    }
    if (path !== '/v1/chat/completions' || !text.includes(AZURE_FILTER_COMPLETION)) return false;
    const base = { id: `chatcmpl-sim${randomBytes(6).toString('hex')}`, created: Math.floor(Date.now() / 1000), model: String(json?.model ?? '') };
    const usage = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 };
    if (json?.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const frame = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      frame({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'The ' }, finish_reason: null, content_filter_results: FILTER_SAFE }] });
      frame({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter', content_filter_results: FILTER_HIT }] });
      if (json?.stream_options?.include_usage) frame({ ...base, object: 'chat.completion.chunk', choices: [], usage });
      res.end('data: [DONE]\n\n');
      return true;
    }
    json_(res, {
      ...base, object: 'chat.completion', usage,
      choices: [{ index: 0, message: { role: 'assistant', content: 'The ' }, finish_reason: 'content_filter', content_filter_results: FILTER_HIT }],
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTER_SAFE }],
    });
    return true;
  }
}

const json_ = (res: ServerResponse, body: unknown) => json(res, 200, body);
