// The admin API's errors (the catalogue's `admin` area): its token, its lookups, and the query and body it refuses.
import { defineErrors } from '../../core/errors.ts';

export const adminErrors = defineErrors('admin', {
  admin_api_disabled: { wire: 'ADMIN_API_DISABLED', status: 503, doc: '`admin.token` is empty: the admin API is off.', message: 'The admin API is disabled: set admin.token in gateway.yaml (e.g. GATEWAY_ADMIN_TOKEN)' },
  admin_token_required: { wire: 'ADMIN_TOKEN_REQUIRED', status: 401, doc: 'No `Authorization: Bearer <admin token>`.', message: 'The admin API needs the admin token in Authorization: Bearer <token>' },
  model_key_refused: { wire: 'MODEL_KEY_REFUSED', status: 401, doc: 'A model API key was sent to the admin API.', message: 'Model API keys are refused by the admin API; use the admin token' },
  invalid_admin_token: { wire: 'INVALID_ADMIN_TOKEN', status: 401, doc: 'The admin token does not match.', message: 'Invalid admin token' },
  too_many_invalid_tokens: {
    status: 429, doc: 'Too many invalid admin tokens from the client\'s address (`auth_throttle.admin`): they are refused for a while (`retry-after`); the valid token is not.',
    message: (seconds: number) => `Too many invalid admin tokens from this address: invalid tokens are refused for ${seconds} s`, headers: (seconds: number) => ({ 'retry-after': String(seconds) }),
  },
  key_not_found: { status: 404, doc: 'No key with that id.', message: (id: string) => `No key with id "${id}"` },
  config_key_immutable: { status: 409, doc: 'The key is declared in gateway.yaml: change it there.', message: (id: string) => `Key "${id}" is declared in gateway.yaml and cannot be changed through the API; edit gateway.yaml and reload` },
  unknown_group: { status: 400, doc: 'A key names a group the gateway does not have.', message: (p: { group: string; known: string }) => `Unknown group "${p.group}" (known: ${p.known})` },
  invalid_pool: { status: 400, doc: 'A key\'s pools name a group that is not dedicated.', message: (pool: string) => `"${pool}" is not a dedicated group` },
  dedicated_group: { status: 400, doc: 'A key\'s group is dedicated (it belongs in pools).', message: (group: string) => `Group "${group}" is dedicated: it serves only routes that name it as pool; list it in pools too` },
  account_not_found: { status: 404, doc: 'No account with that id (in that group).', message: (p: { id: string; group?: string }) => `No account "${p.id}"${p.group ? ` in group "${p.group}"` : ''}` },
  ambiguous_account: { status: 409, doc: 'The account id is in several groups: name the group.', message: (p: { id: string; groups: string }) => `Account "${p.id}" is in groups ${p.groups}: name the group` },
  no_test_request: { status: 400, doc: 'The account\'s platform serves no format with a test request.', message: (p: { platform: string; formats: string }) => `Platform "${p.platform}" serves no format with a test request (${p.formats})` },
  account_without_credential: { status: 409, doc: 'The account has no credential to test.', message: (id: string) => `Account "${id}" has no credential to test` },
  invalid_time: { status: 400, doc: 'A time that is not ISO 8601 or epoch ms, or `from` after `to`.', message: (text: string) => text },
  invalid_window: { status: 400, doc: 'An unknown summary window.', message: (known: string) => `window must be one of ${known}` },
  invalid_by: { status: 400, doc: 'An unknown summary split.', message: (known: string) => `by must be one of ${known}` },
  invalid_top: { status: 400, doc: 'A summary `top` out of range.', message: (max: number) => `top must be an integer from 1 to ${max}` },
  invalid_status: { status: 400, doc: 'A record filter status that is not an HTTP status or class.', message: 'status must be an HTTP status (e.g. 429) or a class (2xx, 4xx, 5xx)' },
  invalid_query: { status: 400, doc: 'An unknown query parameter.', message: (p: { name: string; known: string }) => `Unknown query parameter "${p.name}" (known: ${p.known})` },
  invalid_limit: { status: 400, doc: 'A page `limit` out of range.', message: (max: number) => `limit must be an integer from 1 to ${max}` },
  invalid_cursor: { status: 400, doc: 'A page `cursor` that is not one a previous page answered.', message: 'cursor must be the cursor a previous page answered (as given)' },
  invalid_ending: { status: 400, doc: 'An unknown record ending.', message: (known: string) => `ending must be one of ${known}` },
});
