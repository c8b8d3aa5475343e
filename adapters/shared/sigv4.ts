// AWS Signature Version 4 with smithy's signer (@smithy/signature-v4, what the AWS SDKs use) over node:crypto's hashes:
// one signer per credential and region is kept, as it caches its signing keys per day. Shared by the Bedrock kind and the
// simulator that verifies its signatures.
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';

/** smithy's Checksum over node:crypto: a HMAC when given a secret, else a plain SHA-256 (native, not the JS fallback). */
class NodeSha256 {
  readonly #secret: Uint8Array | undefined;
  #hash: Hash | Hmac;
  constructor(secret?: string | Uint8Array | ArrayBuffer | ArrayBufferView) {
    this.#secret = secret === undefined ? undefined : typeof secret === 'string' ? Buffer.from(secret) : secret instanceof ArrayBuffer ? new Uint8Array(secret) : new Uint8Array(secret.buffer, secret.byteOffset, secret.byteLength);
    this.#hash = this.#fresh();
  }
  #fresh(): Hash | Hmac { return this.#secret ? createHmac('sha256', this.#secret) : createHash('sha256'); }
  update(data: string | Uint8Array | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(typeof data === 'string' ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  }
  async digest(): Promise<Uint8Array> { return new Uint8Array(this.#hash.digest()); }
  reset(): void { this.#hash = this.#fresh(); }
}

export interface AwsKeys { accessKeyId: string; secretAccessKey: string; sessionToken?: string }

/** What is signed: the method, the URL (path already percent-encoded once, as sent), the signed headers, the body. */
export interface SignInput { method: string; url: URL; headers: Record<string, string>; body?: Uint8Array; date?: Date }

const signers = new Map<string, SignatureV4>();

function signerFor(keys: AwsKeys, region: string, service: string): SignatureV4 {
  const id = `${keys.accessKeyId}\0${keys.secretAccessKey}\0${keys.sessionToken ?? ''}\0${region}\0${service}`;
  let signer = signers.get(id);
  if (!signer) {
    if (signers.size >= 1000) signers.clear();
    // uriEscapePath: the canonical URI encodes the sent path again (a model id's %3A is %253A in it), as every service but S3.
    signer = new SignatureV4({ service, region, credentials: { ...keys }, sha256: NodeSha256, uriEscapePath: true, applyChecksum: true });
    signers.set(id, signer);
  }
  return signer;
}

/** The headers a SigV4 signature adds (authorization, x-amz-date, x-amz-content-sha256, x-amz-security-token). */
export async function sigv4(input: SignInput, keys: AwsKeys, region: string, service: string): Promise<Record<string, string>> {
  const { url } = input;
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const had = query[k];
    query[k] = had === undefined ? v : [...[had].flat(), v];
  }
  const signed = await signerFor(keys, region, service).sign({
    method: input.method, protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined,
    path: url.pathname, query, headers: { ...input.headers, host: url.host }, body: input.body,
  }, input.date ? { signingDate: input.date } : undefined);
  const out: Record<string, string> = {};
  for (const name of ['authorization', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token']) {
    const value = signed.headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The parts of a SigV4 Authorization header, or undefined when it is not one. */
export function parseAuthorization(value: string): { accessKeyId: string; date: string; region: string; service: string; signedHeaders: string[]; signature: string } | undefined {
  const m = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/.exec(value.trim());
  return m ? { accessKeyId: m[1], date: m[2], region: m[3], service: m[4], signedHeaders: m[5].split(';'), signature: m[6] } : undefined;
}

export const sha256Hex = (body: Uint8Array): string => createHash('sha256').update(body).digest('hex');
