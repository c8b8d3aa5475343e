// The keys CLI (scripts/keys.ts) and a key's spend windows: created with them, listed with what each has used; and a
// command line it cannot parse said in one line.
import t from 'tap';
import { withGateway } from '../helpers/gateway.ts';
import { adminConfig, chat, eventually, keysCli } from './helpers.ts';

const gw = await withGateway(t, adminConfig());
const keys = keysCli(gw);

t.test('the spend windows: create takes --usd-5h/--usd-1d/--usd-7d; list shows spent, each window used, last use', async (t) => {
  const made = await keys(['create', '--group', 'main', '--name', 'windowed', '--usd-5h', '0.5', '--usd-1d', '2', '--usd-7d', '10', '--quota-usd', '20', '--json']);
  t.equal(made.code, 0, made.stderr);
  const { key, record } = JSON.parse(made.stdout);
  t.strictSame(record.limits, { quota_usd: 20, usd_5h: 0.5, usd_1d: 2, usd_7d: 10 });
  const fresh = await keys(['list']);
  t.match(fresh.stdout, /ID\s+NAME\s+SOURCE\s+GROUP\s+STATUS\s+LIMITS\s+EXPIRES\s+CREATED\s+SPENT\s+WINDOWS\s+LAST_USED/);
  const row = (text: string) => text.split('\n').find((l) => l.startsWith(record.id)) ?? '';
  t.match(row(fresh.stdout), /\$0\.00 of \$20\.00\s+5h \$0\.00 of \$0\.50, 1d \$0\.00 of \$2\.00, 7d \$0\.00 of \$10\.00\s*$/, 'nothing spent, nothing used yet');
  t.equal(await chat(gw, key), 200);
  const used = await eventually(() => keys(['list']), (r) => !row(r.stdout).includes('$0.00 of $20.00'));
  const line = row(used.stdout);
  const spent = /(\$[\d.]+) of \$20\.00/.exec(line)?.[1] ?? '';
  t.ok(Number(spent.slice(1)) > 0, `the request's cost is spent: ${line}`);
  for (const [w, limit] of [['5h', '$0.50'], ['1d', '$2.00'], ['7d', '$10.00']]) t.ok(line.includes(`${w} ${spent} of ${limit}`), `and counts in the ${w} window`);
  t.match(line, /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'last used');
  const negative = await keys(['create', '--group', 'main', '--usd-1d=-1']);
  t.equal(negative.code, 1);
  t.match(negative.stderr, /--usd-1d must be a non-negative number/);
  const dashed = await keys(['create', '--group', 'main', '--usd-1d', '-1']);
  t.equal(dashed.code, 1);
  t.match(dashed.stderr, /^error: Option '--usd-1d' argument is ambiguous\. \(try --help\)\n$/, 'one line, no stack');
  const unknown = await keys(['list', '--frobnicate']);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /^error: Unknown option '--frobnicate'.* \(try --help\)\n$/);
});
