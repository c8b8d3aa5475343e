// An HTTPS upstream (every vendor's API is one): the upstream client verifies the certificate, so an upstream whose
// certificate the gateway does not trust is never sent the request (nor the account's credential); one it trusts (here
// by node's default CA list plus the test's own, as NODE_EXTRA_CA_CERTS would add it) answers through it as over HTTP.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import t from 'tap';
import { chatConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import type { Tap } from '../store/fixtures.ts';

/** A self-signed certificate for 127.0.0.1 and localhost, made by openssl for this run. */
function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gw-tls-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const { key, cert } = selfSigned();
const seen: { authorization?: string }[] = [];
const server = createServer({ key, cert }, (req, res) => {
  seen.push({ authorization: req.headers.authorization });
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
    id: 'chatcmpl-tls', object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'over TLS' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  })));
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
t.teardown(() => server.close());
const { port } = server.address() as { port: number };

// Each test its own gateway: the first one's failed attempt cools its account down.
const gateway = (t: Tap) => withGateway(t, chatConfig({
  keyId: 'tls', key: 'sk-tls-0001', platform: `{ base_url: "https://localhost:${port}", format: openai-chat }`,
}));

t.test('an upstream whose certificate is not trusted is never sent the request', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url + '/v1/chat/completions', chatBody('gpt-4o-mini', 'hello'), bearer('sk-tls-0001'));
  t.ok(res.status >= 500, `an upstream failure answers (${res.status})`);
  t.equal(seen.length, 0, 'no request (and no credential) reached it');
});

t.test('a trusted one answers through the gateway', async (t) => {
  const defaults = getCACertificates('default');
  setDefaultCACertificates([...defaults, cert]);
  t.teardown(() => setDefaultCACertificates(defaults));
  const gw = await gateway(t);
  const res = await post(gw.url + '/v1/chat/completions', chatBody('gpt-4o-mini', 'hello'), bearer('sk-tls-0001'));
  t.equal(res.status, 200);
  t.equal((await res.json() as { choices: { message: { content: string } }[] }).choices[0].message.content, 'over TLS');
  t.strictSame(seen, [{ authorization: 'Bearer upstream-credential-1' }], 'one request, with the account\'s credential');
});
