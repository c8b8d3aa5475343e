// The config reference (docs/configuration.md) is generated from the schemas; this fails when one changed without the other.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { configReference, REFERENCE_FILE, withReference } from '../../scripts/config-reference.ts';

t.test('docs/configuration.md carries the current config reference', async (t) => {
  t.equal(REFERENCE_FILE, 'docs/configuration.md');
  const page = readFileSync(new URL(`../../${REFERENCE_FILE}`, import.meta.url), 'utf8');
  t.equal(page, withReference(page), 'run: node scripts/config-reference.ts --write');
  t.match(configReference(), /\| `routes\[\]\.path` \| string \| yes \|/);
  t.match(configReference(), /### `proxy`[\s\S]*\| `header_timeout_ms` \| integer \|  \| `300000` \|/);
});
