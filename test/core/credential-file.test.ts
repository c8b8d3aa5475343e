// credential_file on an account (Kubernetes and Docker secrets): read at load, trimmed, relative to the config's folder;
// a file that is missing, unreadable, empty or too large refuses the config with a problem naming the account and the
// path, never what the file holds; a gateway process re-reads it on SIGHUP, and a bad one keeps the running credential.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { parts } from '../../app/registry.ts';
import { loadConfig } from '../../core/config.ts';
import { startSimulator } from '../../simulator/server.ts';
import { eventually } from '../admin/helpers.ts';
import { pos, refused } from '../helpers/config-text.ts';
import { writeConfig } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { gatewayProcess } from '../helpers/process.ts';

const SECRET = 'sk-upstream-from-file-0001';
const yaml = (account: string, base = 'http://127.0.0.1:1') => `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
platforms:
  up: { base_url: "${base}", format: [openai-chat] }
groups:
  g:
    platform: up
    models: [gpt-4o-mini]
    accounts:
      - ${account}
keys:
  - { id: k, key: sk-file-test-key, group: g }
`;

/** A config file with `account`, and beside it a file `secret` holding `content` (none when undefined). */
function configWith(account: string, content?: string | Buffer): string {
  const file = writeConfig(yaml(account));
  if (content !== undefined) writeFileSync(join(dirname(file), 'secret'), content);
  return file;
}
const load = (file: string) => loadConfig(file, parts);

t.test('the credential is the file\'s content, trimmed; a relative path starts from the config file\'s folder', async (t) => {
  const file = configWith('{ id: a, credential_file: ./secret }', `  ${SECRET}\n\n`);
  const { config, warnings } = load(file);
  t.equal(config.groups.g.accounts[0].credential, SECRET);
  t.equal(config.groups.g.accounts[0].enabled, true);
  t.strictSame(warnings, []);
  const absolute = configWith(`{ id: a, credential_file: "${join(dirname(file), 'secret')}" }`);
  t.equal(load(absolute).config.groups.g.accounts[0].credential, SECRET, 'an absolute path as given');
});

t.test('missing, unreadable, empty or oversized: refused at the line, naming the account and the path, never the content', async (t) => {
  const cases: [string, string | Buffer | undefined, string][] = [
    ['missing', undefined, 'cannot be read (ENOENT)'],
    ['empty', ' \n\t\n', 'is empty'],
    ['oversized', Buffer.alloc(65 * 1024, 'x'), 'is larger than 64 KB: not a credential file'],
  ];
  for (const [what, content, why] of cases) {
    const file = configWith('{ id: a, credential_file: ./secret }', content);
    const text = yaml('{ id: a, credential_file: ./secret }');
    t.strictSame(refused(() => load(file)), [
      `gateway.yaml:${pos(text, './secret')} groups.g.accounts.0.credential_file: account "a" of group "g": ${join(dirname(file), 'secret')} ${why}`,
    ], what);
  }
  const folder = configWith('{ id: a, credential_file: ./secret }');
  mkdirSync(join(dirname(folder), 'secret'));
  t.match(refused(() => load(folder))[0], /account "a" of group "g": \S+\/secret cannot be read \(EISDIR\)$/, 'a folder is unreadable');
});

t.test('credential and credential_file together are refused, the inline value not repeated', async (t) => {
  const account = `{ id: a, credential: ${SECRET}, credential_file: ./secret }`;
  const file = configWith(account, 'other');
  const problems = refused(() => load(file));
  t.strictSame(problems, [`gateway.yaml:${pos(yaml(account), '{ id: a')} groups.g.accounts.0: account "a" of group "g": give credential or credential_file, not both`]);
  t.notMatch(problems.join('\n'), SECRET);
});

t.test('a gateway process re-reads the file on SIGHUP: the new credential reaches the upstream', async (t) => {
  const sim = await startSimulator({ host: '127.0.0.1', port: 0 });
  t.teardown(() => sim.close());
  const file = writeConfig(yaml('{ id: a, credential_file: ./secret }', sim.url));
  const secret = join(dirname(file), 'secret');
  writeFileSync(secret, `${SECRET}\n`);
  const gw = await gatewayProcess(t, file);
  const sent = async () => {
    const res = await post(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o-mini', 'Hello'), bearer('sk-file-test-key'));
    await res.text();
    t.equal(res.status, 200);
    return sim.requests.at(-1)?.headers.authorization;
  };
  t.equal(await sent(), `Bearer ${SECRET}`, 'the file\'s credential goes upstream');

  const RENEWED = 'sk-upstream-renewed-0002';
  writeFileSync(secret, `${RENEWED}\n`);
  t.equal(await sent(), `Bearer ${SECRET}`, 'a changed file is not read until the reload');
  gw.child.kill('SIGHUP');
  t.equal(await eventually(sent, (auth) => auth === `Bearer ${RENEWED}`, 10_000), `Bearer ${RENEWED}`, 'after SIGHUP the renewed credential goes upstream');

  writeFileSync(secret, '\n');
  gw.child.kill('SIGHUP');
  await eventually(async () => gw.stdout(), (out) => out.includes('reload failed'), 10_000);
  t.equal(await sent(), `Bearer ${RENEWED}`, 'an emptied file fails the reload: the running credential stays');
  const failed = gw.stdout().split('\n').find((l) => l.includes('reload failed')) ?? '';
  t.match(failed, `${secret} is empty`, 'the log names the file');
  t.notMatch(gw.stdout(), SECRET, 'no credential in the log');
  t.notMatch(gw.stdout(), RENEWED, 'no credential in the log');
});
