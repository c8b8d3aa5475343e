// The README's error table is generated from the error catalogue; this fails when one changed without the other, and
// checks the catalogue's own promises: one area per code, throwers that build the catalogued status and message.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { errorReference, withErrorReference } from '../../scripts/error-reference.ts';
import { defineErrors, errorCatalogue, GatewayError } from '../../core/errors.ts';

t.test('README carries the current error table', async (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  t.equal(readme, withErrorReference(readme), 'run: node scripts/error-reference.ts --write');
  for (const code of ['API_KEY_REQUIRED', 'INVALID_API_KEY', 'model_not_found', 'FORMAT_NOT_SUPPORTED', 'NO_ACCOUNT_AVAILABLE', 'STORE_UNAVAILABLE', 'API_KEY_RPM_EXCEEDED']) {
    t.match(errorReference(), new RegExp(`\\| \`${code}\` \\| \\d{3}`), `${code} is catalogued`);
  }
});

t.test('a thrower builds the catalogued status, message and headers; a throw site adds param, headers or another status', async (t) => {
  const errors = defineErrors('test-area', {
    TEST_FIXED: { status: 418, doc: 'A test.', message: 'fixed', headers: { 'x-a': '1' } },
    TEST_MADE: { status: 400, also: [409], doc: 'A test.', message: (p: { n: number }) => `made ${p.n}` },
  });
  const fixed = errors.TEST_FIXED();
  t.ok(fixed instanceof GatewayError);
  t.strictSame([fixed.status, fixed.code, fixed.message, fixed.headers, fixed.param], [418, 'TEST_FIXED', 'fixed', { 'x-a': '1' }, null]);
  const made = errors.TEST_MADE({ n: 2 }, { param: 'p', status: 409, headers: { 'x-b': '2' } });
  t.strictSame([made.status, made.message, made.param, made.headers], [409, 'made 2', 'p', { 'x-b': '2' }]);
  t.equal(errorCatalogue().get('TEST_MADE')?.area, 'test-area');
  t.throws(() => defineErrors('other-area', { TEST_FIXED: { status: 400, doc: 'x', message: 'y' } }), /defined by both test-area and other-area/);
});
