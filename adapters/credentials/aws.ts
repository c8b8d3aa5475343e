// Credential source `aws`: an AWS access key (and, for temporary credentials, a session token) for kinds that sign with
// SigV4 (bedrock). Nothing is fetched: the key id is the credential's public part, the secret and token are parts only
// the signer reads; none of them is ever sent as it is.
import type { CredentialProvider } from '../../core/types.ts';

export const aws: CredentialProvider = {
  name: 'aws',
  description: 'AWS access key id, secret access key and optional session token, for SigV4 signing (kind bedrock).',
  schema: {
    type: 'object', additionalProperties: false, required: ['access_key_id', 'secret_access_key'],
    properties: {
      access_key_id: { type: 'string', pattern: '^[A-Z0-9]{16,128}$', description: 'Access key id (AKIA… or, with a session token, ASIA…).' },
      secret_access_key: { type: 'string', minLength: 1, description: 'Secret access key (prefer ${VAR}).' },
      session_token: { type: 'string', minLength: 1, description: 'Session token of temporary credentials (prefer ${VAR}).' },
    },
  },
  obtain: async (o) => ({
    secret: o.access_key_id, style: 'none',
    parts: { secret_access_key: o.secret_access_key, ...(o.session_token ? { session_token: o.session_token } : {}) },
  }),
};
