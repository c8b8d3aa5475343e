// Kind `bedrock`: Claude on Amazon Bedrock's runtime API. An Anthropic Messages request goes to
// /model/{modelId}/invoke (or /invoke-with-response-stream) with the body Bedrock takes (no model, no stream, its
// anthropic_version), signed with SigV4 (an `aws` credential source) or sent with a Bedrock API key as a bearer; its
// event-stream answers and error bodies are made Anthropic's (bedrock-answers.ts) before anything reads them.
import type { IncomingHttpHeaders } from 'node:http';
import type { IssuedCredential, KindTarget, LeavingRequest, UpstreamKind } from '../../core/types.ts';
import { sigv4 } from '../shared/sigv4.ts';
import { BEDROCK_BETAS, betaList, betasOption, cloudBetas } from './anthropic-betas.ts';
import { BedrockCount, bedrockDecoder } from './bedrock-answers.ts';

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

const COUNT = /^\/v1\/messages\/count_tokens(\?|$)/;
const MESSAGES = /^\/v1\/messages(\?|$)/;

/**
 * The runtime path: a model id or inference-profile id (`us.anthropic.claude-…-v1:0`) is one path segment,
 * percent-encoded as the AWS SDKs send it (the colon as %3A; the signature's canonical URI encodes it once more).
 */
function bedrockPath(t: KindTarget): string {
  const model = encodeURIComponent(t.model ?? '');
  if (COUNT.test(t.path)) return `/model/${model}/count-tokens`;
  if (MESSAGES.test(t.path)) return `/model/${model}/${t.stream ? 'invoke-with-response-stream' : 'invoke'}`;
  // The credential check (Anthropic's GET /v1/models): a signed read of the runtime API that any valid key may make.
  if (t.path.startsWith('/v1/models')) return '/async-invoke?maxResults=1';
  return t.path;
}

function bedrockBody(json: Record<string, unknown>, t: KindTarget, headers: IncomingHttpHeaders): Record<string, unknown> {
  const { model: _model, stream: _stream, ...rest } = json;
  const body: Record<string, unknown> = { anthropic_version: t.options.anthropic_version ?? BEDROCK_ANTHROPIC_VERSION, ...rest };
  // Bedrock takes Anthropic's beta flags in the body, not as headers, and only those it knows; its version is the body's anthropic_version.
  const asked = body.anthropic_beta !== undefined ? betaList(body.anthropic_beta) : betaList(headers['anthropic-beta']);
  const betas = cloudBetas(asked, (t.options.anthropic_betas as string[] | undefined) ?? BEDROCK_BETAS);
  delete body.anthropic_beta;
  if (betas.length > 0) body.anthropic_beta = betas;
  delete headers['anthropic-beta'];
  delete headers['anthropic-version'];
  // count-tokens takes the invoke body as a string (max_tokens is required there, never counted).
  if (COUNT.test(t.path)) return { input: { invokeModel: { body: JSON.stringify({ max_tokens: 1, ...body }) } } };
  return body;
}

/** Headers signed besides host and the x-amz-* ones the signer adds: only what Bedrock reads. */
const SIGNED = ['content-type', 'accept'];

async function sign(req: LeavingRequest, credential: IssuedCredential, t: KindTarget & { url: URL }): Promise<void> {
  const secret = credential.parts?.secret_access_key;
  // A Bedrock API key went as a bearer already.
  if (!secret) return;
  const headers: Record<string, string> = {};
  for (const name of SIGNED) {
    const v = req.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  const body = Buffer.isBuffer(req.body) ? req.body : undefined;
  const added = await sigv4({ method: req.method, url: t.url, headers, body }, {
    accessKeyId: credential.secret, secretAccessKey: secret, sessionToken: credential.parts?.session_token,
  }, t.options.region, 'bedrock');
  Object.assign(req.headers, added);
}

export const bedrock: UpstreamKind = {
  name: 'bedrock',
  description: 'Amazon Bedrock runtime: Claude via /model/{modelId}/invoke and /invoke-with-response-stream (model ids or inference-profile ids), SigV4 (credential_source type aws) or a Bedrock API key.',
  schema: {
    type: 'object', additionalProperties: false, required: ['region'],
    properties: {
      region: { type: 'string', pattern: '^[a-z]{2}(-[a-z]+)+-\\d+$', description: 'bedrock: the AWS region (e.g. us-east-1): the default base_url https://bedrock-runtime.{region}.amazonaws.com and the SigV4 scope.' },
      anthropic_version: { type: 'string', minLength: 1, default: BEDROCK_ANTHROPIC_VERSION, description: `bedrock: the anthropic_version of request bodies (default ${BEDROCK_ANTHROPIC_VERSION}).` },
      anthropic_betas: betasOption('bedrock', BEDROCK_BETAS),
      simulator_aws_keys: {
        type: 'object', additionalProperties: { type: 'string', minLength: 1 },
        description: 'simulator: true with kind bedrock: the AWS access keys the simulator accepts (access key id: secret access key); SigV4 signatures are verified with them.',
      },
    },
  },
  formats: () => ['anthropic-messages'],
  auth: 'bearer',
  baseUrl: (o) => `https://bedrock-runtime.${o.region}.amazonaws.com`,
  path: bedrockPath,
  body: bedrockBody,
  sign,
  decode: ({ status, headers }: { status: number; headers: IncomingHttpHeaders }, t: KindTarget) =>
    status < 300 && /\/count-tokens$/.test(t.path) ? new BedrockCount() : bedrockDecoder(status, headers),
};
