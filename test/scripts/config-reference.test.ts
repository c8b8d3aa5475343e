// The README's config reference is generated from the schemas; this fails when one changed without the other.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { configReference, withReference } from '../../scripts/config-reference.ts';

t.test('README carries the current config reference', async (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  t.equal(readme, withReference(readme), 'run: node scripts/config-reference.ts --write');
  t.match(configReference(), /\| `routes\[\]\.path` \| string \| yes \|/);
  t.match(configReference(), /#### `proxy`[\s\S]*\| `header_timeout_ms` \| integer \|  \| `300000` \|/);
});
