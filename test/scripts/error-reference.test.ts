// The error table (docs/errors.md) is generated from the error catalogue; this fails when one changed without the other, and
// checks the catalogue's own promises: one area per code, throwers that build the catalogued status and message.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { ERRORS_FILE, errorReference, withErrorReference } from '../../scripts/error-reference.ts';
import { defineErrors, errorCatalogue, GatewayError } from '../../core/errors.ts';

t.test('docs/errors.md carries the current error table', async (t) => {
  t.equal(ERRORS_FILE, 'docs/errors.md');
  const page = readFileSync(new URL(`../../${ERRORS_FILE}`, import.meta.url), 'utf8');
  t.equal(page, withErrorReference(page), 'run: node scripts/error-reference.ts --write');
  for (const code of ['API_KEY_REQUIRED', 'INVALID_API_KEY', 'model_not_found', 'FORMAT_NOT_SUPPORTED', 'NO_ACCOUNT_AVAILABLE', 'STORE_UNAVAILABLE', 'API_KEY_RPM_EXCEEDED']) {
    t.match(errorReference(), new RegExp(`\\| \`${code}\` \\| \\d{3}`), `${code} is catalogued`);
  }
});

t.test('a thrower builds the catalogued status, message and headers; a throw site adds param, headers or another status', async (t) => {
  const errors = defineErrors('test-area', {
    test_fixed: { wire: 'TEST_FIXED', status: 418, doc: 'A test.', message: 'fixed', headers: { 'x-a': '1' } },
    test_made: { wire: 'TEST_MADE', status: 400, also: [409], doc: 'A test.', message: (p: { n: number }) => `made ${p.n}` },
  });
  const fixed = errors.test_fixed();
  t.ok(fixed instanceof GatewayError);
  t.strictSame([fixed.status, fixed.code, fixed.message, fixed.headers, fixed.param], [418, 'TEST_FIXED', 'fixed', { 'x-a': '1' }, null]);
  const made = errors.test_made({ n: 2 }, { param: 'p', status: 409, headers: { 'x-b': '2' } });
  t.strictSame([made.status, made.message, made.param, made.headers], [409, 'made 2', 'p', { 'x-b': '2' }]);
  t.equal(errorCatalogue().get('TEST_MADE')?.area, 'test-area');
  t.throws(() => defineErrors('other-area', { test_fixed: { wire: 'TEST_FIXED', status: 400, doc: 'x', message: 'y' } }), /defined by both test-area and other-area/);
});

t.test('codes are snake_case: an older code clients know is kept as the wire alias of a snake_case name', async (t) => {
  t.throws(() => defineErrors('case-area', { CASE_UPPER: { status: 400, doc: 'x', message: 'y' } }), /CASE_UPPER of case-area is not snake_case/);
  t.throws(() => defineErrors('case-area', { caseCamel: { status: 400, doc: 'x', message: 'y' } }), /not snake_case/);
  const errors = defineErrors('case-area', {
    case_aliased: { wire: 'CASE_ALIASED', status: 409, doc: 'x', message: 'y' },
    case_made: { status: 405, doc: 'x', message: 'z', headers: (p: { allowed: string[] }) => ({ allow: p.allowed.join(', ') }) },
  });
  t.equal(errors.case_aliased().code, 'CASE_ALIASED', 'clients see the code they always saw');
  t.equal(errorCatalogue().get('CASE_ALIASED')?.area, 'case-area', 'catalogued (and in docs/errors.md) as clients see it');
  t.notOk(errorCatalogue().has('case_aliased'));
  t.strictSame(errors.case_made({ allowed: ['GET', 'POST'] }, { headers: { 'x-b': '2' } }).headers, { allow: 'GET, POST', 'x-b': '2' }, 'headers made from the parameters');
});

t.test('the shipped catalogue: every code is snake_case, or an alias kept for the clients that know it', async (t) => {
  const upper = [...errorCatalogue()].filter(([code]) => !/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(code));
  for (const [code, { entry }] of upper) t.equal(entry.wire, code, `${code} is a wire alias`);
  t.ok(upper.length > 0 && upper.length < errorCatalogue().size);
});
